#!/bin/sh
# Lab 4: memory accounting.  Pages are charged to the container of the
# mm that brings them into use (anonymous faults, copy-on-write, page
# cache, swap-in) and uncharged when they are freed.  Usage is in pages.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 38

# @cm-begin helpers
# usage C / failcnt C: a container's counters ("" is the root).
usage() { cat "/container/${1:+$1/}memory.usage"; }
failcnt() { cat "/container/${1:+$1/}memory.failcnt"; }

# in_c C CMD...: run CMD inside container C.  A small script joins C and
# then execs CMD, so CMD's mm_struct is made in C (exec makes a new one),
# and CMD keeps the script's pid (start_held and release rely on that).
mkdir -p /tmp/bin
cat >/tmp/bin/in_c <<'END'
#!/bin/sh
echo $$ >"/container/$1/tasks" && shift && exec "$@"
END
chmod +x /tmp/bin/in_c
PATH=/tmp/bin:$PATH

# settle: remove the programs' output files (tmpfs pages, charged to the
# container of the program that wrote them), drain the batches, then
# drop the clean page cache.
settle() {
	rm -f /tmp/o/*
	drain_cpus
	drop_caches
}
mkdir -p /tmp/o
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "32 MiB of zram swap" zram_swap 32
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
dd if=/dev/zero of=/mnt/f256 bs=4096 count=256 2>/dev/null
dd if=/dev/zero of=/mnt/f64 bs=4096 count=64 2>/dev/null
mkdir /container/a /container/b
settle
is "$(usage a)" 0 "a new container starts at 0"

# @cm-begin anon
# Anonymous pages.  cm-anon also charges its own stack and data pages,
# so compare a 257-page run with a 1-page run.  Page tables are not
# charged.  Every page is freed when the program exits.
start_held /tmp/o/one.out in_c a cm-anon 1 --hold
one=$(usage a)
release "$HELD_PID"
diag "cm-anon touching 1 page: usage $one (the rest is its stack and data)"
settle
is "$(usage a)" 0 "cm-anon exited: usage back to 0"
ok "cm-anon holds 257 pages in a" start_held /tmp/o/anon.out in_c a cm-anon 257 --hold
within "$(($(usage a) - one))" 256 4 \
	"usage grew by 256 pages over the 1-page run (stack placement: +/-4)"
release "$HELD_PID"
settle
is "$(usage a)" 0 "exit gives all of them back"
# @cm-end anon

# @cm-begin cow
# Copy-on-write: the writer pays.  The parent shell's pages are charged
# to a (its mm was made there); it then moves to b and forks.  The child
# is in b, and the pages it writes (its stack, the shell's data) are
# copies charged to b, not to a.
mkfifo /tmp/fifo
in_c a sh -c 'echo $$ >/container/b/tasks
	(read -r line </tmp/fifo; echo "$line" >/dev/null) &
	echo $! >/tmp/child
	wait' &
parent=$!
i=0
while [ ! -s /tmp/child ] && [ $i -lt 100 ]; do usleep 50000; i=$((i + 1)); done
b_cow=$(usage b)
diag "after the fork: a=$(usage a) b=$b_cow"
atleast "$b_cow" 1 "the forked child's copied pages are charged to b"
echo go >/tmp/fifo
wait "$parent"
rm -f /tmp/child
settle
is "$(usage a):$(usage b)" 0:0 "both exited: a and b back to 0"
# @cm-end cow

# @cm-begin mapped
# A file mapping: the fault reads the file into the page cache, and the
# page cache is charged to the faulting mm's container.
ok "cm-file maps /mnt/f256 in a" \
	start_held /tmp/o/map.out in_c a cm-file /mnt/f256 --mmap --hold
mapped=$(usage a)
diag "usage with the file mapped: $mapped"
atleast "$mapped" 256 "a pays for the 256 file pages"
atleast $((256 + one + 8)) "$mapped" \
	"plus only its own pages ($one for cm-anon) and ext2 metadata (8)"
# First touch wins: b reads the same pages, already in the cache and
# charged to a.  b pays nothing, and a pays no more.
in_c b cm-file /mnt/f256 --read >/dev/null
drain_cpus
is "$(usage b)" 0 "b reading a's cached pages is not charged"
within "$(usage a)" "$mapped" 2 "and a's charge does not change"
release "$HELD_PID"
settle
is "$(usage a)" 0 "unmapped and dropped from the cache: back to 0"
# @cm-end mapped

# @cm-begin cache
# Page cache without a mapping: read(2) charges the reader, and the
# charge stays after the reader exits, as long as the pages are cached.
in_c a cm-file /mnt/f256 --read >/dev/null
drain_cpus
cached=$(usage a)
within "$cached" 258 2 "the 256 cached pages stay charged to a (+ 0..4 ext2 metadata)"
settle
is "$(usage a)" 0 "drop_caches takes the pages, and the charge, away"
# @cm-end cache


# @cm-begin enomem
# Over the limit, with no reclaim yet: the charge fails.  A read(2) that
# cannot charge its first page returns ENOMEM, and failcnt counts every
# failed charge (readahead's included).
#
# The program then needs more pages of its own (stack, for printing the
# error), and those faults fail too; they are retried until a charge
# succeeds (see below).  Lifting the limit lets the program finish.
echo 64 >/container/a/memory.limit
in_c a cm-file /mnt/f256 --read >/tmp/o/read.out 2>/tmp/o/read.err &
reader=$!
i=0
# A few failed readahead charges come first; then the stuck fault makes
# failcnt race up.  Wait for that.
while [ "$(failcnt a)" -lt 2000 ] && [ $i -lt 200 ]; do
	usleep 100000
	i=$((i + 1))
done
atleast "$(failcnt a)" 2000 "failcnt counts every failed charge"
atleast 64 "$(usage a)" "usage never passed the limit"
echo 9223372036854775807 >/container/a/memory.limit
wait "$reader"
is "$?" 1 "cm-file fails over a 64-page limit"
ok "read(2) failed with ENOMEM" grep -q "errno=ENOMEM from read" /tmp/o/read.err
settle
is "$(usage a)" 0 "the reader's pages are given back"
# @cm-end enomem

# @cm-begin fault-oom
# An anonymous fault over the limit returns VM_FAULT_OOM.  6.1's fault
# handler does not kill anyone for it: it retries the fault, forever, and
# each retry is one more failed charge.  The task is stuck, but a fatal
# signal ends it.  Chapters 6 (reclaim) and 7 (OOM) deal with this.
echo 64 >/container/a/memory.limit
in_c a cm-anon 256 >/dev/null 2>&1 &
hog=$!
sleep 2
f1=$(failcnt a)
sleep 2
f2=$(failcnt a)
diag "failcnt $f1, two seconds later $f2"
atleast "$((f2 - f1))" 1 "the stuck fault keeps failing: failcnt climbs"
ok "the task is still alive" kill -0 "$hog"
atleast 64 "$(usage a)" "and usage stays within the limit"
kill -KILL "$hog"
wait "$hog"
is "$?" 137 "SIGKILL ends it"
echo 9223372036854775807 >/container/a/memory.limit
settle
is "$(usage a)" 0 "its pages are given back"
# @cm-end fault-oom

# @cm-begin leak
# No leaked charge: thousands of forks, execs and exits, and a mixed
# anonymous + page-cache workload, leave a's usage where it began.
root0=$(usage)
in_c a cm-fork-loop 2000 4 >/tmp/o/fork.out
is "$(report_field /tmp/o/fork.out failures)" 0 "2000 fork/touch/exit rounds in a"
in_c a cm-fork-loop 1000 4 --exec >/tmp/o/exec.out
is "$(report_field /tmp/o/exec.out failures)" 0 "1000 fork/exec/exit rounds in a"
in_c a sh -c 'i=0; while [ $i -lt 1000 ]; do
	cm-anon 32 >/dev/null; cm-file /mnt/f64 --read >/dev/null
	echo 1 >/proc/sys/vm/drop_caches; i=$((i + 1)); done'
settle
is "$(usage a)" 0 "a's usage is back to 0: no charge leaked"
is "$(failcnt b)" 0 "b never failed a charge"
diag "root usage: $root0 before, $(usage) after"
# @cm-end leak

# @cm-begin swap
# Swap.  a writes a 2048-page tmpfs file (shmem, charged to a).  A hog
# in the root pushes it out to zram swap: a page written to swap is freed
# and uncharged.  Then b reads the file back: the pages come in through
# the swap cache and are charged to b, the reader.
# page-cluster 0: swap-in reads only the page asked for, no neighbours
# (readahead would charge the reader for other owners' swapped pages).
echo 0 >/proc/sys/vm/page-cluster
mkdir -p /shm && mount -t tmpfs -o size=16m tmpfs /shm
# (dd is a busybox applet that runs inside the shell: wrap it in sh -c
# so that it runs in an mm made in a)
in_c a sh -c 'dd if=/dev/zero of=/shm/file bs=4096 count=2048 2>/dev/null'
drain_cpus
is "$(usage a)" 2048 "a pays for its 2048 tmpfs pages"
hog=$(($(meminfo MemFree) / 4 + 4096))
cm-anon "$hog" >/dev/null
# The hog pushed out much else, the programs in the (tmpfs) initramfs
# too.  Read them back from the root, or b would pay for swapping in
# the parts of busybox it runs (first touch wins, also for swap-in).
cat /bin/busybox /lab/bin/* >/dev/null
drain_cpus
out=$((2048 - $(usage a)))
diag "the hog ($hog pages) pushed $out of a's tmpfs pages out to swap"
atleast "$out" 256 "swapped out and freed: a's usage fell by at least 256"
b0=$(usage b)
in_c b sh -c 'cat /shm/file >/dev/null'
drain_cpus
diag "after b read the file back: a=$(usage a) b=$(usage b)"
atleast "$(($(usage b) - b0))" "$out" "b pays for the pages it swapped in"
rm /shm/file
umount /shm
settle
is "$(usage a):$(usage b)" 0:0 "file removed: a and b back to 0"
ok "rmdir a and b" rmdir /container/a /container/b
# @cm-end swap

# @cm-begin cost
# What a charged page costs: one record from the meta_page slab cache.
slab=/sys/kernel/slab/meta_page
diag "meta_page: object_size $(cat $slab/object_size) slab_size $(cat $slab/slab_size) objs_per_slab $(cat $slab/objs_per_slab)"
is "$(cat $slab/object_size)" 16 "a record is 16 bytes (two pointers)"
# @cm-end cost

done_testing
