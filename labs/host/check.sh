#!/bin/sh
# check.sh all|check - run the kit's tests and print "N passed, N failed".
#
#   all    the book, every chapter's kernel and its own lab
#   check  what CI runs: the lab programs' unit tests, the book and its
#          filter tests, patch hygiene, chapter N's lab on the chapter-N
#          kernel for every N, lab N on the chapter N-1 kernel (it must
#          fail there), the changed files compiled with every hook on (and
#          sparse), every lab again on the newest kernel in its debug
#          flavour (the regression run, with KASAN and lockdep), a
#          60-second stress run on it (make stress), and for
#          every chapter with an exercise: its untouched skeleton builds,
#          boots and scores at most 40 % with a transcript, and the
#          reference scores full; last, make grade on the newest
#          chapter's finished tree scores full, every earlier lab passing
#
# Every step prints "ok ..."/"not ok ..." lines (a lab's own test points
# indented under its verdict); the totals count them all.
set -u
. labs/host/common.sh

mode=${1:-check}
last=$(nr_patches)
lastnn=$(printf '%02d' "$last")
mkdir -p "$LOGS"
out=$LOGS/check.out
: >"$out"
t0=$(now)

# step NAME CMD...: run a step, show its output, count its results.  A
# step that fails without saying "not ok" counts as one failure.
step() {
	name=$1
	shift
	s=$(now)
	echo "== $name"
	# Show the step's output as it comes (kernel builds print progress).
	{ "$@" 2>&1; echo $? >"$LOGS/step.rc"; } | tee "$LOGS/step.out"
	rc=$(cat "$LOGS/step.rc")
	if [ $rc -ne 0 ] && ! grep -qE '^ *not ok' "$LOGS/step.out"; then
		echo "not ok - $name (exit status $rc)"
		echo "not ok - $name" >>"$out"
	fi
	grep -E '^ *(not )?ok' "$LOGS/step.out" >>"$out"
	echo "== $name: $(($(now) - s)) s"
	echo "$name: $(($(now) - s)) s" >>"$LOGS/check.times"
}

# A kernel build is one test point.
kernel() {
	if sh labs/host/kernel.sh "$1" "$2"; then
		echo "ok - kernel ch$1 ($2) builds"
	else
		echo "not ok - kernel ch$1 ($2) builds"
		return 1
	fi
}

# The series applies in order to the pristine tree (tree.sh re-applies it
# to ch00 whenever patches/ changes and stops at the first patch that does
# not apply), checkpatch.pl finds nothing in any patch, and chapter 13's
# optional labs/ch13/mc-extra.patch still applies to ch13.
hygiene() {
	sh labs/host/tree.sh || { echo "not ok - the series applies to pristine 6.1"; return 1; }
	# checkpatch.pl takes seconds a patch: run it on all of them, one
	# per CPU at a time, then report in series order.  It runs
	# scripts/spdxcheck.py with "env python3": make that Debian's,
	# which has python3-ply and python3-git.
	cp=$LOGS/checkpatch
	rm -rf "$cp" && mkdir -p "$cp"
	series_patches | xargs -r -P "$(nproc)" -I{} sh -c \
		'cd "$1" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl \
			--strict --terse --no-summary "$2/patches/$3" >"$4/$3" 2>&1' \
		_ "$(cd "$TREE" && pwd)" "$PWD" {} "$(cd "$cp" && pwd)"
	n=0
	for p in $(series_patches); do
		n=$((n + 1))
		nn=$(printf '%02d' $n)
		if git -C "$TREE" rev-parse -q --verify "ch$nn" >/dev/null; then
			echo "ok - $p applies (tag ch$nn)"
		else
			echo "not ok - $p applies"
		fi
		# One series: "[PATCH n/N]", N the number of patches in it (a
		# patch exported alone says "[PATCH]", one from an older, shorter
		# series says "n/8").  git pads n to N's width: "09/10".
		N=$(nr_patches)
		want="[PATCH $(printf "%0${#N}d" $n)/$N]"
		subj=$(sed -n 's/^Subject: //p' "patches/$p" | head -n 1)
		case $subj in
		"$want "*) echo "ok - $p: its subject says $want" ;;
		*) echo "not ok - $p: its subject says $want"
			echo "    # Subject: $subj" ;;
		esac
		r=$(cat "$cp/$p" 2>/dev/null || echo "checkpatch.pl did not run")
		if [ -z "$r" ]; then
			echo "ok - $p: checkpatch.pl clean"
		else
			echo "not ok - $p: checkpatch.pl"
			echo "$r" | sed 's/^/    # /'
		fi
	done
	[ $n -gt 0 ] || echo "ok - the series is empty (chapter 0 only)"
	# Chapter 13's optional patch (exercise 7) still applies to ch13,
	# checked in an index of its own: the checkout is left alone.
	x=labs/ch13/mc-extra.patch idx=$(cd "$LOGS" && pwd)/mc-extra.index
	if [ -f "$x" ] && [ "$last" -ge 13 ]; then
		if GIT_INDEX_FILE=$idx git -C "$TREE" read-tree ch13 &&
			GIT_INDEX_FILE=$idx git -C "$TREE" apply --cached --check "$PWD/$x"; then
			echo "ok - $x applies to ch13"
		else
			echo "not ok - $x applies to ch13"
		fi
		rm -f "$idx"
	fi
}

# Every goal that takes CH refuses a bad one while make reads the
# Makefile, before any recipe could change something.
make_vars() {
	for g in kernel lab shell tree exercise grade stress cost perf; do
		for bad in 1x 99 ''; do
			if out=$(make -s "$g" CH="$bad" 2>&1); then
				echo "not ok - make $g CH='$bad' is refused"
			elif echo "$out" | grep -q '^Makefile:[0-9]*: \*\*\* CH'; then
				echo "ok - make $g CH='$bad' is refused"
			else
				echo "not ok - make $g CH='$bad' is refused by the Makefile"
				echo "$out" | tail -n 3 | sed 's/^/    # /'
			fi
		done
	done
}

# check_tree NN [exercise]: make check's own tree (build/check-tree,
# never the reader's build/tree) at chapter NN, as make tree or make
# exercise makes it; on failure, what worktree.sh said.
check_tree() {
	CM_WT=$BUILD/check-tree CM_QUIET=1 sh labs/host/worktree.sh "$@" \
		>"$LOGS/exercise.out" 2>&1 && return 0
	sed 's/^/    # /' "$LOGS/exercise.out"
	return 1
}

# full_marks WHAT OUT: "ok - WHAT: SCORE" if make grade's (or score.py's)
# output OUT ends in full marks; else its last lines and "not ok".
full_marks() {
	score=$(echo "$2" | sed -n 's/^Score: //p')
	# make grade's regression check: "... k of n pass", every one.
	reg=$(echo "$2" | sed -nE 's/^earlier labs .*: ([0-9]+) of ([0-9]+) pass$/\1 \2/p')
	if [ -n "$score" ] && [ "${score%/*}" = "${score#*/}" ] &&
		{ [ -z "$reg" ] || [ "${reg% *}" = "${reg#* }" ]; }; then
		echo "ok - $1: $score"
	else
		echo "$2" | tail -n 30 | sed 's/^/    # /'
		echo "not ok - $1: full marks${reg:+, earlier labs all pass} (got: ${score:-no score}${reg:+, ${reg% *} of ${reg#* } earlier labs pass})"
	fi
}

# exercise NN: make exercise's skeleton of chapter NN (made in a tree of
# make check's own, never the reader's build/tree) builds, boots, and
# make grade scores it at most 40 % of the chapter's points, with a
# transcript: the points that matter are the ones the exercise earns.
# The reference kernel's run of lab NN, just before, scores full.
exercise() {
	n=$(expr "$1" + 0)
	if ! check_tree "$1" exercise; then
		echo "not ok - chapter $n: make exercise makes a skeleton"
		return 1
	fi
	# The whole lab, as make grade runs it for a student: a hollow
	# function that makes the lab wait costs at most the lab's timeout.
	out=$(CM_WT=$BUILD/check-tree GRADE_LABS=$1 \
		GRADE_JSON=$LOGS/grade-skeleton-ch$1.json sh labs/host/grade.sh "$1" 2>&1)
	score=$(echo "$out" | sed -n 's/^Score: //p')
	got=${score%/*} max=${score#*/}
	case $got$max in '' | *[!0-9]*) got=1 max=0 ;; esac	# no score: fail
	if echo "$out" | grep -q '^kernel .*: up to date\|^kernel .*/bzImage$' &&
		grep -q '"plan": [0-9]' "$LOGS/grade-skeleton-ch$1.json" &&
		[ "$((got * 100))" -le "$((max * 40))" ] 2>/dev/null &&
		echo "$out" | grep -q '^transcript of what failed:'; then
		echo "ok - chapter $n: the untouched skeleton builds, boots, and scores $score (at most 40 %), with a transcript"
	else
		echo "$out" | tail -n 30 | sed 's/^/    # /'
		echo "not ok - chapter $n: the untouched skeleton builds, boots, and scores at most 40 % (got: ${score:-no score})"
	fi
	# The reference's lab NN ran in the step before: score that run.
	full_marks "chapter $n: make grade scores the reference" \
		"$(python3 labs/host/score.py "$1" "$LOGS/grade-reference-ch$1.json" \
			"the reference kernel build/ch$1" "$LOGS/lab$1-ch$1" 2>&1)"
}

# solution NN: what a student who finished chapter NN runs: make tree
# CH=NN (the reference, in make check's own tree, just after the
# skeleton) and make grade CH=NN, which runs every lab 0..NN on the
# tree's kernel.  All must score full: the earlier labs have to know
# they run on a later chapter's kernel.
solution() {
	n=$(expr "$1" + 0)
	if ! check_tree "$1"; then
		echo "not ok - chapter $n: make tree makes the reference tree"
		return 1
	fi
	full_marks "chapter $n: make grade on the reference tree, labs 0-$n" \
		"$(CM_WT=$BUILD/check-tree GRADE_JSON=$LOGS/grade-solution-ch$1.json \
			sh labs/host/grade.sh "$1" 2>&1)"
}

# negative N: lab N run on the chapter N-1 kernel must fail, at a test
# point.  A lab that passes there does not prove its patch; one that
# fails only by timing out or crashing before its first point proves
# nothing either.  STOP=1 ends the lab at its first failing point.
negative() {
	prev=$(printf '%02d' $(($1 - 1)))
	nn=$(printf '%02d' "$1")
	out=$(STOP=1 sh labs/host/run.sh "$prev" "$nn" 2>&1)
	verdict=$(echo "$out" | grep -E '^(not )?ok - lab' | tail -n 1)
	first=$(echo "$out" | grep -m 1 -E '^    not ok ' | sed 's/^ *//')
	what="lab $1 fails on the chapter-$(($1 - 1)) kernel"
	case $verdict in
	"not ok - "*TIMEOUT* | "not ok - "*HUNG* | "not ok - "*"QEMU ERROR"* | "ok - "*)
		echo "not ok - negative control: $what"
		echo "    # got: $verdict" ;;
	*)
		if [ -n "$first" ]; then
			echo "ok - negative control: $what at \"${first#not ok }\""
		else
			echo "not ok - negative control: $what at a test point"
			echo "    # got: $verdict"
		fi ;;
	esac
}

: >"$LOGS/check.times"
# The kernel tree is extracted and committed once (a minute or more, on
# one CPU) while the book is built (on the other): the first step that
# needs the tree waits for it, and does the work itself if this failed.
[ "$mode" = check ] && [ ! -d "$TREE/.git" ] &&
	{ sh labs/host/tree.sh >"$LOGS/tree-early.log" 2>&1 & }
if [ "$mode" = check ]; then
	step "lab programs: host unit tests" make -s -C code O="$PWD/$BUILD/code" test
	step "lab library: tap.sh on the host" sh labs/host/taptest.sh
	step "make grade: a failing KUnit line in its transcript" sh labs/host/scoretest.sh
fi
# make check builds and checks the book in the background, at the
# lowest priority (see the kernels below): pandoc uses one CPU for
# about three minutes, which the labs leave idle; its points are
# collected at the end.
book_pg=
if [ -f book/book.mk ]; then
	if [ "$mode" = check ]; then
		rm -f "$LOGS/bg-book.rc"
		# shellcheck disable=SC2016
		setsid nice -n 19 sh -c '
			echo 19 2>/dev/null >/proc/self/autogroup
			make -s book-check >"$1/bg-book.out" 2>&1
			echo $? >"$1/bg-book.rc"' _ "$LOGS" &
		book_pg=$!
	else
		step "book" sh -c 'make -s book && echo "ok - book: $BUILD/book/index.html"'
	fi
fi
step "lab programs and initramfs" sh -c \
	'make -s initramfs && echo "ok - initramfs with the lab programs"'
[ "$mode" = check ] && step "patch hygiene" hygiene
[ "$mode" = check ] && step "make: every goal refuses a bad CH" make_vars

# Two kernels of the newest chapter are cold builds of their own (5-7
# minutes of both CPUs each): the debug flavour, for the regression run
# at the end, and the memcg flavour, for the side-by-side run.  They
# are built from here on in the background, debug first, at the lowest
# priority (nice 19, and so is their scheduling autogroup), from a
# checkout of their own, in a process group of their own: they take the
# CPU time the labs leave idle (the guests sleep, wait and mostly use
# one CPU), and give way to everything else.  The negative controls
# stop them while they run (lab 9's proof needs b's reader to run
# between a's reclaim rounds: on a busy host it may not).  The step
# that boots a kernel waits for it, then has both CPUs to finish it.
memcg_labs=$(grep -l '^# memcg:' labs/ch[0-9][0-9]/lab.sh 2>/dev/null |
	sed 's|labs/ch\([0-9][0-9]\)/lab.sh|\1|')
bg_flavours="debug${memcg_labs:+ memcg}"
# After the kernels, the same background job compiles the hooks
# (labs/host/hooks.sh): a minute of both CPUs, off the critical path.
bg_last=hooks
bg_pg=
# bg_join NAME PGID: wait for the background job NAME (a kernel
# flavour, hooks, book) of process group PGID, show its output, and
# return its exit status.
bg_join() {
	while [ ! -f "$LOGS/bg-$1.rc" ]; do
		# gone without a word (killed): its output says how far it got
		if ! /bin/kill -0 -- "-$2" 2>/dev/null &&
			[ ! -f "$LOGS/bg-$1.rc" ]; then
			echo 1 >"$LOGS/bg-$1.rc"
			break
		fi
		sleep 5
	done
	cat "$LOGS/bg-$1.out"
	return "$(cat "$LOGS/bg-$1.rc")"
}
# bg_wait FLAVOR: wait for the background build of FLAVOR's kernel,
# show its output, and report it as one test point.
bg_wait() {
	if bg_join "$1" "$bg_pg"; then
		echo "ok - kernel ch$lastnn ($1) builds"
	else
		echo "not ok - kernel ch$lastnn ($1) builds"
		return 1
	fi
}
# bg_signal SIGNAL: send SIGNAL (STOP, CONT, TERM) to the background
# builds, unless they are done.
bg_signal() {
	[ -n "$bg_pg" ] && [ ! -f "$LOGS/bg-$bg_last.rc" ] &&
		/bin/kill -s "$1" -- "-$bg_pg" 2>/dev/null
	return 0
}
if [ "$mode" = check ]; then
	for f in $bg_flavours hooks; do rm -f "$LOGS/bg-$f.rc"; done
	src=$(cd "$BUILD" && pwd)/bg-src
	# shellcheck disable=SC2016,SC2086
	setsid nice -n 19 sh -c '
		# A new session is a new scheduling autogroup, and the
		# groups share the CPUs fairly whatever their tasks nice
		# values: make the group itself nice.
		echo 19 2>/dev/null >/proc/self/autogroup
		src=$1 nn=$2 tree=$3 logs=$4
		shift 4
		if [ -d "$src" ]; then
			git -C "$src" checkout -q --detach "ch$nn"
		else
			git -C "$tree" worktree prune &&
				git -C "$tree" worktree add -q --detach "$src" "ch$nn"
		fi >"$logs/bg-src.out" 2>&1
		checkout=$?
		for f in "$@"; do
			{
				cat "$logs/bg-src.out"
				[ $checkout = 0 ] &&
					CM_KSRC=$src sh labs/host/kernel.sh "$nn" "$f"
				echo $? >"$logs/bg-$f.rc"
			} >"$logs/bg-$f.out" 2>&1
		done
		{
			[ $checkout = 0 ] && CM_KSRC=$src sh labs/host/hooks.sh
			echo $? >"$logs/bg-hooks.rc"
		} >"$logs/bg-hooks.out" 2>&1' _ "$src" "$lastnn" "$TREE" "$LOGS" $bg_flavours &
	bg_pg=$!
	# an interrupted make check takes its background jobs along
	trap 'bg_signal TERM; bg_signal CONT
		[ -n "$book_pg" ] && /bin/kill -- "-$book_pg" 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
fi

n=0
while [ $n -le "$last" ]; do
	nn=$(printf '%02d' $n)
	step "chapter $n: kernel" kernel "$nn" default
	step "chapter $n: lab $n" sh labs/host/run.sh "$nn" "$nn"
	# Here, between chapter n and n+1, the skeleton's kernel is cheap:
	# it differs from the one just built in a few function bodies.
	if [ "$mode" = check ] && [ -f "labs/ch$nn/skeleton" ]; then
		step "chapter $n: exercise and grade" exercise "$nn"
	fi
	n=$((n + 1))
done

if [ "$mode" = check ] && [ -f "labs/ch$lastnn/skeleton" ]; then
	step "chapter $last: make grade on the finished tree" solution "$lastnn"
fi

if [ "$mode" = check ]; then
	# The earlier labs run again on the newest kernel below, in its
	# debug flavour: the same patches with every checker on.  A second
	# run on the default flavour would find nothing more, and cost
	# minutes the 50-minute budget does not have.
	bg_signal STOP
	n=1
	while [ $n -le "$last" ]; do
		step "negative control: lab $n on the chapter-$((n - 1)) kernel" \
			negative $n
		n=$((n + 1))
	done
	bg_signal CONT
	# Hooks in code the lab kernels do not build (migration, KSM, ...)
	# must at least compile; sparse reads the files the series adds.
	step "hooks: compile with every hook enabled (in the background)" \
		bg_join hooks "$bg_pg"
	step "debug flavour: kernel ch$lastnn (built in the background)" \
		bg_wait debug
	# Every lab on the debug kernel, the regression run: KASAN, lockdep
	# and DEBUG_VM watch all the code paths the labs reach (about 3x
	# slower than default).
	n=0
	while [ $n -le "$last" ]; do
		nn=$(printf '%02d' $n)
		# A lab that counts instructions ("# icount: 1", lab 13)
		# would count the checkers' here; the paths it runs are
		# the other labs' too.
		grep -q '^# icount: 1$' "labs/ch$nn/lab.sh" ||
			step "debug flavour: lab $n" sh labs/host/run.sh "$lastnn" "$nn" debug
		n=$((n + 1))
	done
	# The labs written against memcg v1's files only ("# memcg:" in
	# their header) run again on mainline memcg, built from the same
	# tree with the kit's controller off: the side-by-side run.
	if [ -n "$memcg_labs" ]; then
		step "memcg flavour: kernel ch$lastnn (built in the background)" \
			bg_wait memcg
		for nn in $memcg_labs; do
			step "memcg flavour: lab $(expr "$nn" + 0)" \
				sh labs/host/run.sh "$lastnn" "$nn" memcg
		done
	fi
	# Lab 13's comparison (make perf): the kit, a kernel without a
	# controller and memcg, counted in instructions.  The baseline is
	# chapter 0's kernel, built first: the unpatched tree costs what
	# the patched tree with the controller off does (chapter 13 shows
	# it), and one more cold build would not fit the budget.  The
	# kit's run is the chapter step's, from a moment ago.
	if [ "$last" -ge 13 ]; then
		step "perf: lab 13 on the kit, on no controller and on memcg" \
			env CM_PERF_NONE=00 CM_PERF_REUSE=1 sh labs/host/perf.sh "$lastnn"
	fi
	# Everything at once, on four CPUs, with the invariants checked:
	# the short form of make stress, with a fixed seed so that a
	# failure here replays with the same schedule.
	step "stress: 60 s on the chapter-$last debug kernel" \
		sh labs/host/stress.sh "$lastnn" debug 60 2026 4
fi

if [ -n "$book_pg" ]; then
	step "book: build and filter tests (in the background)" \
		bg_join book "$book_pg"
fi

echo
echo "time per step:"
sed 's/^/  /' "$LOGS/check.times"
echo "total: $(($(now) - t0)) s; results in $out"
passed=$(grep -cE '^ *ok' "$out")
failed=$(grep -cE '^ *not ok' "$out")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
