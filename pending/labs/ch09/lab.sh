#!/bin/sh
# Lab 9: a container-aware folio_referenced().  Container a has a file
# in its page cache; a task of container b keeps reading it through a
# mapping.  When a needs room, its reclaim should be able to take those
# pages: b's use of them is b's business.  Without patch 9 b's
# references make them look busy to a's reclaim, which then finds
# nothing to free, and a's task is killed.  a's own references still
# count.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 14

# @cm-begin helpers
# usage, failcnt and in_c come from lib.sh.
install_in_c
mkdir -p /tmp/o

# kills: how many "Killed process" lines the container OOM has logged.
kills() {
	dmesg | grep -c 'Memory container out of memory: Killed process'
}

# remount: drop /mnt's page cache (and the buffer heads that pin it).
remount() {
	umount /mnt && mount -t ext2 "$MNTDEV" /mnt
}

# pressure C: with F's 256 pages charged to C, limit C to 16 pages more
# than it has, and run a task there that needs 240 anonymous pages
# (there is no swap: only F's pages can make room, nearly all of them).
# Prints cm-anon's exit status.
pressure() {
	echo "$(($(usage "$1") + 16))" >"/container/$1/memory.limit"
	in_c "$1" cm-anon 240 >/dev/null 2>&1
	echo $?
}
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
MNTDEV=$(awk '$2 == "/mnt" { print $1 }' /proc/mounts)
dd if=/dev/urandom of=/mnt/F bs=4096 count=256 2>/dev/null
mkdir /container/a /container/b

# @cm-begin other
# a reads F (256 pages, charged to a); b maps F and keeps reading it.
remount
in_c a cm-file /mnt/F --read >/dev/null
drain_cpus
a0=$(usage a)
atleast "$a0" 256 "a pays for F's 256 cached pages"
ok "b maps F and keeps reading it" \
	start_held /tmp/o/b.out in_c b cm-file /mnt/F --mmap --loop
busy=$HELD_PID
b0=$(usage b)
k0=$(kills)
status=$(pressure a)
b1=$(usage b)
diag "a's task exited with $status; b's usage went from $b0 to $b1 pages"
is "$status" 0 "a's task gets its 240 pages: a's reclaim ignores b's references"
is "$(kills)" "$k0" "nobody was killed"
atleast "$((b1 - b0))" 200 "F's pages a gave up came back for b, charged to b"
ok "b's reader is still running" kill -0 "$busy"
release "$busy"
# @cm-end other

# @cm-begin own
# The same, but the task that keeps reading F is a's own: its references
# are a's, so a's reclaim leaves F alone, finds nothing else to free, and
# the OOM killer runs.  It takes a's largest task, the reader (its 256
# mapped pages), and then F's pages can go.
echo 9223372036854775807 >/container/a/memory.limit
drain_cpus
remount
in_c a cm-file /mnt/F --read >/dev/null
drain_cpus
atleast "$(usage a)" 256 "a pays for F's 256 pages again"
ok "a's own task maps F and keeps reading it" \
	start_held /tmp/o/own.out in_c a cm-file /mnt/F --mmap --loop
busy=$HELD_PID
k0=$(kills)
status=$(pressure a)
# release the reader if it is still there (status 0), then collect it
kill -USR1 "$busy" 2>/dev/null
wait "$busy"
reader=$?
diag "a's new task exited with $status, the reader with $reader"
is "$(kills)" "$((k0 + 1))" "a's own references still count: reclaim failed, one kill"
is "$reader" 137 "the victim is the reader, a's largest task"
is "$status" 0 "then F's pages could go, and the new task got its pages"
# @cm-end own

# @cm-begin settle
echo 9223372036854775807 >/container/a/memory.limit
remount
drain_cpus
is "$(usage a):$(usage b)" 0:0 "everything given back"
# @cm-end settle

done_testing
