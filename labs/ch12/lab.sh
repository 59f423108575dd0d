#!/bin/sh
# Lab 12: the hierarchy.  A parent's limit binds its whole subtree: a
# child's pages count in every ancestor, reclaim and the OOM killer work
# on the subtree that is full, a delegated mkdir no longer escapes, and
# a removed child's pages still count above it until they go.  Written
# against memcg v1's files only.
# memcg: side by side (make check runs it on the memcg flavour too)
# timeout: 180
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 30

# @cm-begin helpers
install_in_c
mkdir -p /container /tmp/o
ok "the memory controller mounts" mount -t cgroup -o memory none /container
side=$(memcg_side)
diag "side: $side"

# f, wr and pages are lib.sh's (lab 11).  stat C KEY: a line of C's
# memory.stat.
stat() { awk -v k="$2" '$1 == k { print $2 }' "/container/$1/memory.stat"; }

# memcg charges ahead: each CPU's stock holds up to 64 pages charged
# to the last group that charged there (MEMCG_CHARGE_BATCH), and it
# charges some kernel memory of a task (its page tables, for one).  A
# count that the kit gets exact may read that much higher on memcg,
# 2 CPUs x 64 + 32.
if [ $side = kit ]; then slack=0; else slack=160; fi
# @cm-end helpers

ok "ext2 on zram at /mnt" zram_ext2 48 /mnt
dd if=/dev/zero of=/mnt/big bs=4096 count=4096 2>/dev/null
dd if=/dev/zero of=/mnt/f400 bs=4096 count=400 2>/dev/null
remount /mnt

# @cm-begin parent-binds
# p has a limit of 512 pages; its child c has none.  A stream of 4096
# pages through c stays within p's limit, and p's usage holds c's pages.
# (The weights, here and below, go to what only a hierarchy gets right:
# a flat controller passes the points worth 1 too.)
mkdir -p /container/p/c
wr p limit_in_bytes 2M >/dev/null
in_c p/c cat /mnt/big >/dev/null
is "$?" 0 "a 4096-page stream through p/c succeeds"
points 6
within "$(pages p)" 384 128 "p's usage is 256 to 512 pages, the stream's: $(pages p)"
points 2
atleast "$(pages p)" "$(pages p/c)" "and holds c's $(pages p/c) pages"
atleast "$(pages p/c)" 256 "c's pages are most of it"
is "$(( $(stat p/c hierarchical_memory_limit) / 4096 ))" 512 \
	"c's hierarchical_memory_limit is p's"
# @cm-end parent-binds

# @cm-begin siblings
# Two siblings under one 512-page parent share it: d's stream makes
# room by reclaiming c's pages, which are in the same subtree.
mkdir /container/p/d
in_c p/d cat /mnt/big >/dev/null
points 4
atleast 512 "$(( $(pages p/c) + $(pages p/d) ))" \
	"c and d together stay within p: $(pages p/c) + $(pages p/d)"
atleast "$(pages p/d)" 128 "d got room by reclaim in c: $(pages p/d)"
# memcg folds its per-CPU statistics lazily (up to 64 events per CPU
# may wait): its sum may read up to 128 pages short on two CPUs.
tc=$(( $(stat p total_cache) / 4096 )) cd=$(( $(pages p/c) + $(pages p/d) ))
if [ $side = kit ]; then short=8; else short=$((8 + 128)); fi
atleast "$tc" "$((cd - short))" "p's total_cache counts its children's cache: $tc of $cd"
# @cm-end siblings

# @cm-begin move
# A task moved from c to d leaves its pages charged to c (chapter 5's
# rule): p, above both, sees no change.
start_held /tmp/o/mv.out in_c p/c cm-alloc anon 100 --hold
mv=$HELD_PID
c0=$(pages p/c) d0=$(pages p/d) p0=$(pages p)
echo "$mv" >/container/p/d/tasks
is "$(pages p/c):$(pages p/d):$(pages p)" "$c0:$d0:$p0" \
	"a move from c to d: c keeps its pages, p is unchanged"
release "$mv"
# @cm-end move

# @cm-begin oom
# No swap.  A task of c asks for more than p allows: the OOM killer
# picks in p's subtree, never the larger task outside it.
start_held /tmp/o/big.out cm-alloc anon 2048 --hold
big=$HELD_PID
in_c p/c cm-alloc anon 1024 >/dev/null 2>&1
points 6
is "$?" 137 "1024 anon pages in p/c, p limited to 512: killed"
ok "the 2048-page task outside survives" kill -0 "$big"
release "$big"
# @cm-end oom

# @cm-begin oom-quiet
# u (256 pages) has a child u/v.  A task in u/v with oom_score_adj
# -1000 asks for 300 pages: u's OOM killer finds nobody it may kill, and
# stays quiet for a while (chapter 7: 10 s, so that the stuck task's
# retries do not each print a report), while the task retries.  Then a
# killable task comes into u/v and asks for 100 pages.  A task coming in
# ends the quiet period of every container above it, u included, the
# one that refused: the newcomer is killed at once.  (The first version
# of this chapter's patch ended it for u/v only, and the newcomer waited
# out u's quiet period, 8 s here.)
mkdir -p /container/u/v
wr u limit_in_bytes 1M >/dev/null
(echo -1000 >/proc/self/oom_score_adj && exec in_c u/v cm-anon 300 >/dev/null) &
stuck=$!
sleep 2
t0=$(date +%s)
in_c u/v cm-alloc anon 100 >/dev/null 2>&1
rc=$? t=$(( $(date +%s) - t0 ))
points 2
is "$rc" 137 "a newcomer to u/v, over u's limit beside an unkillable task: killed"
points 3
atleast 5 "$t" "at once, not after u's quiet period: in $t s"
wr u limit_in_bytes -1 >/dev/null
wait_within 20 "$stuck"
is "$?" 0 "the unkillable task finishes once u's limit is raised"
# @cm-end oom-quiet

# @cm-begin delegation
# A container made inside p cannot leave p's limit behind.
mkdir /container/p/c/escape
wr p/c/escape limit_in_bytes -1 >/dev/null
in_c p/c/escape cm-alloc anon 1024 >/dev/null 2>&1
points 4
is "$?" 137 "a task in p/c/escape, no limit of its own: still killed at p's"
# @cm-end delegation

# @cm-begin control-type
# memory.control_type (chapter 8) is the kit's own file, so these points
# run on the kit only.  Delegation as in v1: the administrator hands
# uid 65534 the directory of t (limit 256 pages) and its tasks file.
# The user makes t/u, whose files are then its own, and asks it to
# charge mapped pages only: under a t that charges page cache, refused,
# or the tmpfs pages a task of t/u writes would be charged to no counter
# and t's limit would bind nothing.  A 3 written to a parent reaches its
# subtree; a new child takes its parent's type.
if [ $side = kit ]; then
	mkdir -p /container/t /tmp/o/u
	chmod 777 /tmp/o/u
	wr t limit_in_bytes 1M >/dev/null
	chown 65534 /container/t /container/t/tasks
	cm-runas 65534 mkdir /container/t/u
	points 4
	is "$(cm-runas 65534 cm-write /container/t/u/memory.control_type 1 |
		cut -d' ' -f1)" errno=EINVAL \
		"uid 65534 cannot make its t/u charge mapped pages only"
	is "$(f t/u control_type)" 3 "t/u still charges page cache (type 3)"
	cm-runas 65534 in_c t/u dd if=/dev/zero of=/tmp/o/u/fill bs=4096 \
		count=128 2>/dev/null
	points 4
	atleast "$(pages t)" 120 "128 tmpfs pages written in t/u count in t: $(pages t)"
	rm -rf /tmp/o/u
	wr t control_type 1 >/dev/null
	mkdir /container/t/v
	is "$(f t/v control_type)" 1 "t/v, made under a type-1 t, is type 1"
	wr t control_type 3 >/dev/null
	is "$(f t/v control_type):$(f t/u control_type)" 3:3 \
		"3 written to t reaches t/v and t/u"
else
	skip_n 5 "memcg has no memory.control_type"
fi
# @cm-end control-type

# @cm-begin removed-child
# r (512 pages) has a child x that read 400 pages of a file and was
# removed.  Its pages are still charged: they count in r until reclaim
# frees them, and r's reclaim must be able to reach them.  Without
# swap, 300 anonymous pages in r's other child fit only if it does.
mkdir -p /container/r/x /container/r/y
wr r limit_in_bytes 2M >/dev/null
in_c r/x cat /mnt/f400 >/dev/null
x=$(pages r/x)
ok "r/x, which read 400 pages ($x charged), is removed" rmdir /container/r/x
points 3
atleast "$(pages r)" "$((x - 8))" "r still counts its $x pages: $(pages r)"
in_c r/y cm-alloc anon 300 >/dev/null 2>&1
points 2
is "$?" 0 "300 anon pages fit in r/y: r's reclaim reached the removed child"
# @cm-end removed-child

# @cm-begin deep
# Depth 8: a charge counts at every level, an uncharge leaves nothing.
path=q
for i in 1 2 3 4 5 6 7; do path=$path/l$i; done
mkdir -p "/container/$path"
start_held /tmp/o/deep.out in_c "$path" cm-alloc anon 256 --hold
deep=$HELD_PID
u=$(pages "$path")
low=
p2=$path
while [ -n "$p2" ]; do
	[ "$(pages "$p2")" -ge "$u" ] || low="$low $p2"
	case $p2 in */*) p2=${p2%/*} ;; *) p2= ;; esac
done
atleast "$u" 256 "a task 8 levels down charges $u pages there"
points 4
is "${low:-none}" none "and every level above counts them (levels short:)"
release "$deep"
# its output file is a tmpfs page it charged to q/l1/.../l7
rm -f /tmp/o/deep.out
drain_cpus
atleast "$slack" "$(pages q)" "it exits: all 8 levels back to 0 (at most $slack): $(pages q)"
# @cm-end deep

# @cm-begin use-hierarchy
# 6.1 has the hierarchical mode only, and so has the kit now.  (Last,
# so that on chapter 11's kernel the lab fails first at a page count,
# not at this file.)
is "$(f "" use_hierarchy):$(wr "" use_hierarchy 0):$(wr "" use_hierarchy 1)" \
	"1:errno=EINVAL:ok" "use_hierarchy reads 1, refuses 0, takes 1"
# @cm-end use-hierarchy

# @cm-begin teardown
# Bottom-up removal: each rmdir works, and what the tree held goes.
rm -f /tmp/o/*
remount /mnt
drain_cpus
for c in p/c/escape p/c p/d p r/y r; do
	wr "$c" force_empty 1 >/dev/null
done
[ $side = kit ] && rmdir /container/t/u /container/t/v /container/t
rmdir /container/u/v /container/u
ok "the tree is removed bottom-up" sh -c 'cd /container &&
	rmdir p/c/escape p/c p/d p r/y r q/l1/l2/l3/l4/l5/l6/l7 \
		q/l1/l2/l3/l4/l5/l6 q/l1/l2/l3/l4/l5 q/l1/l2/l3/l4 q/l1/l2/l3 \
		q/l1/l2 q/l1 q'
# @cm-end teardown

done_testing
