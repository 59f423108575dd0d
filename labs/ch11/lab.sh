#!/bin/sh
# Lab 11: limits that shrink, numbers people type, and memcg v1's files.
# Written against memcg v1's files only, so that it runs on the kit's
# kernel and on the memcg flavour (make lab CH=11 FLAVOR=memcg).  Where
# the two must differ, the point says so and checks each side's value.
# memcg: side by side (make check runs it on the memcg flavour too)
# timeout: 150
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 77

# @cm-begin helpers
install_in_c
mkdir -p /container /tmp/o
ok "the memory controller mounts" mount -t cgroup -o memory none /container
# Which controller answers (f, wr and pages are lib.sh's too).
side=$(memcg_side)
diag "side: $side"

# side_is WHAT KIT MEMCG DESC: one point where the two controllers
# differ: WHAT must be KIT on the kit and MEMCG on memcg.
side_is() {
	if [ "$side" = kit ]; then _w=$2; else _w=$3; fi
	is "$1" "$_w" "$4 ($side: $_w)"
}

NOLIMIT=9223372036854771712	# memcg's "no limit", in bytes
# @cm-end helpers

ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
dd if=/dev/zero of=/mnt/f3m bs=4096 count=768 2>/dev/null
dd if=/dev/zero of=/mnt/big bs=4096 count=4096 2>/dev/null
remount /mnt
ok "32 MiB of zram swap" zram_swap 32
mkdir /container/a /container/b /container/c /container/d /container/o

# @cm-begin files
ok "memcg v1's files are there" sh -c 'cd /container/a && ls memory.limit_in_bytes \
	memory.usage_in_bytes memory.max_usage_in_bytes memory.force_empty \
	memory.use_hierarchy memory.failcnt memory.stat >/dev/null'
is "$(f a limit_in_bytes)" $NOLIMIT "a new container has no limit: $NOLIMIT"
is "$(wr "" limit_in_bytes 1M):$(f "" limit_in_bytes)" "errno=EINVAL:$NOLIMIT" \
	"the root's limit cannot be set"
# @cm-end files

# @cm-begin numbers
# What memcg's parser makes of what people type: suffixes, C's number
# notation, blanks around, and bytes rounded DOWN to whole pages (since
# 3.19; before, memcg rounded up).
points 8
for t in -1:$NOLIMIT 1M:1048576 64k:65536 64K:65536 1G:1073741824 \
	4095:0 4097:4096 1:0 1k:0 0x3000:12288 010000:4096 \
	$NOLIMIT:$NOLIMIT 8E:$NOLIMIT; do
	v=${t%%:*} want=${t#*:}
	is "$(wr a limit_in_bytes "$v"):$(f a limit_in_bytes)" "ok:$want" \
		"limit_in_bytes '$v' reads $want"
done
is "$(wr a limit_in_bytes ' 16384 \n'):$(f a limit_in_bytes)" "ok:16384" \
	"blanks around the number are fine"
# Garbage is refused, and the limit kept.
wr a limit_in_bytes 1M >/dev/null
points 4
for v in 1.0 1xx xx '1 0' '1\nk' +4096 -2 1K1 0x 1KB; do
	is "$(wr a limit_in_bytes "$v"):$(f a limit_in_bytes)" "errno=EINVAL:1048576" \
		"limit_in_bytes '$v' is refused, the limit kept"
done
is "$(wr a limit_in_bytes ''):$(f a limit_in_bytes)" "ok:1048576" \
	"an empty write reaches no handler: nothing changes"
# Where memparse() is too kind: it reads a blank write as 0, wraps a
# number too big for 64 bits, and stops at a NUL.  The kit refuses all
# three; memcg takes them.
points 2
side_is "$(wr a limit_in_bytes '  '):$(f a limit_in_bytes)" \
	"errno=EINVAL:1048576" "ok:0" "a blank write"
wr a limit_in_bytes 1M >/dev/null
side_is "$(wr a limit_in_bytes 99999999999999999999):$(f a limit_in_bytes)" \
	"errno=ERANGE:1048576" "ok:7766279631452237824" \
	"20 nines: 64 bits overflow (memcg keeps the remainder, in whole pages)"
wr a limit_in_bytes 1M >/dev/null
side_is "$(wr a limit_in_bytes '8192\0junk'):$(f a limit_in_bytes)" \
	"errno=EINVAL:1048576" "ok:8192" "a NUL inside the write"
wr a limit_in_bytes -1 >/dev/null
# @cm-end numbers

# @cm-begin hierarchy
# use_hierarchy: before chapter 12 the kit has no hierarchy and says
# so; 6.1's memcg has nothing else, and from chapter 12 neither has the
# kit.  Each takes what it is and refuses the other, and both refuse
# what is not a number.
points 3
if [ "$(kernel_chapter)" -ge 12 ]; then flat=1 flatw=ok:errno=EINVAL
else flat=0 flatw=errno=EINVAL:ok; fi
side_is "$(f a use_hierarchy)" "$flat" 1 "use_hierarchy reads"
side_is "$(wr a use_hierarchy 1):$(wr a use_hierarchy 0)" "$flatw" \
	"ok:errno=EINVAL" "writing 1, then 0"
is "$(wr a use_hierarchy xx)" errno=EINVAL "use_hierarchy 'xx' is refused"
# @cm-end hierarchy

# @cm-begin shrink-cache
# A limit below usage, over page cache: reclaim makes room, the write
# succeeds, and usage is within the new limit at once.
in_c a cat /mnt/f3m >/dev/null
drain_cpus
u=$(pages a)
points 3
atleast "$u" 768 "a read 768 pages of f3m: usage $u pages"
t0=$(date +%s)
is "$(wr a limit_in_bytes 1M)" ok "limit 1M (256 pages), below usage: the write succeeds"
t=$(( $(date +%s) - t0 ))
points 6
is "$(f a limit_in_bytes)" 1048576 "the new limit is set"
atleast 256 "$(pages a)" "usage is within it at once: $(pages a) pages"
atleast 5 "$t" "the write took $t s (reclaim of about 512 pages)"
# @cm-end shrink-cache

# @cm-begin shrink-mlock
# A limit below usage, over locked pages: reclaim can free nothing, the
# write fails with EBUSY, and the old limit stays.
ok "cm-alloc locks 256 pages in b" start_held /tmp/o/lock.out in_c b cm-alloc mlock 256 --hold
locker=$HELD_PID
drain_cpus
u=$(pages b)
points 6
is "$(wr b limit_in_bytes 512K)" errno=EBUSY "limit 512K below 256 locked pages: EBUSY"
is "$(f b limit_in_bytes)" $NOLIMIT "the old limit stays"
atleast "$(pages b)" 256 "nothing was taken: usage $(pages b) pages"
# force_empty reclaims what it can and succeeds; the locked pages stay.
points 4
is "$(wr b force_empty 1)" ok "force_empty with the locker inside succeeds"
atleast "$(pages b)" 256 "the 256 locked pages stay charged"
# The task leaves; its pages stay charged to b, as they do in 6.1 (which
# no longer moves them to the parent): force_empty cannot take them.
echo "$locker" >/container/tasks
is "$(wr b force_empty 1)" ok "force_empty after the task left succeeds"
atleast "$(pages b)" 256 "and leaves what cannot be reclaimed: $(pages b) pages"
release "$locker"
# @cm-end shrink-mlock

# @cm-begin force-empty
# A task charges anonymous pages and page cache to c, then leaves.  Its
# anon pages can go to swap, the cache can be dropped: force_empty takes
# c down to nothing.  memcg counts some of the kernel's memory too (the
# task's page tables and slab objects, which no reclaim frees): on
# memcg up to 32 pages stay (16 to 20 in our runs).
remount /mnt
ok "cm-alloc holds 256 anon pages in c" start_held /tmp/o/anon.out in_c c cm-alloc anon 256 --hold
in_c c cat /mnt/f3m >/dev/null
echo "$HELD_PID" >/container/tasks
drain_cpus
points 2
atleast "$(pages c)" 1024 "c holds 256 anon + 768 cache pages: $(pages c)"
points 4
is "$(wr c force_empty 1)" ok "force_empty on c succeeds"
if [ $side = kit ]; then
	is "$(pages c)" 0 "c is empty: 0 pages"
else
	atleast 32 "$(pages c)" "c is empty, bar kernel memory: $(pages c) pages"
fi
release "$HELD_PID"
# Like memcg's, the file is a trigger: what is written is not read.
points 1
is "$(wr c force_empty xx)" ok "force_empty 'xx' is a trigger too"
is "$(wr "" force_empty 1)" errno=EINVAL "the root cannot be emptied"
# @cm-end force-empty

# @cm-begin shrink-busy
# A limit lowered while a task streams a file 8 times it: the write
# returns, successful or EBUSY, and usage is within the limit it reads.
wr d limit_in_bytes 4M >/dev/null
(in_c d sh -c 'for i in 1 2 3 4 5; do cat /mnt/big; done' >/dev/null) &
streamer=$!
sleep 1
t0=$(date +%s)
r=$(wr d limit_in_bytes 2M)
t=$(( $(date +%s) - t0 ))
points 4
case $r in ok | errno=EBUSY) rc=0 ;; *) rc=1 ;; esac
is "$rc" 0 "limit 2M during the stream: $r, in $t s"
atleast 10 "$t" "the write returned within 10 s"
atleast "$(( $(f d limit_in_bytes) / 4096 ))" "$(pages d)" "usage is within the limit"
wait_within 60 "$streamer"
is "$?" 0 "the stream finished"
# @cm-end shrink-busy

# @cm-begin busy-fits
# A limit that fits is set at once, even while a task of the container
# faults on the other CPU.  e holds 200 mlocked pages and 768 pages of
# a file; a loop of cm-faults maps, touches and unmaps 4 pages at a time
# in e on CPU 1, until told to stop.  force_empty first reclaims all it
# can; the limit, written on CPU 0 once the file is in, is the usage
# left then plus 16 pages: reclaim drops the file, and what stays fits.
# So the write succeeds, or, if it fails with EBUSY, usage_in_bytes
# must read above the limit refused.  (memcg's usage counts the pages
# its CPUs hold ahead, so its EBUSY agrees with its usage; the kit's
# usage leaves them out, so the kit must not count them when it sets a
# limit either.)
mkdir /container/e
start_held /tmp/o/e.out taskset -c 1 in_c e cm-alloc mlock 200 --hold
held=$HELD_PID
rm -f /tmp/o/stop
taskset -c 1 in_c e sh -c 'while [ ! -e /tmp/o/stop ]; do
	cm-faults 4 1000 || exit 1; done' >/dev/null 2>&1 &
loop=$!
sleep 1
wr e force_empty 1 >/dev/null	# what cannot be reclaimed stays
u0=$(pages e)
remount /mnt
in_c e cat /mnt/f3m >/dev/null
u1=$(pages e) target=$((u0 + 16))
r=$(taskset -c 0 cm-write /container/e/memory.limit_in_bytes $((target * 4096)) |
	cut -d' ' -f1)
after=$(pages e)
points 4
case $r in
ok) rc=0 ;;
errno=EBUSY) [ "$after" -gt "$target" ] && rc=0 || rc=1 ;;
*) rc=1 ;;
esac
is "$rc" 0 "limit $target pages (usage $u1, $u0 without the file), CPU 1 faulting: $r, usage then $after"
touch /tmp/o/stop
wait_within 20 "$loop"
release "$held"
# @cm-end busy-fits

# @cm-begin max-usage
ok "cm-alloc touches 512 anon pages in o" in_c o cm-alloc anon 512
points 2
atleast "$(( $(f o max_usage_in_bytes) / 4096 ))" 512 \
	"max_usage_in_bytes kept the peak: $(( $(f o max_usage_in_bytes) / 4096 )) pages"
is "$(wr o max_usage_in_bytes 0):$(f o max_usage_in_bytes)" "ok:$(f o usage_in_bytes)" \
	"writing 0 starts it over from usage"
# memcg resets on any write; the kit takes 0 only, as in chapter 10.
points 1
side_is "$(wr o max_usage_in_bytes 5)" errno=EINVAL ok "writing 5 to max_usage_in_bytes"
# @cm-end max-usage

# @cm-begin oom
# Over the limit with swap, anonymous pages go to swap: no kill.
wr o limit_in_bytes 1M >/dev/null
in_c o cm-alloc anon 512 >/dev/null 2>&1
points 2
is "$?" 0 "with swap, 512 anon pages in a 256-page limit: no kill"
# Without swap, nothing can make room: the allocation ends in a kill of
# its task, SIGKILL from the OOM killer (status 137), never in an error
# the program has to notice.
swapoff /dev/zram0
points 12
for k in anon shmem sysv locked; do
	in_c o cm-alloc $k 512 >/tmp/o/$k.out 2>&1
	is "$?" 137 "no swap, 512 $k pages in a 256-page limit: killed"
done
# mlock() faults the pages in itself: memcg v1 may refuse (EAGAIN) or
# kill.  Either is an answer; running on with fewer pages is not.
in_c o cm-alloc mlock 512 >/tmp/o/mlock.out 2>&1
rc=$?
grep -q errno=EAGAIN /tmp/o/mlock.out && [ $rc = 1 ] && rc=EAGAIN
case $rc in 137 | EAGAIN) r=0 ;; *) r=1 ;; esac
is "$r" 0 "no swap, mlock() of 512 pages: killed or EAGAIN ($rc)"
# A new container: memcg keeps a few pages charged ahead on each CPU
# (its charge stock), and o's could serve a page without a limit check.
mkdir /container/z
is "$(wr z limit_in_bytes 0)" ok "a new container takes a limit of 0"
in_c z cm-alloc anon 1 >/dev/null 2>&1
is "$?" 137 "and the first page it charges kills"
wr o limit_in_bytes -1 >/dev/null
swapon /dev/zram0
# @cm-end oom

# @cm-begin page-files
# The kit keeps Part I's page files, and they agree with the byte files;
# memcg has no such files.
wr a limit_in_bytes 2M >/dev/null
points 4
if [ $side = kit ]; then
	is "$(( $(f a limit) * 4096 )):$(( $(f a usage) * 4096 ))" \
		"$(f a limit_in_bytes):$(f a usage_in_bytes)" \
		"memory.limit and memory.usage, in bytes, are the byte files"
	is "$(( $(f a max_usage) * 4096 ))" "$(f a max_usage_in_bytes)" \
		"memory.max_usage too"
	remount /mnt
	in_c a cat /mnt/f3m >/dev/null
	is "$(wr a limit 64):$(f a limit_in_bytes)" ok:262144 \
		"memory.limit 64, below usage, reclaims too"
	wr a limit 512 >/dev/null
	start_held /tmp/o/lock2.out in_c a cm-alloc mlock 128 --hold
	is "$(wr a limit 64):$(f a limit)" errno=EBUSY:512 \
		"memory.limit 64 below 128 locked pages: EBUSY"
	release "$HELD_PID"
else
	for p in limit usage max_usage control_type; do
		not_ok_if "memcg has no memory.$p" test -e /container/a/memory.$p
	done
fi
# @cm-end page-files

done_testing
