#!/bin/sh
# Lab 14: one set of lists.  A container's pages are on its own lruvec of
# each node, and nowhere else: memory.numa_stat counts them node by
# node, reclaim on one node takes pages from that node only, global
# reclaim takes from each container in proportion to its size, and a
# removed container's lruvec is still reached.  The guest boots with
# numa=fake=2: two nodes of 128 MiB.  Written against memcg v1's files.
# memcg: side by side (make check runs it on the memcg flavour too)
# timeout: 180
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 24

# @cm-begin helpers
install_in_c
mkdir -p /container /tmp/o
ok "the memory controller mounts" mount -t cgroup -o memory none /container
side=$(memcg_side)
diag "side: $side"
ok "32 MiB of zram swap" zram_swap 32

# numa C KEY NODE: a number from C's memory.numa_stat: KEY is a line
# (total, file, anon, unevictable, hierarchical_total, ...), NODE is
# "" for the line's total or N0, N1 for a node's pages.  "none" if
# there is no such number (a point that wants one then fails, and the
# shell's arithmetic reads the word as an unset variable, 0).
numa() {
	[ -r "/container/${1:+$1/}memory.numa_stat" ] || { echo none; return; }
	awk -v k="$2" -v n="$3" 'BEGIN { v = "none" } {
		split($1, kv, "=")
		if (kv[1] != k) next
		if (n == "") { v = kv[2]; exit }
		for (i = 2; i <= NF; i++) {
			split($i, nv, "=")
			if (nv[1] == n) { v = nv[2]; exit }
		}
	} END { print v }' "/container/${1:+$1/}memory.numa_stat"
}
# node_free N: node N's free pages
node_free() {
	awk '$3 == "MemFree:" { print int($4 / 4) }' \
		"/sys/devices/system/node/node$1/meminfo"
}
# num_cgroups: the memory hierarchy's cgroups, removed ones still held
num_cgroups() { awk '$1 == "memory" { print $3 }' /proc/cgroups; }
# @cm-end helpers

is "$(cat /sys/devices/system/node/online)" 0-1 "the guest has two nodes (numa=fake=2)"
ok "ext2 on zram at /mnt" zram_ext2 48 /mnt
dd if=/dev/zero of=/mnt/f4096 bs=4096 count=4096 2>/dev/null
dd if=/dev/zero of=/mnt/f3000 bs=4096 count=3000 2>/dev/null
dd if=/dev/zero of=/mnt/f1000 bs=4096 count=1000 2>/dev/null
dd if=/dev/zero of=/mnt/f256 bs=4096 count=256 2>/dev/null
remount /mnt

# @cm-begin format
# memory.numa_stat: four lines for the container's own lruvecs (all
# lists, file, anon, unevictable) and four for its subtree's, each a
# total and then one N<node>=<pages> per node with memory.
mkdir /container/a
lines=$(grep -cE '^(hierarchical_)?(total|file|anon|unevictable)=[0-9]+ N0=[0-9]+ N1=[0-9]+$' \
	/container/a/memory.numa_stat)
points 4
is "$lines" 8 "numa_stat has memcg v1's eight lines, N0 and N1 on each"
# @cm-end format

# @cm-begin per-node
# Two tasks of a, one bound to each node (cm-node, a small wrapper
# around set_mempolicy()), hold 1024 and 512 anonymous pages.  Each
# node's count is the pages held there plus the task's own (its stack
# and data, under 16 pages: lab 4).
ok "a task bound to node 0 holds 1024 pages in a" \
	start_held /tmp/o/n0.out in_c a cm-node 0 cm-anon 1024 --hold
held0=$HELD_PID
ok "a task bound to node 1 holds 512 pages in a" \
	start_held /tmp/o/n1.out in_c a cm-node 1 cm-anon 512 --hold
held1=$HELD_PID
drain_cpus
n0=$(numa a anon N0) n1=$(numa a anon N1)
diag "a's numa_stat: $(tr '\n' ' ' </container/a/memory.numa_stat)"
points 4
between "$n0" 1024 1040 "node 0's lruvec holds the 1024 pages (+ the task's own, < 16)"
points 4
between "$n1" 512 528 "node 1's lruvec holds the 512 pages (+ the task's own, < 16)"
# Every line's total is its nodes' sum, exactly: the file reads each
# lruvec once.
sums=$(grep -q . /container/a/memory.numa_stat 2>/dev/null || echo "(empty)"
	awk '{ s = 0; for (i = 2; i <= NF; i++) { split($i, nv, "="); s += nv[2] }
	split($1, kv, "="); if (s != kv[2]) print $1 }' /container/a/memory.numa_stat 2>&1)
is "$sums" "" "each line's total is the sum of its nodes"
if [ $side = kit ]; then
	# The kit charges nothing but pages on the LRU: at a quiet point
	# (the per-CPU batches drained), usage is what the lists hold.
	points 4
	is "$(pages a)" "$(numa a total)" "a's usage is the pages on a's lruvecs, exactly"
else
	# memcg charges kernel memory too (page tables, for one).
	atleast "$(pages a)" "$(numa a total)" "a's usage is at least the pages on its lruvecs"
fi
# @cm-end per-node

# @cm-begin node-pressure
# b reads a 4096-page file with its memory bound to node 1: the page
# cache goes on b's node-1 lruvec.  A task in the root, bound to node 1
# too, then asks for more than node 1 has free: reclaim on node 1 takes
# b's file pages, and never looks at node 0, where a's 1024 pages stay.
mkdir /container/b
in_c b cm-node 1 cm-file /mnt/f4096 --read >/dev/null
drain_cpus
f1=$(numa b file N1)
diag "b: file pages on node 1: $f1, on node 0: $(numa b file N0)"
between "$f1" 4096 4112 "b's 4096 file pages are on its node-1 lruvec (+ ext2 metadata)"
a0=$(numa a anon N0)
hog=$(($(node_free 1) + 4096))
cm-node 1 cm-anon "$hog" >/dev/null
drain_cpus
diag "after a $hog-page hog on node 1: b file N1=$(numa b file N1); a anon N0=$(numa a anon N0) N1=$(numa a anon N1)"
points 4
atleast "$((f1 - $(numa b file N1)))" 1024 "reclaim on node 1 took at least 1024 of b's pages"
between "$(numa a anon N0)" "$((a0 - 4))" "$a0" "a's node-0 pages were left alone"
release "$held0"
release "$held1"
# @cm-end node-pressure

# @cm-begin proportion
# Global reclaim scans every container's lruvec in proportion to its
# size (get_scan_count(), as memcg's does).  p reads 3000 pages and
# then q reads 1000, both bound to node 0; a hog on node 0 then makes
# room.  On one list for all (the kernels before this chapter), the
# oldest pages go first: p's, all of them before q loses one.  On a
# lruvec each, q loses about a third of what p loses: the lab asks for
# at least a sixth (the hog's own pages and the root's are scanned
# too, and a list's scan is rounded to whole batches of 32).
mkdir /container/p /container/q
in_c p cm-node 0 cm-file /mnt/f3000 --read >/dev/null
in_c q cm-node 0 cm-file /mnt/f1000 --read >/dev/null
drain_cpus
p0=$(pages p) q0=$(pages q)
cm-node 0 cm-anon "$(($(node_free 0) + 1500))" >/dev/null
drain_cpus
lp=$((p0 - $(pages p))) lq=$((q0 - $(pages q)))
diag "p: $p0 -> $(pages p) pages (lost $lp); q: $q0 -> $(pages q) (lost $lq)"
atleast "$lp" 256 "node 0's reclaim took p's pages"
points 6
atleast "$((6 * lq))" "$lp" "and q's, about a third as many: q lost at least a sixth of what p lost"
# @cm-end proportion

# @cm-begin removed
# A removed container's lruvec is still reached.  r, inside s, reads
# 1000 pages and exits; r is removed, but its pages hold it (it is
# still counted in /proc/cgroups).  memory.force_empty then empties s:
# s's reclaim walks its subtree, the removed r included, takes r's
# pages, and r goes with its last page.
mkdir -p /container/s/r
in_c s/r cm-file /mnt/f1000 --read >/dev/null
drain_cpus
n=$(num_cgroups)
ok "rmdir s/r, whose pages are still charged" rmdir /container/s/r
is "$(num_cgroups)" "$n" "r is still counted: its pages hold it"
is "$(wr s force_empty 0)" ok "force_empty on s"
drain_cpus
i=0
while [ "$(num_cgroups)" = "$n" ] && [ $i -lt 50 ]; do
	usleep 100000
	i=$((i + 1))
done
points 4
is "$(num_cgroups)" "$((n - 1))" "s's reclaim emptied the removed r, and r is freed"
# @cm-end removed

# @cm-begin mapped-only
# (The kit only: memcg has no control_type.)  A container that charges
# mapped pages only reads a file: the pages are charged to nobody and
# stay on the root's lruvec.  It maps them: each is charged to it and
# moves to its lruvec.  It unmaps them: the charge goes, and each page
# goes back to the root's lruvec.
if [ $side = kit ]; then
	mkdir /container/m
	echo 1 >/container/m/memory.control_type
	in_c m cm-file /mnt/f256 --read >/dev/null
	drain_cpus
	is "$(pages m):$(numa m file)" 0:0 "m read 256 pages: not charged, not on m's lists"
	ok "m maps the 256 pages" start_held /tmp/o/map.out in_c m cm-file /mnt/f256 --mmap --hold
	drain_cpus
	points 6
	between "$(numa m file)" 256 260 "mapped: the 256 pages moved to m's lruvec"
	release "$HELD_PID"
	drain_cpus
	points 6
	is "$(pages m):$(numa m file)" 0:0 "unmapped: uncharged, and back on the root's lruvec"
else
	skip "m read 256 pages: not charged, not on m's lists" "memcg has no control_type"
	skip "m maps the 256 pages" "memcg has no control_type"
	skip "mapped: the 256 pages moved to m's lruvec" "memcg has no control_type"
	skip "unmapped: uncharged, and back on the root's lruvec" "memcg has no control_type"
fi
# @cm-end mapped-only

done_testing
