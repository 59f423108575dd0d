#!/bin/sh
# Lab 9: a container-aware folio_referenced().  Container a has a file
# in its page cache; a task of container b keeps reading it through a
# mapping.  When a needs room, its reclaim should be able to take those
# pages: b's use of them is b's business.  Without patch 9 b's
# references make them look busy to a's reclaim, which then finds
# nothing to free, and a's task is killed.  a's own references still
# count.
# timeout: 90
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 21

# @cm-begin helpers
# usage, failcnt, in_c, kills and remount come from lib.sh.
install_in_c
mkdir -p /tmp/o

# pressure C N: with F's 256 pages charged to C, limit C to 16 pages
# more than it has, and run a task there that needs N anonymous pages
# (there is no swap: only F's pages can make room).  Prints cm-anon's
# exit status.
pressure() {
	echo "$(($(usage "$1") + 16))" >"/container/$1/memory.limit"
	in_c "$1" cm-anon "$2" >/dev/null 2>&1
	echo $?
}
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
dd if=/dev/urandom of=/mnt/F bs=4096 count=256 2>/dev/null
mkdir /container/a /container/b

# @cm-begin other
# a reads F (256 pages, charged to a); b maps F and keeps reading it.
remount /mnt
in_c a cm-file /mnt/F --read >/dev/null
drain_cpus
a0=$(usage a)
atleast "$a0" 256 "a pays for F's 256 cached pages"
ok "b maps F and keeps reading it" \
	start_held /tmp/o/b.out in_c b cm-file /mnt/F --mmap --loop
busy=$HELD_PID
b0=$(usage b)
k0=$(kills)
status=$(pressure a 240)
# b's loop takes the pages back one fault at a time: give it up to five
# seconds to get to them all (one run in four had 190 of them at the
# first look, before b's loop had come round).
i=0
while [ $(($(usage b) - b0)) -lt 200 ] && [ $i -lt 50 ]; do
	usleep 100000
	i=$((i + 1))
done
b1=$(usage b)
diag "a's task exited with $status; b's usage went from $b0 to $b1 pages"
# The chapter's point, as a story: make grade weights it, but it
# depends on b's reader running while a reclaims (the chapter says
# why), so the point that carries the grade is the next part's.
points 3
is "$status" 0 "a's task gets its 240 pages: a's reclaim ignores b's references"
points 3
is "$(kills)" "$k0" "nobody was killed"
points 3
atleast "$((b1 - b0))" 200 "F's pages a gave up came back for b, charged to b"
ok "b's reader is still running" kill -0 "$busy"
release "$busy"
# @cm-end other

# @cm-begin held
# The same question without a race.  b's task maps the first 128 of F's
# pages, touches each once and sleeps: their PTEs are young when a's
# reclaim first looks, whether or not b ever runs again.  Those pages
# are the oldest on a's inactive list.  If b's references counted, the
# first look would keep them (and activate them) and free the 128 pages
# nobody maps, which are enough; if they do not count, reclaim frees
# b's pages first: a needs about 84 of them, so b loses at least 64.
echo 9223372036854775807 >/container/a/memory.limit
remount /mnt
in_c a cm-file /mnt/F --read >/dev/null
drain_cpus
atleast "$(usage a)" 256 "a pays for F's 256 pages again"
ok "b's task maps the first 128 pages of F, touches them once and sleeps" \
	start_held /tmp/o/held.out in_c b cm-file /mnt/F --mmap --pages 128 --hold
sleeper=$HELD_PID
is "$(map_rss_kb "$sleeper" /mnt/F)" 512 "its 128 mapped pages are resident (512 kB)"
k0=$(kills)
status=$(pressure a 100)
rss=$(map_rss_kb "$sleeper" /mnt/F)
diag "a's new task exited with $status; b's sleeping mapping of F: $rss kB resident"
is "$status" 0 "a's new task gets its 100 pages"
is "$(kills)" "$k0" "nobody was killed"
# Worth 45 points, half as much again as all the others together (26):
# a kernel that fails it scores at most 37 %, whatever the timing.
points 45
atleast "$(((512 - rss) / 4))" 64 "b's references do not count: its pages went first"
release "$sleeper"
# @cm-end held

# @cm-begin own
# a's own references must still count.  a's own task maps the first 128
# of F's pages, touches each once and holds them.  Those pages were read
# first, so they are the oldest on a's inactive list, and a's reclaim
# meets them first: it finds them referenced by a task of a, keeps them,
# and frees the 128 pages nobody maps.  The task under pressure asks for
# 100 pages this time: with 16 pages of room it needs about 100 of the
# other 128, and nothing depends on how fast the holder runs.
echo 9223372036854775807 >/container/a/memory.limit
remount /mnt
in_c a cm-file /mnt/F --read >/dev/null
drain_cpus
atleast "$(usage a)" 256 "a pays for F's 256 pages again"
ok "a's own task maps the first 128 pages of F and holds them" \
	start_held /tmp/o/own.out in_c a cm-file /mnt/F --mmap --pages 128 --hold
holder=$HELD_PID
is "$(map_rss_kb "$holder" /mnt/F)" 512 "its 128 mapped pages are resident (512 kB)"
k0=$(kills)
status=$(pressure a 100)
rss=$(map_rss_kb "$holder" /mnt/F)
diag "a's new task exited with $status; the holder's mapping of F: $rss kB resident"
is "$status" 0 "a's new task gets its 100 pages: reclaim found F's other pages"
is "$(kills)" "$k0" "nobody was killed"
is "$rss" 512 "a's own references count: all 128 mapped pages stayed"
release "$holder"
# @cm-end own

# @cm-begin settle
# (the readers' output files are tmpfs pages, charged to a and b)
echo 9223372036854775807 >/container/a/memory.limit
rm -f /tmp/o/b.out /tmp/o/held.out /tmp/o/own.out
remount /mnt
drain_cpus
is "$(usage a):$(usage b)" 0:0 "everything given back"
# @cm-end settle

done_testing
