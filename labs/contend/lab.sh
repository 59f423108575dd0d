#!/bin/sh
# The contention experiment (make contend CH=N): page faults on every
# vCPU at once, timed by the guest's clock.  No -icount here: each vCPU
# runs as fast as its host thread, so the figures are nanoseconds, with
# the noise of the host, and what one CPU's work does to another's (a
# shared counter's cache line, a lock, an IPI) shows up as time.
#
# One cm-faults per vCPU, each pinned to its own, all started together,
# in three places: the root (no container), one container p that all of
# them share, and a sibling container each, p/s0, p/s1, ...  Each case
# runs three times and keeps its fastest: the host's other work only
# ever adds time, so the minimum is the figure least disturbed by it.
# Prints a "# contend:" line with the mean ns_per_fault of each case; make
# contend boots the kit, a kernel without any controller and 6.1's
# memcg in turn and compares them.  Its test points only check that
# every run happened and reported.
# timeout: 300
. /lab/lib/tap.sh
. /lab/lib/lib.sh

PAGES=1024
ROUNDS=40
N=$(nproc)
plan 4

install_in_c
mkdir -p /container /tmp/o
if mount -t cgroup -o memory none /container 2>/dev/null; then
	side=$(memcg_side)
	mkdir -p /container/p
	i=0
	while [ $i -lt $N ]; do mkdir -p /container/p/s$i; i=$((i + 1)); done
else
	side=none
fi
ok "the kernel runs ($side, $N CPUs)" true

# @cm-begin faults
# faults CASE: one cm-faults per CPU in CASE's place, all at once; the
# mean of their ns_per_fault, or nothing if one of them failed.
faults() {
	_pids= _i=0
	while [ $_i -lt $N ]; do
		case $1 in
		root) _in=env ;;
		one) _in="in_c p" ;;
		siblings) _in="in_c p/s$_i" ;;
		esac
		taskset -c $_i $_in cm-faults $PAGES $ROUNDS >/tmp/o/$1.$_i 2>&1 &
		_pids="$_pids $!"
		_i=$((_i + 1))
	done
	_rc=0
	for _p in $_pids; do wait $_p || _rc=1; done
	[ $_rc = 0 ] || return 1
	_sum=0 _i=0
	while [ $_i -lt $N ]; do
		_v=$(report_field /tmp/o/$1.$_i ns_per_fault)
		[ -n "$_v" ] || return 1
		_sum=$((_sum + _v))
		_i=$((_i + 1))
	done
	echo $((_sum / N))
}
# @cm-end faults

# best CASE: the fastest of three runs of faults CASE
best() {
	_best=
	for _try in 1 2 3; do
		_t=$(faults $1) || return 1
		[ -z "$_best" ] || [ "$_t" -lt "$_best" ] && _best=$_t
	done
	echo $_best
}

root=$(best root)
ok "$N loops in the root: ${root:-failed} ns a fault" [ -n "$root" ]
if [ $side = none ]; then
	skip_n 2 "no memory controller in this kernel"
	diag "contend: side=$side cpus=$N root=$root"
else
	one=$(best one)
	ok "$N loops in one container: ${one:-failed} ns a fault" [ -n "$one" ]
	sib=$(best siblings)
	ok "$N loops in $N sibling containers: ${sib:-failed} ns a fault" [ -n "$sib" ]
	diag "contend: side=$side cpus=$N root=$root one=$one siblings=$sib"
fi
done_testing
