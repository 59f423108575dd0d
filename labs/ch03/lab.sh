#!/bin/sh
# Lab 3: accounting setup.  Every mm_struct now holds a reference on the
# memory container of the task that created it, and drops it only when
# the mm_struct itself is freed.  Nothing is charged yet.
#
# The reference is invisible while the task lives, so the lab keeps an
# mm_struct alive after its task has gone: an open /proc/PID/mem holds
# the mm_struct (not its pages) until it is closed.  The container is
# removed in between; the cgroup core frees a removed cgroup only when
# the last reference on it goes, and /proc/cgroups counts it until then.
# timeout: 60
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 16

# @cm-begin helpers
# num_cgroups: how many cgroups the "memory" hierarchy has, removed ones
# still referenced included (third column of /proc/cgroups).
num_cgroups() {
	awk '$1 == "memory" { print $3 }' /proc/cgroups
}

# settles WANT: wait up to 5 s for num_cgroups to reach WANT (the final
# put frees the cgroup from a workqueue, after an RCU grace period).
settles() {
	drain_cpus
	_i=0
	while [ "$(num_cgroups)" != "$1" ] && [ $_i -lt 50 ]; do
		usleep 100000
		_i=$((_i + 1))
	done
	[ "$(num_cgroups)" = "$1" ]
}
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
is "$(num_cgroups)" 1 "the hierarchy starts with the root cgroup alone"

# @cm-begin exec
# exec: cm-anon's mm_struct is made by exec, inside container "a".
mkdir /container/a
is "$(num_cgroups)" 2 "mkdir a: two cgroups"
ok "cm-anon runs in container a" start_held /tmp/a.out \
	sh -c 'echo $$ >/container/a/tasks && exec cm-anon 16 --hold'
pid=$HELD_PID
exec 3</proc/$pid/mem		# pin cm-anon's mm_struct
release "$pid"
rm /tmp/a.out	# from chapter 4 on, its tmpfs page is charged to a
is "$(cat /container/a/tasks)" "" "cm-anon has exited: a has no task"
ok "rmdir a succeeds (6.1 checks tasks, not references)" rmdir /container/a
usleep 500000
points 11
is "$(num_cgroups)" 2 "a is still counted: the dead task's mm holds it"
exec 3<&-			# the last reference on the mm_struct goes
ok "closing /proc/PID/mem frees the mm, and then a" settles 1
# @cm-end exec

# @cm-begin fork
# fork: a subshell is a plain fork of a shell in container "b", with no
# exec, so its mm_struct comes from dup_mm().  In 6.1 the child joins
# its cgroup only after dup_mm(), so the container must come from the
# parent; looked up from the child (as in 2007) it would be the root,
# and nothing would hold b.
mkdir /container/b
mkfifo /tmp/fifo
sh -c 'echo $$ >/container/b/tasks
	(read -r line </tmp/fifo) &
	echo $! >/tmp/child
	wait' &
parent=$!
i=0
while [ ! -s /tmp/child ] && [ $i -lt 100 ]; do usleep 50000; i=$((i + 1)); done
child=$(cat /tmp/child)
is "$(grep -c "^$child\$" /container/b/tasks)" 1 "the forked subshell is in b"
exec 3</proc/$child/mem		# pin the subshell's mm_struct
echo go >/tmp/fifo		# let it exit, and its parent with it
wait "$parent"
rm /tmp/child	# written from b, like /tmp/a.out above
ok "rmdir b succeeds once both have exited" rmdir /container/b
usleep 500000
points 11
is "$(num_cgroups)" 2 "b is still counted: the forked mm holds it"
exec 3<&-
ok "closing /proc/PID/mem frees the forked mm, and then b" settles 1
# @cm-end fork

# @cm-begin uncharged
# Nothing is charged yet.  Chapter 4 adds the charges: on its kernel and
# later ones, lab 4 checks the numbers instead.
mkdir /container/c
echo $$ >/container/c/tasks
cm-anon 256 >/dev/null
dd if=/dev/zero of=/tmp/file bs=4096 count=64 2>/dev/null
cm-file /tmp/file --read >/dev/null
echo $$ >/container/tasks
if [ "$(kernel_chapter)" -ge 4 ]; then
	why="this kernel charges pages: lab 4 checks usage"
	skip "c's usage stays 0" "$why"
	skip "the root's usage stays 0" "$why"
else
	is "$(cat /container/c/memory.usage)" 0 \
		"c's usage stays 0 after 256 anon and 64 page-cache pages"
	is "$(cat /container/memory.usage)" 0 "the root's usage stays 0"
fi
is "$(cat /container/c/memory.failcnt)" 0 "and nothing failed to charge"
ok "rmdir c" rmdir /container/c
# @cm-end uncharged

umount /container
done_testing
