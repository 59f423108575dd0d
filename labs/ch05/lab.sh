#!/bin/sh
# Lab 5: task migration.  An mm follows its thread-group leader: when the
# leader moves to another container, the pages the process brings into
# use from then on are charged there.  Pages charged before the move
# stay where they were.  A thread moved without its leader moves nothing.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 25

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
within $(($(usage b) - b2)) 256 4 "the leader moved: its new pages charge b"
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

ok "rmdir a and b" rmdir /container/a /container/b
done_testing
