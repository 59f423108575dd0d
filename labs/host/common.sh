# common.sh - shared settings for the host-side scripts (sourced, not run).
#
# Every path is relative to the repository root, which is where make runs
# the scripts from.

BUILD=${BUILD:-build}
TREE=$BUILD/linux			# git repository: pristine base + series
SRC_TARBALL=${SRC_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SERIES=patches/series
LOGS=$BUILD/logs

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}

# Seconds since the epoch, for the "took N s" lines.
now() {
	date +%s
}

# Number of patches in the series, which is also the newest chapter.
nr_patches() {
	if [ -f "$SERIES" ]; then
		grep -cvE '^[[:space:]]*(#|$)' "$SERIES" || true
	else
		echo 0
	fi
}

# The patch file names in order, one per line.
series_patches() {
	[ -f "$SERIES" ] && grep -vE '^[[:space:]]*(#|$)' "$SERIES"
	return 0
}

# chapter_nn N: validate a chapter number and print it as two digits.
chapter_nn() {
	last=$(nr_patches)
	case $1 in
	'')
		echo "CH is not set: say which chapter, CH=0-$last (0 = unpatched 6.1)" >&2
		return 1 ;;
	*[!0-9]*)
		echo "CH is not a chapter number: valid chapters are 0-$last (0 = unpatched 6.1)" >&2
		return 1 ;;
	esac
	n=$(expr "$1" + 0)
	if [ "$n" -gt "$last" ] || [ ${#1} -gt 2 ]; then
		echo "CH=$1 is not a chapter: valid chapters are 0-$last (0 = unpatched 6.1)" >&2
		return 1
	fi
	printf '%02d\n' "$n"
}

# lock_tree WHO: one job at a time in the kernel tree, whose checkout all
# builds share.  Child scripts inherit the lock (CM_TREE_LOCKED).
lock_tree() {
	[ -n "${CM_TREE_LOCKED-}" ] && return 0
	mkdir -p "$BUILD"
	exec 9>"$BUILD/.kernel.lock"
	if ! flock -n 9; then
		echo "$1: waiting for another kernel job to finish:" \
			"$(cat "$BUILD/.kernel.lock.who" 2>/dev/null || echo unknown)"
		flock 9
	fi
	echo "$1 (pid $$, since $(date +%H:%M:%S))" >"$BUILD/.kernel.lock.who"
	CM_TREE_LOCKED=1
	export CM_TREE_LOCKED
}

# Run a long command with its output in a log, printing a progress line
# every 30 seconds: run_logged STEP LOG cmd args...
run_logged() {
	step=$1 log=$2
	shift 2
	mkdir -p "$(dirname "$log")"
	start=$(now)
	echo "$step: started (log: $log)"
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		i=0
		while [ $i -lt 30 ] && kill -0 "$pid" 2>/dev/null; do
			sleep 1
			i=$((i + 1))
		done
		if kill -0 "$pid" 2>/dev/null; then
			last=$(tail -n 1 "$log" | cut -c1-60)
			echo "$step: $(($(now) - start)) s ... $last"
		fi
	done
	if wait "$pid"; then
		echo "$step: done in $(($(now) - start)) s"
		return 0
	fi
	echo "$step: FAILED after $(($(now) - start)) s; last lines of $log:" >&2
	tail -n 25 "$log" | sed 's/^/    /' >&2
	return 1
}

# chapter_frags NN: the config fragments of the chapter-NN kernel: the
# base, then every chapter's own up to NN.
chapter_frags() {
	printf '%s' labs/config/base.config
	i=1
	while [ "$i" -le "$(expr "$1" + 0)" ]; do
		f=labs/config/ch$(printf '%02d' $i).config
		[ -f "$f" ] && printf ' %s' "$f"
		i=$((i + 1))
	done
	echo
}

# configure_kernel WHAT OBJ LOG FRAGMENT...: configure the checked-out
# tree into OBJ as tinyconfig plus the fragments, in order, then check
# that every option they ask for really landed: merge_config.sh drops
# options whose dependencies are unmet without failing.
#
# Configuring takes about 13 s, and make check configures some twenty
# kernels, most of them exactly as the one before.  The result depends
# only on the fragments, the tree's Kconfig files and the compiler, so
# it is kept under that key in build/obj/configs/ and reused: an
# unchanged .config is left alone, a known one copied back.
configure_kernel() {
	what=$1 cfg_obj=$2 cfg_log=$3
	shift 3
	mkdir -p "$cfg_obj" "$(dirname "$cfg_log")" "$BUILD/obj/configs"
	cfg_abs=$(cd "$cfg_obj" && pwd)
	cfg_frags=
	for f in "$@"; do
		cfg_frags="$cfg_frags $PWD/$f"
	done
	# The key: the fragments, every Kconfig, configs/ file and Makefile
	# of the checked-out commit, gcc and ld.  A tree with edits (or with
	# no clean checkout to read) is not cached.
	cfg_key=
	if [ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		cfg_key=$( (cat "$@"; gcc --version | head -n 1
			ld --version | head -n 1
			git -C "$TREE" ls-tree -r HEAD | grep -E \
				'([[:space:]]|/)(Kconfig[^/]*|configs/[^/]*|Makefile)$') |
			sha256sum | cut -d' ' -f1)
	fi
	cfg_cache=$BUILD/obj/configs/$cfg_key
	if [ -n "$cfg_key" ] && [ -f "$cfg_cache" ]; then
		cmp -s "$cfg_cache" "$cfg_obj/.config" ||
			cp "$cfg_cache" "$cfg_obj/.config"
		echo "configure: $cfg_cache (made before for the same inputs)" >"$cfg_log"
		return 0
	fi
	(
		cd "$TREE"
		make -s O="$cfg_abs" tinyconfig
		# shellcheck disable=SC2086
		scripts/kconfig/merge_config.sh -m -O "$cfg_abs" \
			"$cfg_abs/.config" $cfg_frags
		make -s O="$cfg_abs" olddefconfig
	) >"$cfg_log" 2>&1 || {
		tail -n 20 "$cfg_log" >&2
		die "configuring $what failed (log: $cfg_log)"
	}

	# Each option as the last fragment to name it asks for it ("# ... is
	# not set" as =n): a later fragment overrides an earlier one, as in
	# merge_config.sh (memcg.config turns on what base.config turns off).
	bad=
	for line in $(cat "$@" | sed -nE \
		-e 's/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1=n/p' \
		-e 's/^(CONFIG_[A-Za-z0-9_]+=.*)$/\1/p' |
		awk -F= '!($1 in v) { k[n++] = $1 } { v[$1] = $0 }
			END { for (i = 0; i < n; i++) print v[k[i]] }'); do
		key=${line%%=*}
		want=${line#*=}
		got=$(sed -nE -e "s/^$key=(.*)$/\1/p" \
			-e "s/^# $key is not set$/n/p" "$cfg_obj/.config")
		[ -z "$got" ] && got=n
		[ "$got" = "$want" ] || bad="$bad $key=$want(got $got)"
	done
	[ -z "$bad" ] || die "$what: options missing from .config:$bad"
	[ -z "$cfg_key" ] || cp "$cfg_obj/.config" "$cfg_cache"
}

# checkout_chapter NN: move the shared tree to tag chNN, refusing to if
# someone edited it by hand (edits belong in build/tree).
checkout_chapter() {
	if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
		die "$TREE has uncommitted changes; edit in build/tree (make tree), not in $TREE"
	fi
	git -C "$TREE" checkout -q --detach "ch$1"
}

# The compiler for kernel builds: through ccache when it is installed.
# In ccache's depend mode: on a miss it compiles once, taking the
# dependencies from Kbuild's -Wp,-MMD, instead of running the
# preprocessor first and then the compiler (30-40 % more CPU on a miss,
# and every compile of a clean make check is one).
#
# ccache takes any value of CCACHE_DEPEND as "on" and refuses 0, false
# and no outright, which kills the build ("unknown C compiler"): read
# those as "off", as a reader means them.
case ${CCACHE_DEPEND-1} in
0 | false | no | off | '')
	unset CCACHE_DEPEND
	CCACHE_NODEPEND=1
	export CCACHE_NODEPEND ;;
*)
	CCACHE_DEPEND=1
	export CCACHE_DEPEND ;;
esac
kernel_cc() {
	if command -v ccache >/dev/null; then
		echo "ccache gcc"
	else
		echo gcc
	fi
}

# make_bzimage TREE OBJ: build TREE's bzImage into the object directory
# OBJ (an absolute path), and prove that it carries the vmlinux this
# build linked (bzimage.py).  ccache cannot see the compressed kernel
# that piggy.S pulls in with .incbin: when a new kernel compresses to
# the same length as one built before, piggy.S's text is unchanged and
# ccache returns the old piggy.o, so the bzImage would boot the old
# kernel.  When the check finds that, piggy.o is assembled again without
# ccache and the check runs once more; a second failure fails the build.
make_bzimage() {
	make -C "$1" O="$2" CC="$(kernel_cc)" -j"$(nproc)" bzImage || return 1
	python3 labs/host/bzimage.py "$2" && return 0
	echo "make_bzimage: assembling piggy.o again, without ccache"
	rm -f "$2/arch/x86/boot/compressed/piggy.o"
	CCACHE_DISABLE=1 make -C "$1" O="$2" CC="$(kernel_cc)" bzImage ||
		return 1
	python3 labs/host/bzimage.py "$2"
}

# The boot line every lab and shell guest starts with:
#   no_timer_check   on a busy host TCG can lose the IO-APIC timer check's
#                    race and panic ("IO-APIC + timer doesn't work!")
#   panic=-1         a panic reboots, and -no-reboot turns that into exit
#   hung_task_timeout_secs=30
#                    a task blocked that long is reported, with its stack
#                    (the soft-lockup detector reports a CPU stuck for 20 s,
#                    RCU a CPU stuck with interrupts off for 21 s)
guest_cmdline() {
	echo "console=ttyS0 panic=-1 no_timer_check sysctl.kernel.hung_task_timeout_secs=30"
}

# QEMU's accelerator: TCG, unless KVM=1 asks for KVM.
qemu_accel() {
	if [ "${KVM:-0}" = 1 ]; then
		echo "-enable-kvm -cpu host"
	else
		echo "-accel tcg"
	fi
}

# The reader's own kernel tree (make tree / make exercise), and where its
# kernel is built to (make try / make grade).  make check grades its
# skeletons in a tree of its own (CM_WT=build/check-tree), so that it
# never touches the reader's.
WT=${CM_WT:-$BUILD/tree}
WT_KERNEL=$WT-kernel

# wt_chapter: the chapter the reader's tree was made at (two digits).
wt_chapter() {
	cat "$WT_KERNEL/chapter" 2>/dev/null ||
		die "no $WT: make tree CH=N or make exercise CH=N first"
}

# guest_kernel NN|tree [FLAVOR]: set $kernel (the bzImage to boot),
# $kname (its name in logs: chNN, chNN-debug, chNN-memcg, or the tree's)
# and $cmkernel (the guest's cmkernel=: labs whose expectations change
# with a later patch read the chapter from it; a tree's kernel is at the
# chapter the tree was made at).
guest_kernel() {
	case ${2:-default} in
	default | debug | memcg | none) ;;
	*) die "FLAVOR=$2: valid flavours are default, debug, memcg and none" ;;
	esac
	if [ "$1" = tree ] && [ "${2:-default}" != default ]; then
		kname=$(basename "$WT")-$2 kernel=$WT_KERNEL/$2/bzImage
		cmkernel=ch$(wt_chapter)-$kname
	elif [ "$1" = tree ]; then
		kname=$(basename "$WT") kernel=$WT_KERNEL/bzImage
		cmkernel=ch$(wt_chapter)-$kname
	else
		kname=ch$1
		[ "${2:-default}" != default ] && kname=$kname-$2
		kernel=$BUILD/$kname/bzImage cmkernel=$kname
	fi
}
