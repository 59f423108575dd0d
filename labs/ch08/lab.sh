#!/bin/sh
# Lab 8: memory.control_type.  A container set to 1 charges mapped pages
# only: page cache it reads costs it nothing until one of its tasks maps
# the pages, and each mapped page is given back when its last mapping
# goes, while the page stays cached.  3 (the default) charges page cache
# again; 2 behaves like 1, as in 2007; anything else is refused.  Only
# cache pages are charged at map time: a perf ring buffer is not; and a
# mapped-only charge survives compaction (migration) and swapoff.
# timeout: 180
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 62

# @cm-begin helpers
# usage, failcnt, in_c and remount come from lib.sh.
install_in_c
mkdir -p /tmp/o

# set_type C VALUE: write VALUE, exactly as given (no newline), to C's
# memory.control_type ("" is the root); fails if the write is refused.
set_type() {
	printf '%s' "$2" >"/container/${1:+$1/}memory.control_type"
}
type_of() { cat "/container/${1:+$1/}memory.control_type"; }

# cached_pages: pages in the page cache now.
cached_pages() { echo $(($(meminfo Cached) / 4)); }

# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
mkdir /container/m /container/n
for f in f512 g256 h256; do
	dd if=/dev/urandom of=/mnt/$f bs=4096 count=${f#?} 2>/dev/null
done
remount /mnt

# @cm-begin interface
is "$(type_of m)" 3 "a new container charges page cache and mapped pages (3)"
points 4
ok "1 selects mapped pages only" set_type m 1
points 4
is "$(type_of m)" 1 "and reads back as 1"
for bad in 0 4 abc -1 +1 0x1 "1 " 99999999999999999999; do
	not_ok_if "'$bad' is refused" set_type m "$bad"
done
points 4
is "$(type_of m)" 1 "after all that, the type is still 1"
not_ok_if "the root's type cannot be changed" set_type "" 1
is "$(type_of)" 3 "the root charges everything (3)"
# @cm-end interface

# @cm-begin read
# read(2) of 512 pages from m: they come into the page cache, and m pays
# only for the reader's own few anonymous pages (stack, data).
c0=$(cached_pages)
ok "cm-file reads 512 pages in m and holds" \
	start_held /tmp/o/read.out in_c m cm-file /mnt/f512 --read --hold
own=$(usage m)
diag "m's usage while the reader holds: $own; page cache grew by $(($(cached_pages) - c0)) pages"
atleast "$(($(cached_pages) - c0))" 500 "512 pages came into the page cache"
points 5
atleast 24 "$own" "m's usage stayed flat (the reader's own pages only)"
release "$HELD_PID"
# @cm-end read

# @cm-begin map
# The same pages, now in the cache, mapped and touched by two tasks of
# m: 200 and then 100 of them.  Each page is charged once, when it is
# first mapped, and stays charged while either task maps it.
#
# The reader's own pages are only an estimate of x's: --read also
# dirties its read buffer, and where the stack starts (ASLR) decides
# whether it spans one page or two.  Runs differ by up to 3 pages, so
# x gets 8 pages of slack against 200.  From then on the lab uses x's
# own pages as measured; y runs the same code the same way, and 4
# pages of slack cover its stack.
ok "x maps and touches 200 cached pages" \
	start_held /tmp/o/x.out in_c m cm-file /mnt/f512 --mmap --pages 200 --hold
x=$HELD_PID
ux=$(usage m)
diag "m's usage with x mapping 200 pages: $ux"
points 5
within "$ux" "$((200 + own))" 8 "m pays for the 200 mapped pages (+ x's own)"
xown=$((ux - 200))
ok "y maps and touches the first 100 of them" \
	start_held /tmp/o/y.out in_c m cm-file /mnt/f512 --mmap --pages 100 --hold
y=$HELD_PID
diag "and with y mapping 100 of them too: $(usage m)"
points 5
within "$(usage m)" "$((ux + xown))" 4 "no page is charged twice"
release "$x"
drain_cpus
diag "after x unmaps and exits: $(usage m)"
points 4
within "$(usage m)" "$((100 + xown))" 4 "x unmaps: the 100 pages only x mapped go back"
release "$y"
drain_cpus
points 4
is "$(usage m)" 0 "y unmaps: the rest goes back"
atleast "$(($(cached_pages) - c0))" 500 "and the 512 pages are all still cached"
# @cm-end map

# @cm-begin limit
# Under a limit, mapped-only pages are reclaimed like others: mapping
# all 512 pages in a 128-page container works, and nobody is killed.
echo 128 >/container/m/memory.limit
in_c m cm-file /mnt/f512 --mmap >/dev/null
is "$?" 0 "x maps all 512 pages under a 128-page limit"
atleast 128 "$(usage m)" "usage stayed within the limit"
echo 9223372036854775807 >/container/m/memory.limit
drain_cpus
# @cm-end limit

# @cm-begin switch
# Back to 3: new page cache is charged again.  2 behaves like 1.
points 4
ok "3 charges page cache again" set_type m 3
in_c m cm-file /mnt/g256 --read >/dev/null
drain_cpus
atleast "$(usage m)" 256 "m pays for the 256 new cached pages it read"
points 4
ok "2 is accepted" set_type m 2
in_c m cm-file /mnt/h256 --read >/dev/null
drain_cpus
atleast "$(usage m)" 256 "but behaves like 1: h256's pages are not charged"
points 4
atleast "$((256 + 16))" "$(usage m)" "(m still pays for g256's, charged under 3)"
# @cm-end switch

# @cm-begin tmpfs
# tmpfs in a mapped-only container: its pages are page cache, so what
# m writes there is not charged at all (until a task maps it).
mkdir -p /t && mount -t tmpfs none /t
set_type m 1
u0=$(usage m)
in_c m dd if=/dev/zero of=/t/z bs=4096 count=256 2>/dev/null
drain_cpus
points 4
is "$(usage m)" "$u0" "m writes 256 pages to tmpfs and pays for none"
# @cm-end tmpfs

# @cm-begin uffd
# userfaultfd maps shmem pages without a fault: UFFDIO_COPY allocates
# them and maps them, UFFDIO_CONTINUE maps pages already in the cache.
# m pays for them as for pages a fault maps, and only while they are
# mapped.  A first cm-uffd mapping one page makes m pay for that page
# and for the program's own pages (13 or 14 measured: its stack, data
# and heap).  A second, mapping 65, should add as many of its own and
# 64 pages more.  Runs differ by up to 2 pages (where the stack starts,
# ASLR, decides how many pages it spans): 4 pages of slack.
for how in copy continue; do
	ok "UFFDIO_$(echo $how | tr a-z A-Z) maps 1 shmem page for a task of m" \
		start_held /tmp/o/uffd1.out in_c m cm-uffd $how 1 --hold
	one=$HELD_PID
	u1=$(usage m)
	ok "and 65 for a second task" \
		start_held /tmp/o/uffd65.out in_c m cm-uffd $how 65 --hold
	diag "m's usage: $u0 before, $u1 with the first task, $(usage m) with both"
	points 3
	within "$(($(usage m) - u1))" "$((u1 - u0 - 1 + 64))" 4 \
		"m pays for the 64 more pages $how mapped"
	release "$HELD_PID"
	release "$one"
	rm -f /tmp/o/uffd1.out /tmp/o/uffd65.out
	drain_cpus
	is "$(usage m)" "$u0" "and for none once they are unmapped"
done
# @cm-end uffd

# @cm-begin perf
# A ->fault handler may hand out any page.  perf's returns a page of the
# event's ring buffer, which perf allocated itself and frees itself,
# with __free_page(), past every uncharge point: such a page is not the
# container's to charge, whatever its type.  cm-perf maps a buffer of
# 1 + 64 pages and reads every page, one fault each, then holds.
#
# While it holds, its container pays for cm-perf's own pages only: its
# anonymous pages (stack, data, heap; smaps_rollup counts them exactly)
# and, in p3, the one page of its report file in /tmp, page cache that a
# container of type 3 pays for (p1 does not).  That is 2 pages of slack;
# a charged buffer would be 65 pages over.  A grace period after
# cm-perf exits, perf has freed the buffer (call_rcu()); without its
# report file, p3 is back at 0 like p1, unless a charge was lost or
# leaked.
for t in 1 3; do
	mkdir /container/p$t
	set_type p$t $t
	ok "cm-perf maps and reads a 65-page perf buffer in p$t (type $t)" \
		start_held /tmp/o/perf.out in_c p$t cm-perf 64 --hold
	up=$(usage p$t)
	pown=$(($(rollup_kb "$HELD_PID" Anonymous) / 4))
	diag "p$t's usage with the buffer mapped: $up; cm-perf's own anonymous pages: $pown"
	within "$up" "$pown" 2 "p$t pays for cm-perf's own pages, not for the buffer"
	release "$HELD_PID"
	rm -f /tmp/o/perf.out
	sleep 1
	drain_cpus
	is "$(usage p$t)" 0 "cm-perf exits, perf frees the buffer: p$t's usage is 0"
done
# @cm-end perf

# @cm-begin compact
# Compaction migrates pages: it unmaps each one (migration entries in
# place of its mappings), copies it to a new frame and maps the copy.
# The unmap is a last unmap, but the charge of a mapped-only page must
# go with the copy, as a charge for life does.
#
# pfns PID PATH: the page-frame number of each page of PID's mapping of
# PATH, one a line, in hex, from /proc/PID/pagemap: 8 bytes a page,
# bits 0-54 the frame and the top byte flags, cut off (bit 55,
# soft-dirty, is 0 on these kernels).
pfns() {
	_r=$(awk -v p="$2" '$6 == p { print $1; exit }' "/proc/$1/maps")
	_lo=$(printf '%d' "0x${_r%-*}")
	_hi=$(printf '%d' "0x${_r#*-}")
	dd if="/proc/$1/pagemap" bs=8 skip=$((_lo / 4096)) \
		count=$(((_hi - _lo) / 4096)) 2>/dev/null |
		od -A n -t x8 -v | tr -s ' ' '\n' | grep . | cut -c 3-
}
# vm_event NAME: a /proc/vmstat counter; empty on a kernel without
# CONFIG_VM_EVENT_COUNTERS, which has none of the event counters.
vm_event() {
	awk -v f="$1" '$1 == f { print $2 }' /proc/vmstat
}

# x maps 256 pages of a new file in c, of type 1, and holds; then the
# whole machine's memory is compacted.  x's own pages are charged for
# life and x is idle, so nothing should change c's usage at all; 2
# pages of slack, when the bug gives back one page per page moved.
#
# Compaction moves pages only into free pages of pageblocks (2 MiB)
# that are in use already: it does not break up a free block.  Its
# migration scanner works up from the bottom of the zone, its free
# scanner down from the top, and the pages below where they meet move.
# A guest this size is mostly free blocks, so as it comes, few pages
# move, and few or none of x's: 39 and 71 of the 256 in two runs.  So
# the lab arranges memory, in three steps, with the root's pages:
#
# - a hog holds 8192 pages while x maps its own: the hog takes the
#   small free fragments that earlier parts left all over memory (the
#   allocator hands those out first, many of them at the top of the
#   zone), so x's pages come from fresh memory above the hog;
# - then two tmpfs files are written a page each in turn, 10240 pages
#   each, above x's pages, and one of them is deleted: 40 MiB of free
#   pages inside blocks in use, for the free scanner to fill;
# - the hog goes, leaving free memory below x, where nothing is moved.
#
# The scanners then meet inside the files' blocks, above x, and all of
# x's pages move: 255 or 256 of them in the runs so far (with the
# files but no hog, 113 to 250: the ones left were x's pages at the top
# of the zone).  64 is enough to see the bug.
mkdir /container/c
set_type c 1
dd if=/dev/urandom of=/mnt/c256 bs=4096 count=256 2>/dev/null
remount /mnt
drain_cpus
ok "a hog holds 8192 pages in the root" \
	start_held /tmp/o/hog.out cm-anon 8192 --hold
hog=$HELD_PID
ok "x maps and touches 256 pages of a new file in c (type 1)" \
	start_held /tmp/o/c.out in_c c cm-file /mnt/c256 --mmap --hold
x=$HELD_PID
drain_cpus			# compaction takes pages off the LRU lists only
cown=$(($(rollup_kb "$x" Anonymous) / 4))
uc=$(usage c)
diag "c's usage: $uc; x's own anonymous pages: $cown"
points 5
within "$uc" "$((256 + cown))" 2 "c pays for the 256 mapped pages (+ x's own)"
awk 'BEGIN { p = sprintf("%4096s", "")
	for (i = 0; i < 10240; i++) {
		printf "%s", p >"/tmp/o/fill1"
		printf "%s", p >"/tmp/o/fill2"
	} }'
rm /tmp/o/fill2
release "$hog"
pfns "$x" /mnt/c256 >/tmp/o/pfn0
mig0=$(vm_event pgmigrate_success)
echo 1 >/proc/sys/vm/compact_memory
mig1=$(vm_event pgmigrate_success)
pfns "$x" /mnt/c256 >/tmp/o/pfn1
moved=$(awk 'NR == FNR { f[FNR] = $1; next } $1 != f[FNR] { n++ }
	END { print n + 0 }' /tmp/o/pfn0 /tmp/o/pfn1)
diag "compaction moved $moved of x's 256 pages; c's usage now $(usage c)"
atleast "$moved" 64 "compaction migrated x's pages (at least 64 of 256 moved)"
if [ -n "$mig0" ]; then
	atleast "$((mig1 - mig0))" "$moved" "pgmigrate_success counts them"
else
	skip "pgmigrate_success counts them" "no VM event counters in this kernel"
fi
within "$(usage c)" "$uc" 2 "c's usage did not move: each charge went with its page"
release "$x"
rm /tmp/o/fill1
drain_cpus
points 5
is "$(usage c)" 0 "x unmaps and exits: c's usage is 0"
# @cm-end compact

# @cm-begin swapoff
# swapoff reads every page of a swap device back and maps it in place
# of its swap entry, in the task that owns it, without a fault:
# unuse_pte_range() reads it with swapin_readahead(), which charges
# through mem_container_cache_charge() (nothing, for the task's
# container of type 1), and unuse_pte() maps it.  Each such page must
# be charged there as do_swap_page() charges a page it maps.
#
# y, in s of type 1, touches 512 anonymous pages under a 256-page
# limit: about half go out to swap (swap in use grows by 320 pages,
# the pages out plus the free slots the per-CPU slot caches hold; 200
# is a floor).  With the limit lifted, swapoff brings them all back.
# Every anonymous page y maps was charged to s when y touched it, or
# must be when it comes back, and nothing else is charged to s: its
# usage equalled y's anonymous pages (smaps_rollup) in every run.  The
# 4 pages of slack keep the point about the pages swapoff maps, which
# the bug leaves out, some 280 of them.
ok "32 MiB of zram swap" zram_swap 32
mkdir /container/s
set_type s 1
echo 256 >/container/s/memory.limit
swap0=$(($(meminfo SwapTotal) - $(meminfo SwapFree)))
ok "y touches 512 pages in s (type 1, limit 256) and holds" \
	start_held /tmp/o/s.out in_c s cm-anon 512 --hold
y=$HELD_PID
swapped=$((($(meminfo SwapTotal) - $(meminfo SwapFree) - swap0) / 4))
diag "swap in use grew by $swapped pages; s's usage $(usage s)"
atleast "$swapped" 200 "at least 200 of them are out in swap"
echo 9223372036854775807 >/container/s/memory.limit
ok "swapoff brings them back" swapoff /dev/zram0
yanon=$(($(rollup_kb "$y" Anonymous) / 4))
diag "after swapoff: s's usage $(usage s); y's anonymous pages $yanon"
atleast "$yanon" 512 "y maps all 512 pages again (and its own)"
atleast "$(usage s)" "$((yanon - 4))" "s pays for every page y maps"
release "$y"
drain_cpus
points 5
is "$(usage s)" 0 "y exits: s's usage is 0"
# @cm-end swapoff

done_testing
