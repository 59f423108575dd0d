# lib.sh - guest helpers the labs share.  Source after tap.sh:
#   . /lab/lib/lib.sh
#
# Each helper returns non-zero on failure and says why on stderr, so a lab
# can wrap it in `ok "..." helper args`.

# @cm-begin zram-swap
# zram_swap MB: make /dev/zram0 a compressed in-memory swap device.
zram_swap() {
	echo "${1}M" >/sys/block/zram0/disksize || return 1
	mkswap /dev/zram0 >/dev/null || return 1
	swapon /dev/zram0
}
# @cm-end zram-swap

# @cm-begin zram-ext2
# zram_ext2 MB DIR: hot-add another zram device, put ext2 on it and mount
# it on DIR.  Files there live in the page cache and can be dropped.
zram_ext2() {
	id=$(cat /sys/class/zram-control/hot_add) || return 1
	echo "${1}M" >"/sys/block/zram$id/disksize" || return 1
	# 1 KiB blocks fail on zram; use the page size.
	mke2fs -q -b 4096 "/dev/zram$id" >/dev/null || return 1
	mkdir -p "$2" && mount -t ext2 "/dev/zram$id" "$2"
}
# @cm-end zram-ext2

# remount DIR: unmount the ext2 filesystem on DIR and mount it again,
# which drops its page cache (and the buffer heads that pin it).
remount() {
	_dev=$(awk -v d="$1" '$2 == d { print $1 }' /proc/mounts)
	[ -n "$_dev" ] && umount "$1" && mount -t ext2 "$_dev" "$1"
}

# @cm-begin containers
# usage C / failcnt C: a container's counters ("" is the root).
usage() { cat "/container/${1:+$1/}memory.usage"; }
failcnt() { cat "/container/${1:+$1/}memory.failcnt"; }

# install_in_c: put the in_c command on the PATH, the labs' name for
# cm-in (code/cm-in.c).  "in_c C CMD..." runs CMD inside container C:
# cm-in writes its own pid to C's tasks file and then execs CMD, so CMD's
# mm is made in C (exec makes a new one), and CMD keeps cm-in's pid
# (start_held and release rely on that).  So it is a link, not a shell
# function: in a background subshell, $$ is still the parent's pid, and
# $! would be the subshell's.
install_in_c() {
	mkdir -p /tmp/bin
	ln -sf "$(command -v cm-in)" /tmp/bin/in_c || return 1
	PATH=/tmp/bin:$PATH
}
# @cm-end containers

# @cm-begin memcg-v1
# The labs written against memcg v1's files alone (from chapter 11 on)
# run on the kit's kernel and on the memcg flavour, with these.
# memcg_side: "kit" or "memcg", whichever controller is mounted on
# /container: only the kit has Part I's page files.
memcg_side() {
	if [ -e /container/memory.usage ]; then echo kit; else echo memcg; fi
}
# f C NAME: C's memory.NAME ("" is the root).  wr C NAME VALUE: write
# VALUE to it with one write(2) (cm-write, lab 2) and print "ok" or
# "errno=NAME".  pages C: C's usage_in_bytes in pages.
f() { cat "/container/${1:+$1/}memory.$2"; }
wr() { cm-write "/container/${1:+$1/}memory.$2" "$3" 2>/dev/null | cut -d' ' -f1; }
pages() { echo $(( $(f "$1" usage_in_bytes) / 4096 )); }
# @cm-end memcg-v1

# kills: how many tasks the container OOM killer has killed since boot
# (chapter 7 on): its "Killed process" lines in the log.
kills() {
	dmesg | grep -c 'Memory container out of memory: Killed process'
}

# record_bytes: the bytes of the record the controller keeps for a
# charged page. Up to chapter 12 that is the meta_page slab's object
# size. From chapter 13 every page frame has one in page_ext, made at
# boot: the boot log's page_ext total, divided by the frames it covers
# (whole 128 MiB sections, 32768 frames, up to the end of memory), less
# page_ext's own flags word (8 bytes).
record_bytes() {
	if [ -e /sys/kernel/slab/meta_page ]; then
		cat /sys/kernel/slab/meta_page/object_size
		return
	fi
	_b=$(sed -n 's/.*allocated \([0-9]*\) bytes of page_ext.*/\1/p' \
		/run/boot.dmesg)
	_end=$(awk '$1 == "spanned" { sp = $2 }
		$1 == "start_pfn:" && $2 + sp > e { e = $2 + sp }
		END { print e + 0 }' /proc/zoneinfo)
	_frames=$(((_end + 32767) / 32768 * 32768))
	[ -n "$_b" ] && [ "$_frames" -gt 0 ] && echo $((_b / _frames - 8))
}

# kernel_chapter: the chapter of the kernel this lab runs on, as a
# number (run.sh passes cmkernel=chNN; 0 when it names no chapter).  A
# lab run again on a later kernel uses it where a later patch changes
# what the lab may expect.
kernel_chapter() {
	_k=$(sed -n 's/.*cmkernel=ch\([0-9][0-9]\).*/\1/p' /proc/cmdline)
	expr "${_k:-0}" + 0
}

# kernel_flavour: "debug" on a debug kernel (cmkernel=chNN-debug, or
# chNN-tree-debug for make try FLAVOR=debug), "default" otherwise.
kernel_flavour() {
	case $(cat /proc/cmdline) in
	*cmkernel=ch[0-9][0-9]-debug* | *cmkernel=ch[0-9][0-9]-*-debug*) echo debug ;;
	*) echo default ;;
	esac
}

# meminfo FIELD: a /proc/meminfo value, in kB.
meminfo() {
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# status_kb PID FIELD: a /proc/PID/status value, in kB.
status_kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# rollup_kb PID FIELD: a /proc/PID/smaps_rollup value, in kB.  Unlike the
# Rss* lines of /proc/PID/status, which 6.1 updates lazily (each task
# batches up to 64 counter events before folding them into the mm), this
# walks the page tables and is exact.
rollup_kb() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/smaps_rollup"
}

# map_rss_kb PID PATH: resident kB of PID's mappings of the file PATH.
map_rss_kb() {
	awk -v p="$2" '$6 == p { m = 1; next }
		/^[0-9a-f]+-[0-9a-f]+ / { m = 0 }
		m && $1 == "Rss:" { kb += $2 }
		END { print kb + 0 }' "/proc/$1/smaps"
}

# @cm-begin drain_cpus
# drain_cpus: a page just faulted in waits in a per-CPU batch (up to 15
# pages) before it goes on an LRU list, and the batch holds a reference:
# the page cannot be freed, so on a charging kernel (chapter 4 on) it
# stays charged, and its container stays alive.  A short program pinned
# to each CPU drains that CPU's batches when it exits (exit_mmap() calls
# lru_add_drain()).  Its own pages are charged to its container.
drain_cpus() {
	for _cpu in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$_cpu" cm-anon 16 >/dev/null
	done
}
# @cm-end drain_cpus

# drop_caches: write back and drop clean page cache, dentries and inodes.
drop_caches() {
	sync && echo 3 >/proc/sys/vm/drop_caches
}

# start_held OUT CMD...: start a cm-* program with --hold in the background,
# its output in OUT, and wait until it says "ready" (10 s at most).  The pid
# is left in $HELD_PID.
start_held() {
	_out=$1
	shift
	: >"$_out"
	"$@" >"$_out" 2>&1 &
	HELD_PID=$!
	_i=0
	while ! grep -q ': ready$' "$_out"; do
		_i=$((_i + 1))
		if [ $_i -gt 100 ] || ! kill -0 "$HELD_PID" 2>/dev/null; then
			echo "start_held: $1 never got ready:" >&2
			cat "$_out" >&2
			return 1
		fi
		usleep 100000
	done
}

# release PID: signal a held program and wait for it to exit.
release() {
	kill -USR1 "$1" && wait "$1"
}

# wait_within SECS PID: wait for PID, a child of this shell, but kill it
# if it has not exited after SECS seconds (its status is then 137), so
# that a kernel which leaves it stuck fails a test point instead of
# hanging the lab.  The watchdog lets go of the lab's output first: a
# sleep left holding the pipe to tee would keep the lab from ending
# until it ran out.
wait_within() {
	(exec >/dev/null 2>&1; sleep "$1"; kill -KILL "$2") &
	_dog=$!
	wait "$2"
	_rc=$?
	kill "$_dog" 2>/dev/null
	wait "$_dog" 2>/dev/null
	return $_rc
}

# release_within SECS PID: release, but give the program SECS seconds.
release_within() {
	kill -USR1 "$2" && wait_within "$1" "$2"
}

# run_within SECS CMD...: run CMD, but give it SECS seconds.  For a
# step that a broken kernel leaves stuck (a fault retried for ever, a
# stream that cannot make room): the lab fails a point and goes on.
run_within() {
	_secs=$1
	shift
	"$@" &
	wait_within "$_secs" $!
}

# report_field OUT KEY: KEY's value from a "prog: key=value ..." line.
report_field() {
	sed -nE "s/.* $2=([^ ]*).*/\1/p" "$1" | head -n 1
}
