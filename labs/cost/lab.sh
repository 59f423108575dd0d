#!/bin/sh
# The cost lab (make cost CH=N): what a page fault costs, in
# instructions.  run.sh boots the guest on one CPU under QEMU's
# "-icount shift=0": one guest nanosecond is one instruction, so the
# figures do not depend on the host, its load, or the run.  cm-faults
# maps, touches and unmaps 4096 anonymous pages eleven times (the first
# round is a warm-up), in the root, then in a container when the kernel
# has one, then in containers 2, 4 and 8 levels down (from chapter 12 a
# charge is taken at every level).  The last line, "# cost: root=N
# container=M depth2=N depth4=N depth8=N", is what the host reads.
# timeout: 300
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 6
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
	# a/l2 is 2 levels down, a/l2/l3/l4 is 4, and so on.
	path=a deep=
	for d in 2 3 4 5 6 7 8; do
		path=$path/l$d
		mkdir "/container/$path"
		case $d in 2 | 4 | 8)
			c=$(per_fault "depth$d" in_c "$path")
			ok "and $d levels down" [ -n "$c" ]
			deep="$deep depth$d=${c:-none}" ;;
		esac
	done
else
	ctr=none deep=
	skip_n 5 "this kernel has no memory controller"
fi
diag "cost: root=$root container=$ctr$deep"
# @cm-end faults

done_testing
