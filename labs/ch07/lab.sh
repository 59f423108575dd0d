#!/bin/sh
# Lab 7: container-scoped OOM.  When reclaim cannot make room (anonymous
# pages, no swap), a task of the full container is killed, chosen the
# way the OOM killer always chooses (the most memory, oom_score_adj
# respected), and only a task of that container.  A container with
# nothing killable leaves the machine alone and waits for more room.
# timeout: 150
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 32

# @cm-begin helpers
# usage, failcnt, in_c and kills come from lib.sh.
install_in_c
mkdir -p /tmp/o

# cpu_ticks PID: user + system time PID has used, in clock ticks (1/100 s).
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# exits_within SECS PID: wait for PID (a child of this shell), but stop
# it with SIGTERM if it is still there after SECS seconds.  Its status is
# then 143, or 0 for a cm-* program holding its pages (SIGTERM releases
# them): never 137, the status of a task the kernel killed.  The SECS
# below are for the default kernel, where each of these waits ends in
# well under a second, and triple on the debug flavour, where a round of
# reclaim alone can take one: what they bound is how long a kernel that
# never kills keeps the lab waiting.
slow=1
[ "$(kernel_flavour)" = debug ] && slow=3
exits_within() {
	(exec >/dev/null 2>&1; sleep "$(($1 * slow))"; kill -TERM "$2") &
	_dog=$!
	wait "$2"
	_rc=$?
	kill "$_dog" 2>/dev/null
	wait "$_dog" 2>/dev/null
	return $_rc
}
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
mkdir /container/a /container/b /container/c /container/d

# @cm-begin hog
# Lab 4's stuck fault: 256 anonymous pages under a 64-page limit, no
# swap.  Reclaim finds nothing it can free, so the charge kills.  Two
# bigger tasks look on: one in container b (no limit), one in the root.
ok "a 512-page task holds in b" \
	start_held /tmp/o/b.out in_c b cm-anon 512 --hold
big_b=$HELD_PID
ok "a 512-page task holds in the root" \
	start_held /tmp/o/root.out cm-anon 512 --hold
big_root=$HELD_PID
k0=$(kills)
echo 64 >/container/a/memory.limit
in_c a cm-anon 256 >/dev/null 2>&1 &
hog=$!
exits_within 5 "$hog"
points 6
is "$?" 137 "the hog in a (256 pages, limit 64) is killed: SIGKILL, status 137"
points 6
is "$(kills)" "$((k0 + 1))" "one kill, logged as 'Memory container out of memory'"
dmesg | grep 'Memory container out of memory' | tail -n 2 |
	sed 's/^/# /'
points 6
ok "the log names a, its usage, limit and failcnt" \
	sh -c "dmesg | grep -q 'Memory container out of memory: /a: usage [0-9]* pages, limit 64 pages, failcnt [0-9]'"
ok "the bigger task in b survives" kill -0 "$big_b"
ok "the bigger task in the root survives" kill -0 "$big_root"
drain_cpus
is "$(usage a)" 0 "the hog's pages are all given back"
# @cm-end hog

# @cm-begin largest
# Three tasks share c's 1024 pages: big (600) and small (300) are held,
# then late faults past the limit on its way to 350.  The victim is the task with the most
# memory, big, not late, whose charge ran the OOM killer; once big's
# pages are back, late's charge fits and late finishes.
echo 1024 >/container/c/memory.limit
ok "big holds 600 pages in c" start_held /tmp/o/big.out in_c c cm-anon 600 --hold
big=$HELD_PID
ok "small holds 300 pages in c" start_held /tmp/o/small.out in_c c cm-anon 300 --hold
small=$HELD_PID
in_c c cm-anon 350 >/tmp/o/late.out 2>&1 &
late=$!
exits_within 7 "$late"
points 6
is "$?" 0 "late, which faulted past the limit, finishes"
exits_within 4 "$big"
points 6
is "$?" 137 "big, the largest, was the one killed"
ok "small lives on" kill -0 "$small"
# @cm-end largest

# @cm-begin adj
# The same again, but small says "kill me first" (oom_score_adj 1000
# adds 1000/1000 of c's limit to its score) and big says "never" (-1000).
ok "big holds 600 pages again, oom_score_adj -1000" \
	start_held /tmp/o/big.out sh -c \
	'echo -1000 >/proc/self/oom_score_adj && exec in_c c cm-anon 600 --hold'
big=$HELD_PID
echo 1000 >"/proc/$small/oom_score_adj"
in_c c cm-anon 350 >/tmp/o/late.out 2>&1 &
late=$!
exits_within 5 "$small"
points 6
is "$?" 137 "small, with oom_score_adj 1000, is killed instead"
exits_within 7 "$late"
is "$?" 0 "late finishes"
release "$big"
is "$?" 0 "big, with -1000, was left alone"
# @cm-end adj

# @cm-begin unkillable
# Only a task with oom_score_adj -1000 in d: nothing may be killed.  Its
# fault fails, 6.1's fault handler says "Huh VM_FAULT_OOM leaked out"
# (ten times in five seconds at most) and the task takes the fault
# again: every try reclaims in vain, with no pause, so the task spins.
# The machine goes on; raising the limit lets it finish.
echo 64 >/container/d/memory.limit
k0=$(kills)
h0=$(dmesg | grep -c 'Huh VM_FAULT_OOM')
(echo -1000 >/proc/self/oom_score_adj && exec in_c d cm-anon 256 >/dev/null) &
stuck=$!
sleep 3
t0=$(cpu_ticks "$stuck")
sleep 3
t1=$(cpu_ticks "$stuck")
diag "the stuck task used $((t1 - t0)) ticks of CPU in 3 s (300 = one CPU)"
ok "the task waits, alive" kill -0 "$stuck"
# Six seconds outlast the rate limit's five: a try made after it ran
# out is logged, whatever the parts before printed.
atleast "$(dmesg | grep -c 'Huh VM_FAULT_OOM')" "$((h0 + 1))" \
	"its fault fails and is taken again ('Huh VM_FAULT_OOM' logged)"
is "$(kills)" "$k0" "nobody was killed, in d or outside it"
ok "the task in b is still there" kill -0 "$big_b"
ok "the root runs a 256-page task meanwhile" cm-anon 256
points 6
ok "the log says there was nothing to kill" \
	sh -c "dmesg | grep -q 'Out of memory and no killable processes'"
echo 512 >/container/d/memory.limit
exits_within 7 "$stuck"
is "$?" 0 "a higher limit lets it finish"
# @cm-end unkillable

# @cm-begin mmap-lock
# A fault stuck at the limit holds its process's mmap_lock (for reading)
# all the while its charge reclaims, and mmap(), munmap() and every
# other change to the address space wait for it (for writing).  The
# charge must not sleep between rounds of reclaim: the fault then fails
# fast, lets go of the lock and is taken again, and a writer gets in
# between two tries.  cm-mmlat's faulter thread sticks at e's 64 pages
# (nothing in e may be killed) while its main thread maps and unmaps one
# page for 2 s, timing each call.
#
# A charge that slept in reclaim_throttle() after each round that freed
# nothing (5 x 100 ms) held the lock half a second per try: its calls
# waited 0.5 to 1 s.  A try that does not sleep is all CPU, 5-25 ms
# under TCG on a quiet host, but the guest's clock ticks in 4 ms steps,
# and a busy host stops a vCPU that holds the lock for as long as it
# likes: 56 to 80 ms with another kernel build running, up to 164 ms
# with the host's two cores four times over-committed.  The bound,
# 250 ms, is half of one sleeping try.  On the debug kernel a try that
# does not sleep, all KASAN and lockdep, already takes 0.4 to 1.3 s,
# and the time says nothing.
mkdir /container/e
echo 64 >/container/e/memory.limit
sh -c 'echo -1000 >/proc/self/oom_score_adj &&
	exec cm-mmlat /container/e 256 2000' >/tmp/o/mmlat.out 2>&1 &
mmlat=$!
_i=0
while ! grep -q worst_ms= /tmp/o/mmlat.out && [ $_i -lt 300 ] &&
	kill -0 "$mmlat" 2>/dev/null; do
	usleep 100000
	_i=$((_i + 1))
done
sed 's/^/# /' /tmp/o/mmlat.out
grep worst_ms= /tmp/o/mmlat.out >/tmp/o/mmlat.res
ok "cm-mmlat's faulter sticks at e's limit" \
	test "$(report_field /tmp/o/mmlat.res touched)" -lt 256
if [ "$(kernel_flavour)" = debug ]; then
	skip "mmap and munmap meanwhile wait under 250 ms for mmap_lock" \
		"a debug kernel's try is too slow to time"
else
	atleast 249 "$(report_field /tmp/o/mmlat.res worst_ms)" \
		"mmap and munmap meanwhile wait under 250 ms for mmap_lock"
fi
echo 512 >/container/e/memory.limit
exits_within 7 "$mmlat"
is "$?" 0 "a higher limit lets cm-mmlat finish"
drain_cpus
is "$(usage e)" 0 "and nothing is left charged to e"
# @cm-end mmap-lock

# @cm-begin swap
# With swap, the hog of the first part is not killed: reclaim writes its
# oldest pages out, and the charge fits.
ok "32 MiB of zram swap" zram_swap 32
k0=$(kills)
in_c a cm-anon 256 --verify >/tmp/o/swap.out 2>&1
is "$?" 0 "with swap the hog finishes, its pages intact"
is "$(kills)" "$k0" "and nobody was killed"
# @cm-end swap

release "$big_b"
release "$big_root"
done_testing
