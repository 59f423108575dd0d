#!/bin/sh
# The stress lab: everything the kernel's chapter has, at once, on every
# CPU, from one seed.  make stress CH=N boots the chapter-N kernel with
# "cmstress=SECONDS,SEED" on its command line and runs this script.
#
# Four workers, each with its own stream of random numbers drawn from
# the seed, pick operations from the ones the chapter has: fork, exec
# and exit storms, moves of tasks and whole processes between
# containers, limit writes above and below usage (in pages and, from
# chapter 11, in bytes), force_empty, control_type flips, mkdir and
# rmdir (from chapter 12 in a tree: two of the four containers are
# children of the other two), page-cache streams and rereads, anonymous
# hogs, mlocked pages, shmem, perf ring buffers, compaction, swapoff
# and swapon, and from chapter 13 a CPU taken offline and back (its
# per-CPU charge stock must be given back).  The same
# seed gives every worker the same list of operations, in the same
# order; how they interleave is up to the machine.
#
# Every QUIET seconds the workers finish what they are doing and wait.
# The checks then run on a still machine:
#   - every container's usage equals the pages its records hold
#     (/sys/kernel/debug/mem_container_audit, from chapter 4 on);
#   - a new task in each container is charged to that container;
#   - every worker is still alive: an OOM kill never leaves its
#     container (the workers run in the root container, outside all);
# and at the end, after teardown, every container's usage is 0.  The
# host fails the run on any BUG, WARNING, KASAN or lockdep report on
# the console, and a hung machine is caught by the hung-task and
# soft-lockup detectors and the host's timeout.  A failure names the
# seed, the quiet point and each worker's last step.
. /lab/lib/tap.sh
. /lab/lib/lib.sh

args=$(sed -n 's/.*cmstress=\([0-9]*\),\([0-9]*\).*/\1 \2/p' /proc/cmdline)
set -- $args
SECONDS_WANTED=${1:-60} SEED=${2:-1}
CH=$(kernel_chapter)
# memory.stat, and its sum in the audit, come with chapter 10
STAT=; [ "$CH" -ge 10 ] && STAT=1
WORKERS=4
QUIET=15
S=/tmp/stress
mkdir -p $S

# rand N: a number in 0..N-1 into RV, from the worker's own state R (a
# 31-bit linear congruential generator: crude, repeatable, enough to
# pick operations).
rand() {
	R=$(( (R * 1103515245 + 12345) % 2147483648 ))
	RV=$(( (R / 65536) % $1 ))
}

log() { echo "$*" >>"$S/w$W.log"; }

# The four containers: side by side before chapter 12; from chapter 12
# two of them are children of the other two, so that limits, reclaim,
# OOM kills and moves also cross the levels of a hierarchy.
CS="s0 s1 s2 s3"
[ "$CH" -ge 12 ] && CS="s0 s1 s0/s2 s1/s3"
container() { rand 4; set -- $CS; eval "C=\${$((RV + 1))}"; }

# op_*: one operation each; a worker calls them at random.  Each one
# ends what it started: no task is left behind at a quiet point.
op_limit() {	# a limit above or below usage, sometimes none
	container
	rand 5
	case $RV in
	0) L=9223372036854775807 ;;
	1) L=$(( $(usage $C) / 2 + 16 )) ;;
	*) rand 4096; L=$((RV + 32)) ;;
	esac
	log "limit $C $L"
	# below usage, from chapter 11 on, reclaim first or EBUSY
	echo $L 2>/dev/null >/container/$C/memory.limit
}
op_bytes() {	# memcg v1's files: a limit in bytes, force_empty
	container
	rand 3
	case $RV in
	0) L=-1 ;;
	1) L=force ;;
	*) rand 16; L=$((RV + 1))M ;;
	esac
	log "bytes $C $L"
	if [ $L = force ]; then
		echo 1 >/container/$C/memory.force_empty
	else
		echo $L 2>/dev/null >/container/$C/memory.limit_in_bytes
	fi
}
op_anon() {	# an anonymous hog, sometimes larger than its limit
	container
	rand 1024
	log "anon $C $((RV + 16))"
	in_c $C cm-anon $((RV + 16)) --verify >/dev/null 2>&1
}
op_mlock() {	# locked pages: the unevictable list, from chapter 6
	container
	rand 128
	log "mlock $C $((RV + 16))"
	in_c $C cm-anon $((RV + 16)) --mlock >/dev/null 2>&1
}
op_cache() {	# stream or reread a file on ext2
	container
	rand 3
	log "cache $C f$RV"
	in_c $C sh -c "cat /mnt/f$RV >/dev/null" 2>/dev/null
}
op_mapped() {	# map and read a file
	container
	rand 3
	log "mapped $C f$RV"
	in_c $C cm-file /mnt/f$RV --mmap >/dev/null 2>&1
}
op_shmem() {	# write a tmpfs file, then remove it
	container
	rand 256
	log "shmem $C $((RV + 1))"
	in_c $C dd if=/dev/zero of=$S/shm.$W bs=4096 count=$((RV + 1)) 2>/dev/null
	rm -f $S/shm.$W
}
op_fork() {	# a fork storm, some children exec
	container
	rand 2
	if [ $RV = 1 ]; then X=--exec; else X=; fi
	log "fork $C $X"
	in_c $C cm-fork-loop 20 16 $X >/dev/null 2>&1
}
op_move() {	# a task, or a whole process, moves while it grows
	container
	from=$C
	container
	log "move $from $C"
	in_c $from cm-grow 32 --thread >/dev/null 2>&1 &
	p=$!
	usleep 20000
	rand 2
	if [ $RV = 1 ]; then
		echo $p >/container/$C/cgroup.procs 2>/dev/null
	else
		echo $p >/container/$C/tasks 2>/dev/null
	fi
	usleep 20000
	kill $p 2>/dev/null
	wait $p 2>/dev/null
}
# rmdir_busy D: remove container D.  The group may refuse rmdir (EBUSY)
# for a moment after its last task was reaped (seed 1 on ch12: twice in
# 60 s, gone after 50 ms).  Two seconds of that, and the dir is left for
# the teardown to fail.
rmdir_busy() {
	i=0
	until rmdir /container/$1 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 40 ] || { log "rmdir $1: still busy"; return 1; }
		usleep 50000
	done
}
op_dir() {	# mkdir, charge, leave, rmdir; sometimes rmdir with charges
	d=t$W
	# from chapter 12, inside one of the four: its charges count above
	if [ "$CH" -ge 12 ]; then container; d=$C/t$W; fi
	log "dir $d"
	mkdir /container/$d 2>/dev/null || return 0
	in_c $d sh -c "cat /mnt/f0 >/dev/null; cm-anon 64 >/dev/null" 2>/dev/null
	rmdir_busy $d
}
op_type() {	# control_type flips, at any level (refused below a 3)
	container
	rand 3
	log "type $C $((RV + 1))"
	echo $((RV + 1)) 2>/dev/null >/container/$C/memory.control_type
}
op_deleg() {	# uid 65534, given s1 (chapter 12), makes a child and uses it
	d=s1/u$W
	log "deleg $d"
	cm-runas 65534 mkdir /container/$d 2>/dev/null || return 0
	rand 3
	cm-runas 65534 sh -c "echo $((RV + 1)) >/container/$d/memory.control_type" \
		2>/dev/null
	rand 128
	cm-runas 65534 in_c $d sh -c "dd if=/dev/zero of=$S/u/d.$W bs=4096 \
		count=$((RV + 1)) 2>/dev/null; cat /mnt/f0 >/dev/null;
		rm -f $S/u/d.$W" 2>/dev/null
	rmdir_busy $d
}
op_perf() {	# a perf ring buffer, mapped and freed
	container
	log "perf $C"
	in_c $C cm-perf 8 >/dev/null 2>&1
}
op_compact() {
	log "compact"
	echo 1 >/proc/sys/vm/compact_memory
}
op_swap() {	# swapoff and swapon (worker 0 only: one device)
	[ $W = 0 ] || return 0
	log "swapoff"
	swapoff /dev/zram0 2>/dev/null
	log "swapon"
	swapon /dev/zram0 2>/dev/null
}
op_cpu() {	# CPU 1 goes offline and back (one worker at a time)
	[ -w /sys/devices/system/cpu/cpu1/online ] || return 0
	mkdir $S/cpu.lock 2>/dev/null || return 0
	log "cpu1 offline"
	echo 0 >/sys/devices/system/cpu/cpu1/online
	usleep 100000
	log "cpu1 online"
	echo 1 >/sys/devices/system/cpu/cpu1/online
	rmdir $S/cpu.lock
}
op_stat() {	# read memory.stat, reset the high-water mark and failcnt
	container
	log "stat $C"
	cat /container/$C/memory.stat >/dev/null
	echo 0 >/container/$C/memory.max_usage
	echo 0 >/container/$C/memory.failcnt
}

# The operations this chapter's kernel has.
OPS="limit dir"
[ "$CH" -ge 4 ] && OPS="$OPS anon cache mapped shmem mlock fork perf compact"
[ "$CH" -ge 5 ] && OPS="$OPS move"
[ "$CH" -ge 6 ] && OPS="$OPS swap"
[ "$CH" -ge 8 ] && OPS="$OPS type"
[ "$CH" -ge 10 ] && OPS="$OPS stat"
[ "$CH" -ge 11 ] && OPS="$OPS bytes"
[ "$CH" -ge 12 ] && OPS="$OPS deleg"
# from chapter 13 a dead CPU's charge stock is given back
[ "$CH" -ge 13 ] && OPS="$OPS cpu"
set -- $OPS
NOPS=$#

worker() {
	W=$1
	set -- $OPS
	R=$(( (SEED * 4 + W) % 2147483648 ))
	step=0
	while [ ! -e $S/stop ]; do
		if [ -e $S/pause ]; then
			# Wait without starting a process: the root container,
			# where the workers live, must hold still for the audit.
			: >$S/idle.$W
			read _ <$S/go.$W
			continue
		fi
		rm -f $S/idle.$W
		step=$((step + 1))
		rand $NOPS
		eval "op=\${$((RV + 1))}"
		echo "$step $op" >$S/w$W.step
		log "step $step"
		op_$op
		log "= $?"
	done
	: >$S/idle.$W
}

# resume: let the paused workers go on.  The FIFO is opened for reading
# and writing, which never blocks: a worker that is not waiting on it
# (it is busy, or gone) costs nothing, and the word is dropped.
resume() {
	rm -f $S/pause
	for w in $(seq 0 $((WORKERS - 1))); do
		echo go 3<>$S/go.$w >&3
	done
}

# quiet: ask every worker to stop after its current operation, and wait
# until all say so (each operation ends what it started).
quiet() {
	rm -f $S/idle.*
	touch $S/pause
	i=0
	while [ "$(ls $S/idle.* 2>/dev/null | wc -l)" -lt $WORKERS ]; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		usleep 100000
	done
	drain_cpus
}

# audit: usage and records agree in every container, and from chapter
# 10 on so does memory.stat's cache + rss (the line's "stat" field); a
# charge or an uncharge half done (kswapd's, an RCU-freed perf page's)
# may show for a moment, so a mismatch must last five reads, 200 ms
# apart.
audit() {
	f=/sys/kernel/debug/mem_container_audit
	for i in 1 2 3 4 5; do
		awk -v stat="$STAT" '$3 != $5 || (stat && $7 != $3) {
			bad = 1; print "#   " $0 } END { exit bad }' $f \
			>$S/audit.out && return 0
		usleep 200000
	done
	cat $S/audit.out
	return 1
}

# charged_here: a new task in each container is charged there.
charged_here() {
	for c in $CS; do
		echo 9223372036854775807 >/container/$c/memory.limit
		u0=$(usage $c)
		# (its output file is a tmpfs page charged to $c: counted
		# in the bound, and removed after)
		in_c $c cm-anon 256 --hold >$S/probe.out 2>&1 &
		p=$!
		i=0
		until grep -q ready $S/probe.out || [ $i -gt 100 ]; do
			usleep 50000
			i=$((i + 1))
		done
		u1=$(usage $c)
		kill -USR1 $p 2>/dev/null
		wait $p
		rm -f $S/probe.out
		d=$((u1 - u0))
		if [ $d -lt 250 ] || [ $d -gt 300 ]; then
			echo "#   a 256-page task in $c raised its usage by $d"
			return 1
		fi
	done
}

# types_nest: chapter 12's promise that a subtree cannot escape its
# parent, for control_type: below a container of type 3 (other than the
# root), every container is of type 3 too.
types_nest() {
	_bad=0
	for _d in $(cd /container && find . -mindepth 2 -type d); do
		_p=${_d%/*}
		[ "$(cat /container/$_p/memory.control_type)" = 3 ] || continue
		[ "$(cat /container/$_d/memory.control_type)" = 3 ] && continue
		echo "#   ${_d#./} is type $(cat /container/$_d/memory.control_type) below ${_p#./}, type 3"
		_bad=1
	done
	return $_bad
}

# fits_at_once: chapter 11's promise (appendix A) that a limit the usage
# fits is set, reclaiming first, never EBUSY while the usage it reports
# fits; here while a task of the container faults on another CPU
# (chapter 13's stocks charge ahead for it).  force_empty first takes
# what reclaim can; the limit is the usage left plus 16 pages (the
# loop's 4 pages in flight, and the dozen or so of each cm-faults it
# starts, fit inside), written once a 1024-page file is in, so that the
# write must reclaim the file while the loop faults.  An EBUSY is
# allowed only if usage then reads above the limit refused.
fits_at_once() {
	_bad=0
	rm -f $S/fstop
	for c in $CS; do
		taskset -c 1 in_c $c sh -c "while [ ! -e $S/fstop ]; do
			cm-faults 4 1000 || exit 1; done" >/dev/null 2>&1 &
		_p=$!
		usleep 300000
		# what reclaim can take goes first, then a file comes in
		echo 9223372036854775807 >/container/$c/memory.limit
		echo 1 2>/dev/null >/container/$c/memory.force_empty
		_l=$(( $(usage $c) + 16 ))
		in_c $c cat /mnt/f1 >/dev/null
		_r=$(taskset -c 0 cm-write /container/$c/memory.limit $_l | cut -d' ' -f1)
		_u=$(usage $c)
		touch $S/fstop
		wait $_p
		rm -f $S/fstop
		echo 9223372036854775807 >/container/$c/memory.limit
		case $_r in
		ok) ;;
		errno=EBUSY) [ "$_u" -gt "$_l" ] && continue
			echo "#   $c: limit $_l refused (EBUSY), usage then $_u"
			_bad=1 ;;
		*) echo "#   $c: limit $_l: $_r"; _bad=1 ;;
		esac
	done
	return $_bad
}

workers_alive() {
	for w in $(seq 0 $((WORKERS - 1))); do
		kill -0 "$(eval echo \$wpid$w)" 2>/dev/null || {
			echo "#   worker $w is gone (killed?)"
			return 1
		}
	done
}

where() {
	for w in $(seq 0 $((WORKERS - 1))); do
		echo "#   worker $w, last step: $(cat $S/w$w.step 2>/dev/null)"
	done
}

fail_here() {
	diag "seed $SEED, $1; replay: make stress CH=$CH SEED=$SEED SECONDS=$SECONDS_WANTED CPUS=$(nproc)"
	where
}

checks=$(( (SECONDS_WANTED + QUIET - 1) / QUIET ))
plan $((4 + checks * 6 + 3))
diag "stress: chapter $CH, seed $SEED, $SECONDS_WANTED s, $(nproc) CPUs, operations: $OPS"

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
files() {
	zram_ext2 48 /mnt &&
		dd if=/dev/urandom of=/mnt/f0 bs=4096 count=512 2>/dev/null &&
		dd if=/dev/zero of=/mnt/f1 bs=4096 count=1024 2>/dev/null &&
		dd if=/dev/zero of=/mnt/f2 bs=4096 count=2048 2>/dev/null
}
ok "ext2 on zram at /mnt, three files" files
if [ "$CH" -ge 6 ]; then
	ok "32 MiB of zram swap" zram_swap 32
else
	ok "no swap before chapter 6 (nothing reclaims)" true
fi
install_in_c
for c in $CS; do mkdir /container/$c; done
# chapter 12 on: s1 is delegated to uid 65534 (its directory and tasks
# file, as an administrator would); the user's files go to $S/u.
mkdir -p $S/u && chmod 777 $S/u
[ "$CH" -ge 12 ] && chown 65534 /container/s1 /container/s1/tasks
ok "four containers: $CS" test -d "/container/${CS##* }"

for w in $(seq 0 $((WORKERS - 1))); do
	mkfifo $S/go.$w
	worker $w &
	eval "wpid$w=$!"
done

k=0
end=$(( $(cut -d. -f1 /proc/uptime) + SECONDS_WANTED ))
while [ $k -lt $checks ]; do
	k=$((k + 1))
	left=$(( end - $(cut -d. -f1 /proc/uptime) ))
	[ $left -gt $QUIET ] && left=$QUIET
	[ $left -gt 0 ] && sleep $left
	quiet
	rc=$?
	ok "quiet point $k: every worker finished its step" [ $rc = 0 ]
	[ $rc = 0 ] || fail_here "quiet point $k"
	if [ "$CH" -ge 4 ]; then
		audit >$S/a.out
		rc=$?
		ok "quiet point $k: usage = pages held by records${STAT:+ = cache + rss}, in every container" [ $rc = 0 ]
		[ $rc = 0 ] || { cat $S/a.out; fail_here "quiet point $k"; }
		charged_here >$S/c.out
		rc=$?
		ok "quiet point $k: a new task is charged to its own container" [ $rc = 0 ]
		[ $rc = 0 ] || { cat $S/c.out; fail_here "quiet point $k"; }
	else
		skip_n 2 "nothing is charged before chapter 4"
	fi
	if [ "$CH" -ge 12 ]; then
		types_nest >$S/t.out
		rc=$?
		ok "quiet point $k: no container charges less than its parent (control_type)" [ $rc = 0 ]
		[ $rc = 0 ] || { cat $S/t.out; fail_here "quiet point $k"; }
	else
		skip "quiet point $k: control_type nests" "no hierarchy before chapter 12"
	fi
	if [ "$CH" -ge 11 ] && [ "$(nproc)" -ge 2 ]; then
		fits_at_once >$S/f.out
		rc=$?
		ok "quiet point $k: a limit the usage fits is set at once, CPU 1 faulting" [ $rc = 0 ]
		[ $rc = 0 ] || { cat $S/f.out; fail_here "quiet point $k"; }
	else
		skip "quiet point $k: a limit that fits is set at once" \
			"chapter 11's limit writes, on 2 CPUs or more"
	fi
	workers_alive >$S/w.out
	rc=$?
	ok "quiet point $k: every worker is alive (no kill left its container)" [ $rc = 0 ]
	[ $rc = 0 ] || { cat $S/w.out; fail_here "quiet point $k"; }
	[ $k -lt $checks ] && resume
done

touch $S/stop
resume
wait
# A run that did nothing would pass every check above.
ran=$(cat $S/w*.log | grep -c '^step ')
missing=
for op in $OPS; do
	[ $op = swap ] && op=swapoff
	grep -q "^$op" $S/w*.log || missing="$missing $op"
done
diag "the workers ran $ran operations; per kind, how many and how many failed:"
cat $S/w*.log | awk '
	/^step / { next }
	/^= / { if (op != "") { n[op]++; if ($2 != 0) bad[op]++ } op = ""; next }
	{ op = $1 }
	END { for (o in n) printf "#   %-8s %5d %5d\n", o, n[o], bad[o] }' | sort
is "${missing:-none}" none "every kind of operation ran at least once"
# Teardown: files, swap, containers.  Every usage is 0 before rmdir.
rm -f /mnt/f* $S/shm.*
remount /mnt
swapoff -a 2>/dev/null
drain_cpus
bad=
for c in $CS; do
	[ "$(usage $c)" = 0 ] || bad="$bad $c:$(usage $c)"
done
is "${bad:-none}" none "after teardown every container's usage is 0"
[ -z "$bad" ] || fail_here "teardown"
# children first: reversed, $CS lists parents first
ok "and the containers go" sh -c "cd /container && rmdir $(echo $CS | tr ' ' '\n' | tac | tr '\n' ' ')"
done_testing
