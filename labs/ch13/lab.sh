#!/bin/sh
# Lab 13: paying less per page.  The guest runs on one CPU under QEMU's
# "-icount shift=0" (the "# icount" line below), so one guest nanosecond
# is one instruction and every figure here is a count of instructions,
# the same on any host.  It times three loops: page faults (cm-faults,
# in the root, in a container and 8 levels down), a file streamed
# through a container 8 times its limit, and anonymous memory 3 times a
# container's limit pushed out to zram swap.  The kit's kernel must
# charge a fault at any depth for the price of one level (the per-CPU
# stock), keep its records in page_ext, and still read exact usage.
# make perf runs this lab on the kit, on the same tree without a
# controller and on memcg, and compares the "# perf:" lines.
# icount: 1
# timeout: 300
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 9
PAGES=4096
ROUNDS=6
LIMIT=1024	# pages: 4 MiB

install_in_c
mkdir -p /container
# per_fault WHERE CMD...: cm-faults' instructions per fault
per_fault() {
	_w=$1
	shift
	"$@" cm-faults $PAGES $ROUNDS >/tmp/$_w.out 2>&1 || return 1
	report_field /tmp/$_w.out ns_per_fault
}
# timed OUT CMD...: run CMD under cm-time; its instructions in OUT
timed() {
	_o=$1
	shift
	cm-time "$@" 2>/tmp/t.err >/dev/null
	sed -n 's/^cm-time: ns=//p' /tmp/t.err >"$_o"
	[ -s "$_o" ]
}

root=$(per_fault root env)
if ! mount -t cgroup -o memory none /container 2>/dev/null; then
	# the baseline kernel, without a controller: the root's loop only
	ok "cm-faults runs (no controller: the baseline)" [ -n "$root" ]
	skip_n 8 "this kernel has no memory controller"
	diag "perf: side=none faults_root=${root:-none}"
	done_testing
	exit
fi
side=$(memcg_side)
ok "the memory controller mounts ($side)" true

# @cm-begin depth
# A container, and one 8 levels below it.  Up to chapter 12 every
# charge and uncharge took each level's counter lock; from chapter 13 a
# CPU's stock charges 32 pages ahead, so the walk up is paid once per
# 32 faults.  8 levels then cost 7 x ~50 / 32, about 11 instructions per
# fault more than one: 2 % of a fault is room for that and for noise
# (the loop's own count varies by a few instructions between runs).
mkdir /container/a
ctr=$(per_fault container in_c a)
path=a
for d in 2 3 4 5 6 7 8; do path=$path/l$d; mkdir /container/$path; done
deep=$(per_fault depth8 in_c $path)
diag "instructions per fault: root $root, container $ctr, 8 levels down $deep"
points 30
ok "depth 8 ($deep) costs at most 2 % more per fault than depth 1 ($ctr)" \
	test -n "$ctr" -a -n "$deep" -a "$((${deep:-1} * 100))" -le "$((${ctr:-0} * 102))"
# @cm-end depth

# @cm-begin records
if [ $side = kit ]; then
	points 2
	ok "no slab cache of records: they live in page_ext" \
		[ ! -e /sys/kernel/slab/meta_page ]
	points 2
	if [ "$(kernel_chapter)" -lt 14 ]; then
		is "$(record_bytes)" 48 "48 bytes of record per page frame"
	else
		is "$(record_bytes)" 40 "40 bytes of record per page frame (chapter 14)"
	fi
else
	skip_n 2 "memcg keeps its pointer in struct page (memcg_data)"
fi
# @cm-end records

# @cm-begin exact
# The kit: a task in a reads the debugfs audit.  Its own charges went
# through this CPU's stock, which holds pages charged ahead for a at
# that moment; a's usage must still be what its records hold (usage
# subtracts the stocks).  memcg has no audit, and its usage counts its
# stock (up to 64 pages) and some kernel memory: once a's tasks are
# gone, the LRU's per-CPU batches drained (drain_cpus) and the two tmpfs
# pages cm-faults wrote its reports to removed, at most 64 + 16 pages.
if [ $side = kit ]; then
	line=$(in_c a cat /sys/kernel/debug/mem_container_audit | grep '^/a ')
	diag "the audit, read from a: $line"
	points 6
	is "$(echo "$line" | awk '{ print $3 }')" "$(echo "$line" | awk '{ print $5 }')" \
		"a's usage, read while the stock holds pages for a, is what its records hold"
else
	drain_cpus
	rm -f /tmp/container.out /tmp/depth8.out
	left=$(pages a)
	points 6
	atleast 80 "$left" "a's usage reads $left pages once its tasks are gone (at most 80)"
fi
# @cm-end exact

# @cm-begin streams
# A file 8 times the limit streamed through s, and anonymous memory 3
# times the limit pushed to swap in n: each charge at the limit reclaims.
# The counter holds the stock too, so max_usage stays within the limit.
ok "ext2 on zram at /mnt" zram_ext2 48 /mnt
ok "32 MiB of zram swap" zram_swap 32
dd if=/dev/zero of=/mnt/f bs=4096 count=$((8 * LIMIT)) 2>/dev/null
remount /mnt
mkdir /container/s /container/n
wr s limit_in_bytes $((LIMIT * 4096)) >/dev/null
wr n limit_in_bytes $((LIMIT * 4096)) >/dev/null
timed /tmp/file in_c s cat /mnt/f; frc=$?
timed /tmp/anon in_c n cm-anon $((3 * LIMIT)); arc=$?
file=$(( $(cat /tmp/file) / (8 * LIMIT) ))
anon=$(( $(cat /tmp/anon) / (3 * LIMIT) ))
diag "instructions per page: file stream $file, anonymous to swap $anon"
fmax=$(( $(f s max_usage_in_bytes) / 4096 ))
amax=$(( $(f n max_usage_in_bytes) / 4096 ))
points 3
ok "the file streamed through s within its limit (max_usage $fmax)" \
	test $frc = 0 -a "$fmax" -le $LIMIT
points 3
ok "the anonymous pages went through n within its limit (max_usage $amax)" \
	test $arc = 0 -a "$amax" -le $LIMIT
# @cm-end streams

diag "perf: side=$side faults_root=$root faults_container=$ctr faults_depth8=$deep file=$file anon=$anon"
done_testing
