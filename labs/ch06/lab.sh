#!/bin/sh
# Lab 6: per-container LRU and reclaim.  A container at its limit now
# makes room by reclaiming from its own pages, oldest first: it can read
# a file much larger than its limit, and run with more anonymous memory
# than its limit when there is swap.  Other containers' pages are left
# alone.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 16

# @cm-begin helpers
# usage, failcnt, in_c and remount come from lib.sh.
install_in_c
mkdir -p /tmp/o

# sample C PID OUT: until PID exits, read C's usage over and over, and
# write the highest value seen to OUT.
sample() {
	_max=0
	while kill -0 "$2" 2>/dev/null; do
		_u=$(usage "$1")
		[ "$_u" -gt "$_max" ] && _max=$_u
	done
	echo "$_max" >"$3"
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
is "$?" 0 "a reads a 2048-page file under a 256-page limit"
is "$(cat /tmp/o/sum)" "$sum" "and the data is intact (md5sum)"
max=$(cat /tmp/o/max)
diag "a's usage: highest sample $max, limit 256; failcnt $(failcnt a)"
atleast 256 "$max" "usage sampled while it ran never exceeded the limit"
atleast "$(failcnt a)" 1 "failcnt counts the charges that had to reclaim first"
# @cm-end stream

# @cm-begin neighbour
# b's cached pages are not a's to reclaim.  b reads 512 pages and keeps
# them cached; a streams the big file again; b's usage does not move.
dd if=/dev/zero of=/mnt/f512 bs=4096 count=512 2>/dev/null
remount /mnt
in_c b cm-file /mnt/f512 --read >/dev/null
drain_cpus
b0=$(usage b)
diag "b holds $b0 pages"
atleast "$b0" 512 "b's 512 cached pages are charged to b"
in_c a sh -c 'md5sum </mnt/big >/dev/null'
is "$(usage b)" "$b0" "a's reclaim left b's pages alone"
# @cm-end neighbour

# @cm-begin anon
# Anonymous memory three times the limit: the oldest pages go out to
# zram swap as new ones are touched, and come back when read.  cm-anon
# writes a word into every page and reads them all back.
swap0=$(($(meminfo SwapTotal) - $(meminfo SwapFree)))
ok "cm-anon holds 768 pages in a (limit 256)" \
	start_held /tmp/o/anon.out in_c a cm-anon 768 --verify --hold
is "$(report_field /tmp/o/anon.out bad)" 0 "all 768 pages read back intact"
swapped=$(( ($(meminfo SwapTotal) - $(meminfo SwapFree) - swap0) / 4 ))
diag "swap in use grew by $swapped pages; a's usage $(usage a)"
atleast "$swapped" 256 "at least 256 of them are out in swap"
atleast 256 "$(usage a)" "and a stays within its limit"
release "$HELD_PID"
# @cm-end anon

# @cm-begin settle
rm -f /tmp/o/*
remount /mnt
drain_cpus
echo 9223372036854775807 >/container/a/memory.limit
is "$(usage a):$(usage b)" 0:0 "everything given back"
ok "rmdir a and b" rmdir /container/a /container/b
# @cm-end settle

# @cm-begin cost
slab=/sys/kernel/slab/meta_page
if [ "$(kernel_chapter)" -lt 8 ]; then
	is "$(cat $slab/object_size)" 32 "a record is now 32 bytes (a list head more)"
else
	is "$(cat $slab/object_size)" 40 "a record is 40 bytes (chapter 8 adds its mapping state)"
fi
# @cm-end cost

done_testing
