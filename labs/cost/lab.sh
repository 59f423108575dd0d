#!/bin/sh
# The cost lab (make cost CH=N): what a page fault costs, in
# instructions.  run.sh boots the guest on one CPU under QEMU's
# "-icount shift=0": one guest nanosecond is one instruction, so the
# figures do not depend on the host, its load, or the run.  cm-faults
# maps, touches and unmaps 4096 anonymous pages eleven times (the first
# round is a warm-up), in the root, then in a container when the kernel
# has one.  The last line, "# cost: root=N container=M", is what the
# host reads.
# timeout: 300
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 3
PAGES=4096
ROUNDS=11

# @cm-begin faults
# per_fault WHERE CMD...: run cm-faults, print its ns_per_fault
per_fault() {
	_w=$1
	shift
	"$@" cm-faults $PAGES $ROUNDS >/tmp/$_w.out 2>&1 || return 1
	diag "$_w: $(cat /tmp/$_w.out)" >&2
	report_field /tmp/$_w.out ns_per_fault
}
root=$(per_fault root env)
ok "cm-faults runs in the root" [ -n "$root" ]
mkdir -p /container
if mount -t cgroup -o memory none /container 2>/dev/null; then
	mkdir /container/a
	install_in_c
	ctr=$(per_fault container in_c a)
	ok "and in a container" [ -n "$ctr" ]
	drain_cpus
	# The kit's page file; or, on the memcg flavour, memcg's bytes,
	# which also count the pages its charge stock holds ahead on this
	# CPU (up to 64, MEMCG_CHARGE_BATCH) and some kernel memory.
	if [ -e /container/a/memory.usage ]; then
		left=$(cat /container/a/memory.usage) most=16
	else
		left=$(( $(cat /container/a/memory.usage_in_bytes) / 4096 ))
		most=$((64 + 16))
	fi
	atleast "$most" "$left" "the container is empty again: $left pages left (at most $most)"
else
	ctr=none
	skip_n 2 "this kernel has no memory controller"
fi
diag "cost: root=$root container=$ctr"
# @cm-end faults

done_testing
