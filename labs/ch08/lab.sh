#!/bin/sh
# Lab 8: memory.control_type.  A container set to 1 charges mapped pages
# only: page cache it reads costs it nothing until one of its tasks maps
# the pages, and each mapped page is given back when its last mapping
# goes, while the page stays cached.  3 (the default) charges page cache
# again; 2 behaves like 1, as in 2007; anything else is refused.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 34

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
ok "1 selects mapped pages only" set_type m 1
is "$(type_of m)" 1 "and reads back as 1"
for bad in 0 4 abc -1 +1 0x1 "1 " 99999999999999999999; do
	not_ok_if "'$bad' is refused" set_type m "$bad"
done
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
within "$ux" "$((200 + own))" 8 "m pays for the 200 mapped pages (+ x's own)"
xown=$((ux - 200))
ok "y maps and touches the first 100 of them" \
	start_held /tmp/o/y.out in_c m cm-file /mnt/f512 --mmap --pages 100 --hold
y=$HELD_PID
diag "and with y mapping 100 of them too: $(usage m)"
within "$(usage m)" "$((ux + xown))" 4 "no page is charged twice"
release "$x"
drain_cpus
diag "after x unmaps and exits: $(usage m)"
within "$(usage m)" "$((100 + xown))" 4 "x unmaps: the 100 pages only x mapped go back"
release "$y"
drain_cpus
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
ok "3 charges page cache again" set_type m 3
in_c m cm-file /mnt/g256 --read >/dev/null
drain_cpus
atleast "$(usage m)" 256 "m pays for the 256 new cached pages it read"
ok "2 is accepted" set_type m 2
in_c m cm-file /mnt/h256 --read >/dev/null
drain_cpus
atleast "$(usage m)" 256 "but behaves like 1: h256's pages are not charged"
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
is "$(usage m)" "$u0" "m writes 256 pages to tmpfs and pays for none"
# @cm-end tmpfs

done_testing
