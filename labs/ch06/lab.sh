#!/bin/sh
# Lab 6: per-container LRU and reclaim.  A container at its limit now
# makes room by reclaiming from its own pages, oldest first: it can read
# a file much larger than its limit, and run with more anonymous memory
# than its limit when there is swap.  Other containers' pages are left
# alone, and global reclaim may take a container's pages and put them
# back without losing track of them.
# timeout: 60
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 22
# make grade weights the points that need the exercise's two functions
# (the list hook and the isolation) with "points N" below.

# @cm-begin helpers
# usage, failcnt, in_c and remount come from lib.sh.
install_in_c
mkdir -p /tmp/o
# The waits below bound how long a kernel that cannot make room keeps
# the lab stuck; the debug flavour, about three times slower, gets three
# times as long.
slow=1
[ "$(kernel_flavour)" = debug ] && slow=3

# sample C PID OUT: until PID exits, read C's usage over and over, and
# write the highest value seen to OUT.  Every sample also goes to
# OUT.series, one per line (the chapter's plot is drawn from these).
sample() {
	_max=0
	: >"$3.series"
	while kill -0 "$2" 2>/dev/null; do
		_u=$(usage "$1")
		[ "$_u" -gt "$_max" ] && _max=$_u
		echo "$_u" >>"$3.series"
	done
	echo "$_max" >"$3"
}

# vm_events NAME...: the sum of these /proc/vmstat counters.
vm_events() {
	for _e in "$@"; do
		awk -v f="$_e" '$1 == f { print $2 }' /proc/vmstat
	done | awk '{ s += $1 } END { print s + 0 }'
}

# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "32 MiB of zram swap" zram_swap 32
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
mkdir /container/a /container/b

# @cm-begin stream
# A file 8 times the limit.  Its checksum is taken from the root first;
# then the page cache is dropped, and a, limited to 256 pages, reads all
# 2048 pages of it while the root samples a's usage.
dd if=/dev/urandom of=/mnt/big bs=4096 count=2048 2>/dev/null
sum=$(md5sum </mnt/big)
remount /mnt
echo 256 >/container/a/memory.limit
in_c a sh -c 'md5sum </mnt/big >/tmp/o/sum' &
reader=$!
sample a "$reader" /tmp/o/max
wait "$reader"
status=$?
# md5sum says nothing on stdout when a read fails, whatever its status.
points 6
ok "a reads a 2048-page file under a 256-page limit" \
	test "$status" = 0 -a -s /tmp/o/sum
points 2
is "$(cat /tmp/o/sum)" "$sum" "and the data is intact (md5sum)"
max=$(cat /tmp/o/max)
diag "a's usage: highest sample $max, limit 256; failcnt $(failcnt a)"
# One line of samples, in order: the chapter's plot is drawn from it.
diag "usage-series: $(tr '\n' ' ' </tmp/o/max.series)"
atleast 256 "$max" "usage sampled while it ran never exceeded the limit"
atleast "$(failcnt a)" 1 "failcnt counts the charges that had to reclaim first"
# @cm-end stream

# @cm-begin neighbour
# b's cached pages are not a's to reclaim.  b reads 1536 pages, six
# times a's limit, and keeps them cached; a streams the big file again;
# b's usage does not move.  The kernel's counters of pages scanned and
# reclaimed (pgscan_*, pgsteal_*: the container's reclaim feeds them as
# memcg's does) show that a's reclaim looked at a's pages only: it
# scanned about one page per page it freed.  A reclaim that walked the
# machine's lists would scan b's 1536 pages over and over for nothing.
dd if=/dev/zero of=/mnt/f1536 bs=4096 count=1536 2>/dev/null
remount /mnt
in_c b cm-file /mnt/f1536 --read >/dev/null
drain_cpus
b0=$(usage b)
diag "b holds $b0 pages"
atleast "$b0" 1536 "b's 1536 cached pages are charged to b"
scan0=$(vm_events pgscan_anon pgscan_file)
steal0=$(vm_events pgsteal_anon pgsteal_file)
# (A kernel that cannot make room leaves the stream stuck: 10 s at most,
# 30 on the debug flavour; it takes 1 to 2 s where room is made.)
run_within "$((10 * slow))" in_c a sh -c 'md5sum </mnt/big >/dev/null'
scanned=$(($(vm_events pgscan_anon pgscan_file) - scan0))
stolen=$(($(vm_events pgsteal_anon pgsteal_file) - steal0))
is "$(usage b)" "$b0" "a's reclaim left b's pages alone"
diag "a's stream: $scanned pages scanned, $stolen reclaimed"
# a's 2048-page stream must free at least 2048 - 256 pages; every page
# it scans is one of its own clean cache pages, nearly all freed at the
# first look.  Twice as many scans as frees is a generous bound.
points 3
atleast "$stolen" 1792 "a's reclaim freed the stream's pages (pgsteal)"
atleast "$((2 * stolen))" "$scanned" "and scanned at most 2 pages per page freed (pgscan)"
# @cm-end neighbour

# @cm-begin anon
# Anonymous memory three times the limit: the oldest pages go out to
# zram swap as new ones are touched, and come back when read.  cm-anon
# writes a word into every page and reads them all back.
swap0=$(($(meminfo SwapTotal) - $(meminfo SwapFree)))
points 3
ok "cm-anon holds 768 pages in a (limit 256)" \
	start_held /tmp/o/anon.out in_c a cm-anon 768 --verify --hold
points 2
is "$(report_field /tmp/o/anon.out bad)" 0 "all 768 pages read back intact"
swapped=$(( ($(meminfo SwapTotal) - $(meminfo SwapFree) - swap0) / 4 ))
diag "swap in use grew by $swapped pages; a's usage $(usage a)"
points 3
atleast "$swapped" 256 "at least 256 of them are out in swap"
atleast 256 "$(usage a)" "and a stays within its limit"
# A kernel that cannot make room leaves cm-anon faulting for ever: it is
# killed after 10 s (30 on the debug flavour), so the lab goes on to say
# what else is wrong.
release_within "$((10 * slow))" "$HELD_PID"
# @cm-end anon

# @cm-begin global
# Global reclaim does not know about containers: when the machine runs
# short, kswapd and direct reclaim isolate pages from the node's lists,
# a's and b's among them, and put back the ones they keep.  Each page
# they put back comes through the container's list hook while its record
# may still sit on the container's list (isolate_lru_folios() moves the
# folio, not the record): the hook must move the record, not add it.
# b's task keeps 512 of b's pages mapped and busy; a task outside any
# container then asks for more memory than is free.
ok "b's task maps 512 pages of its file and keeps using them" \
	start_held /tmp/o/loop.out in_c b cm-file /mnt/f1536 --mmap --pages 512 --loop
loop=$HELD_PID
# (MemFree, not MemAvailable: only the cache beyond it has to go, b's
# among it, and 8 MiB more, mostly to swap.)
want=$(( $(meminfo MemFree) / 4 + 2048 ))
b1=$(usage b)
ok "the root's task takes $want pages: global reclaim runs" \
	run_within 30 sh -c "cm-anon $want >/tmp/o/hog.out"
drain_cpus
diag "b's usage before $b1, after $(usage b)"
release "$loop"
# Whatever global reclaim did, b's records must still be on b's lists:
# b's own reclaim walks them (a 64-page limit, the file read again),
# and removing the file takes every record off.
echo 64 >/container/b/memory.limit
# (Without reclaim the reader would fault at the limit for ever: it is
# killed after 10 s, 30 on the debug flavour.)
run_within "$((10 * slow))" in_c b sh -c 'cat /mnt/f1536 >/dev/null'
points 5
atleast 64 "$(usage b)" "b's reclaim works through its lists afterwards"
rm -f /mnt/f1536
remount /mnt
is "$(usage b)" 0 "and every one of b's pages is uncharged when its file goes"
echo 9223372036854775807 >/container/b/memory.limit
# @cm-end global

# @cm-begin settle
rm -f /tmp/o/*
remount /mnt
drain_cpus
echo 9223372036854775807 >/container/a/memory.limit
is "$(usage a):$(usage b)" 0:0 "everything given back"
ok "rmdir a and b" rmdir /container/a /container/b
# @cm-end settle

# @cm-begin cost
if [ "$(kernel_chapter)" -lt 8 ]; then
	is "$(record_bytes)" 32 "a record is now 32 bytes (a list head more)"
elif [ "$(kernel_chapter)" -lt 10 ]; then
	is "$(record_bytes)" 40 "a record is 40 bytes (chapter 8 adds its mapping state)"
elif [ "$(kernel_chapter)" -lt 14 ]; then
	is "$(record_bytes)" 48 "a record is 48 bytes (chapter 10 adds its type and list)"
else
	is "$(record_bytes)" 40 "a record is 40 bytes (chapter 14: no list head, a lruvec owner)"
fi
# @cm-end cost

done_testing
