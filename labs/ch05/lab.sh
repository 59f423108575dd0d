#!/bin/sh
# Lab 5: task migration.  An mm follows its thread-group leader: when the
# leader moves to another container, the pages the process brings into
# use from then on are charged there.  Pages charged before the move
# stay where they were.  A thread moved without its leader moves nothing.
# timeout: 150
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 32

# @cm-begin helpers
# usage and in_c come from lib.sh.
install_in_c
mkdir -p /tmp/o

# grow OUT PID K: tell cm-grow (output in OUT) to touch its pages again,
# and wait for its report of step K (see stepped).
grow() {
	kill -USR1 "$2" && stepped "$1" "$3"
}

# stepped OUT K: wait (10 s at most) until OUT reports step K.
stepped() {
	_i=0
	while ! grep -q "step=$2 touched=" "$1"; do
		_i=$((_i + 1))
		[ $_i -gt 1000 ] && { echo "stepped: no step $2 in $1" >&2; return 1; }
		usleep 10000
	done
}

# stop PID: end cm-grow (SIGUSR1 means "grow" to it, SIGTERM "exit").
stop() {
	kill -TERM "$1" && wait "$1"
}

# settle: remove the output files (tmpfs pages, charged to the container
# the program was in when it first wrote them) and drain the batches.
settle() {
	rm -f /tmp/o/*
	drain_cpus
}

# in_tasks C ID: is ID listed in container C's "tasks" file?
in_tasks() { grep -qx "$2" "/container/${1:+$1/}tasks"; }
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
mkdir /container/a /container/b

# @cm-begin thread
# cm-grow's second thread touches 256 pages per step.  Move that thread
# alone to b: the mm stays with the leader, in a.
ok "cm-grow starts in a" start_held /tmp/o/g.out in_c a cm-grow 256 --thread
pid=$HELD_PID
tid=$(report_field /tmp/o/g.out tid)
diag "cm-grow: leader $pid, toucher thread $tid"
a0=$(usage a)
grow /tmp/o/g.out "$pid" 1
within $(($(usage a) - a0)) 256 4 "step 1 in a: 256 pages charged to a (+/-4: thread stack)"
echo "$tid" >/container/b/tasks
ok "the thread alone is in b" in_tasks b "$tid"
ok "its leader is still in a" in_tasks a "$pid"
a1=$(usage a)
b1=$(usage b)
grow /tmp/o/g.out "$pid" 2
within $(($(usage a) - a1)) 256 4 "a thread moved without its leader: a still pays"
is "$(($(usage b) - b1))" 0 "and b pays nothing"
# @cm-end thread

# @cm-begin leader
# Now move the leader, alone, through "tasks".  Its mm moves with it:
# new pages charge b.  The 512 pages touched in a stay charged to a.
echo "$pid" >/container/b/tasks
ok "the leader is in b" in_tasks b "$pid"
a2=$(usage a)
b2=$(usage b)
grow /tmp/o/g.out "$pid" 3
points 11
within $(($(usage b) - b2)) 256 4 "the leader moved: its new pages charge b"
points 11
within $(($(usage a) - a2)) 0 4 "and a keeps what it was charged before"
atleast "$(usage a)" 512 "a still holds the 512 pages of steps 1 and 2"
# @cm-end leader

# @cm-begin procs
# "cgroup.procs" moves a whole thread group at once; "tasks" one thread.
echo "$pid" >/container/a/cgroup.procs
ok "cgroup.procs moved the leader back to a" in_tasks a "$pid"
ok "and the thread with it" in_tasks a "$tid"
is "$(cat /container/b/tasks)" "" "b has no task left"
a3=$(usage a)
b3=$(usage b)
grow /tmp/o/g.out "$pid" 4
within $(($(usage a) - a3)) 256 4 "moved back: new pages charge a again"
is "$(($(usage b) - b3))" 0 "b keeps its 256 pages and gets no more"
stop "$HELD_PID"
settle
is "$(usage a):$(usage b)" 0:0 "cm-grow exited: every charge given back, to the right container"
# @cm-end procs

# @cm-begin race
# Moves racing with faults.  A reader of mm->mem_container may read the
# pointer just as a move drops the old container's reference; it must
# retry, not revive the old container.  200 moves back and forth, each
# made while a step of 16 pages is in flight, must leave the books
# balanced (and the debug kernel's KASAN and lockdep quiet).
ok "cm-grow starts in a" start_held /tmp/o/r.out in_c a cm-grow 16
pid=$HELD_PID
sum0=$(($(usage a) + $(usage b)))
k=0
while [ $k -lt 200 ]; do
	k=$((k + 1))
	kill -USR1 "$pid"
	if [ $((k % 2)) = 1 ]; then to=b; else to=a; fi
	echo "$pid" >/container/$to/cgroup.procs
	stepped /tmp/o/r.out $k || break
done
diag "after $k steps: a=$(usage a) b=$(usage b)"
within $(($(usage a) + $(usage b) - sum0)) 3200 8 \
	"200 steps of 16 pages: 3200 pages charged to a and b together (+/-8: stack)"
stop "$HELD_PID"
settle
is "$(usage a):$(usage b)" 0:0 "all of them given back"
# @cm-end race

# @cm-begin removed
# A task moved out of a container that is then removed runs on.  First
# the ordinary case: the leader moves to the root and takes its mm.  Then
# the leader exits before the move: the cgroup core does not move an
# exiting task, so the mm stays with c, which is then removed.  Either
# way c's limit of 64 pages must not stop a 256-page step.
mkdir /container/c
echo 64 >/container/c/memory.limit
ok "cm-grow starts in c" start_held /tmp/o/c.out in_c c cm-grow 256
echo "$HELD_PID" >/container/cgroup.procs
rmdir /container/c
ok "moved out, c removed: a 256-page step succeeds" grow /tmp/o/c.out "$HELD_PID" 1
stop "$HELD_PID"

mkdir /container/c
echo 64 >/container/c/memory.limit
start_held /tmp/o/z.out in_c c cm-grow 256 --thread --exit-leader
echo "$HELD_PID" >/container/cgroup.procs
ok "with the leader exited, c is removed" rmdir /container/c
ok "and the orphaned mm still grows by 256 pages" grow /tmp/o/z.out "$HELD_PID" 1
stop "$HELD_PID"
# @cm-end removed

# @cm-begin race-fork
# A new mm is charged to the container of the task that makes it, read
# in mm_init(): the parent's in fork(), the task's own at the start of
# execve().  Where the task lives is settled later: in cgroup_post_fork(),
# or by a move that lands before exec_mmap() puts the new mm in place.
# A move in between would leave the task in one container and its pages
# charged to the other.  cm-race forks while a second thread moves the
# parent between ra and rb as fast as it can, or moves each exec'ing
# child to rb in the middle of its execve(); then it kills the children
# one by one and checks that each one's pages come back to the
# container the child is in.
mkdir /container/ra /container/rb

# race MODE N PAGES WHAT: run cm-race MODE between ra and rb.  No child
# may be charged to the wrong container, nor leave an unclear account;
# on a failure, every child's line goes into the TAP as a comment.
race() {
	cm-race "$1" "$2" "$3" /container/ra /container/rb >/tmp/o/race.out 2>&1
	_sum=$(sed -n "s/^cm-race: mode=$1 //p" /tmp/o/race.out)
	diag "cm-race $1: $(report_field /tmp/o/race.out moves) moves; $_sum"
	[ "$_sum" = "children=$2 wrong=0 unclear=0" ] ||
		sed 's/^/#   /' /tmp/o/race.out
	is "$_sum" "children=$2 wrong=0 unclear=0" "$4"
	rm -f /tmp/o/race.out
}
points 11
race fork 24 64 "24 forks while the parent moves: each child pays where it is"
points 11
race exec 20 64 "20 execs moved halfway: each child pays where it is"
# @cm-end race-fork

# @cm-begin race-oom
# The container OOM killer (chapter 7) chooses among the tasks whose mm
# is charged to the container, and each of them must be a task of the
# container.  After a fork race, with the children still there, a hog
# in ra that may not be killed itself (oom_score_adj -1000) asks for
# 4096 pages with ra's limit at its usage: the OOM killer kills until
# nothing in ra is left to kill.  (The hog runs before the limit is set:
# execve() into a full container fails.)

# among LIST WORDS...: LIST has words, and every one is one of WORDS.
among() {
	_list=$1
	shift
	[ -n "$_list" ] || return 1
	for _w in $_list; do
		case " $* " in *" $_w "*) ;; *) return 1 ;; esac
	done
}

# nothing_to_kill: how many times an OOM killer found nothing to kill.
nothing_to_kill() {
	dmesg | grep -c 'Out of memory and no killable processes'
}

if [ "$(kernel_chapter)" -ge 7 ]; then
	start_held /tmp/o/hold.out \
		cm-race fork 24 64 /container/ra /container/rb --hold
	race=$HELD_PID
	start_held /tmp/o/hog.out sh -c \
		'echo -1000 >/proc/self/oom_score_adj && exec in_c ra cm-grow 4096'
	hog=$HELD_PID
	tasks=$(cat /container/ra/cgroup.procs)
	k0=$(kills)
	n0=$(nothing_to_kill)
	usage ra >/container/ra/memory.limit
	kill -USR1 "$hog"
	i=0
	while [ "$(nothing_to_kill)" = "$n0" ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		usleep 100000
	done
	victims=$(dmesg |
		sed -n 's/.*Memory container out of memory: Killed process \([0-9]*\).*/\1/p' |
		tail -n +$((k0 + 1)))
	diag "tasks of ra: $(echo $tasks)"
	diag "killed: $(echo $victims)"
	ok "every task the OOM killer of ra killed was a task of ra" \
		among "$victims" $tasks
	echo 9223372036854775807 >/container/ra/memory.limit
	stepped /tmp/o/hog.out 1
	stop "$hog"
	release "$race"		# its children the OOM killer took are "gone"
else
	skip "every task the OOM killer of ra killed was a task of ra" \
		"chapter $(kernel_chapter) kernel: no container OOM killer yet (chapter 7)"
fi
# @cm-end race-oom

rm -f /tmp/o/*
drain_cpus
is "$(usage ra):$(usage rb)" 0:0 "all the children gone: ra and rb are back to 0"
ok "rmdir ra and rb" rmdir /container/ra /container/rb

ok "rmdir a and b" rmdir /container/a /container/b

# @cm-begin cpuset
# exec() points its new mm at the task's container under
# cgroup_threadgroup_rwsem (mem_container_exec_mm()).  A move between
# cpusets holds that rwsem for writing, then takes the moved process's
# mmap_lock to rebind its NUMA policies (cpuset_attach()).  So exec must
# not take the rwsem while it holds an mmap_lock: a vfork() child that
# execs holds its parent's until the new mm is in, and a mover of the
# parent would wait for it while the child waits for the mover.  The
# shell moves a process that vforks and execs 2000 times between two
# cpusets as fast as it can: the process must finish, and on the debug
# kernel lockdep must find no cycle.  (On the debug kernel 300 times:
# lockdep names the cycle the first time both orders are taken, and
# each exec there costs some 20 times as much.)
mkdir -p /cpuset
ok "the cpuset controller mounts" mount -t cgroup -o cpuset none /cpuset
for c in ca cb; do
	mkdir /cpuset/$c
	cat /cpuset/cpuset.cpus >/cpuset/$c/cpuset.cpus
	cat /cpuset/cpuset.mems >/cpuset/$c/cpuset.mems
done
vforks=2000
[ "$(kernel_flavour)" = debug ] && vforks=300
cm-fork-loop $vforks --vfork >/tmp/o/vf.out 2>&1 &
vf=$!
moves=0
while kill -0 "$vf" 2>/dev/null && [ $moves -lt 20000 ]; do
	echo "$vf" >/cpuset/ca/tasks 2>/dev/null
	echo "$vf" >/cpuset/cb/tasks 2>/dev/null
	moves=$((moves + 2))
done
wait_within 30 "$vf"
is "$?" 0 "$vforks vfork()+exec()s, moved between cpusets $moves times, finish"
rmdir /cpuset/ca /cpuset/cb
# @cm-end cpuset
done_testing
