#!/bin/sh
# Lab 10: statistics.  memory.stat says what a container pays for, by
# kind of page, and its lines add up: cache + rss is the usage, and so
# is pgpgin - pgpgout (one charge event per page: no huge pages in the
# lab kernels).  memory.max_usage keeps the peak; it and failcnt start
# over when 0 is written, and refuse anything else.
# timeout: 120
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 51

# @cm-begin helpers
install_in_c
mkdir -p /tmp/o

# size C NAME: a size line of C's memory.stat, in pages ("missing" if
# the line is not there).  event C NAME: an event line, as it is.
size() {
	awk -v k="$2" '$1 == k { f = 1; print $2 / 4096 }
		END { if (!f) print "missing" }' "/container/$1/memory.stat"
}
event() {
	awk -v k="$2" '$1 == k { f = 1; print $2 }
		END { if (!f) print "missing" }' "/container/$1/memory.stat"
}

# adds_up C WHEN: one point: cache + rss, and pgpgin - pgpgout, both
# equal C's usage.  Exact, for a container whose tasks are asleep: a
# charge and its statistics change together.
adds_up() {
	_u=$(usage "$1")
	_s=$(( $(size "$1" cache) + $(size "$1" rss) ))
	_e=$(( $(event "$1" pgpgin) - $(event "$1" pgpgout) ))
	is "$_s:$_e" "$_u:$_u" "$2: cache + rss = pgpgin - pgpgout = usage ($_u)"
}

# snap STEP: one "# snap" line of a's usage and memory.stat in pages,
# for the chapter's plot: usage, then the five LRU lines, then rss,
# cache, shmem and mapped_file.
snap() {
	awk -v step="$1" -v u="$(usage a)" '{ v[$1] = $2 / 4096 } END {
		printf "# snap %s %d", step, u
		n = split("inactive_anon active_anon inactive_file active_file " \
			"unevictable rss cache shmem mapped_file", k)
		for (i = 1; i <= n; i++) printf " %d", v[k[i]]
		print "" }' /container/a/memory.stat
}

# settle: the output files go (tmpfs pages, charged to whoever wrote
# them), the batches are drained, and /mnt's page cache is dropped.
settle() {
	rm -f /tmp/o/*
	drain_cpus
	remount /mnt
}
# @cm-end helpers

mkdir -p /container
ok "the memory controller mounts" mount -t cgroup -o memory none /container
ok "ext2 on zram at /mnt" zram_ext2 32 /mnt
dd if=/dev/zero of=/mnt/f256 bs=4096 count=256 2>/dev/null
dd if=/dev/zero of=/mnt/f64 bs=4096 count=64 2>/dev/null
dd if=/dev/zero of=/mnt/big bs=4096 count=2048 2>/dev/null
mkdir /container/a /container/b
settle

# @cm-begin format
# The file: memcg v1's lines, in its order, "name value", whole numbers.
names="cache rss shmem mapped_file pgpgin pgpgout pgfault pgmajfault"
names="$names inactive_anon active_anon inactive_file active_file unevictable"
is "$(awk '{ print $1 }' /container/a/memory.stat | head -n 13 | xargs)" \
	"$names" "memory.stat has memcg v1's lines, in its order"
ok "every value is a whole number" \
	awk '$2 !~ /^[0-9]+$/ { exit 1 }' /container/a/memory.stat
ok "a new container's lines are all 0 (but its limit)" \
	awk '$1 !~ /hierarchical/ && $2 != 0 { exit 1 }' /container/a/memory.stat
# No limit reads as memcg's largest page count, in bytes.
is "$(event a hierarchical_memory_limit)" 9223372036854771712 \
	"no limit: hierarchical_memory_limit reads as memcg's"
echo 1000 >/container/a/memory.limit
is "$(event a hierarchical_memory_limit)" 4096000 \
	"a 1000-page limit: 4096000 bytes"
echo 9223372036854775807 >/container/a/memory.limit
# a has no children: its subtree is itself (before chapter 12, with no
# hierarchy, every container's was).
ok "each total_ line repeats the container's own line" \
	awk '{ v[$1] = $2 } END { for (k in v) if (k ~ /^total_/ &&
		v[k] != v[substr(k, 7)]) exit 1 }' /container/a/memory.stat
# @cm-end format

# @cm-begin anon
# Anonymous pages are rss.  As in lab 4, compare a 257-page run of
# cm-anon with a 1-page one: the difference is the 256 pages.
start_held /tmp/o/one.out in_c a cm-anon 1 --hold
r1=$(size a rss)
release "$HELD_PID"
rm -f /tmp/o/one.out
f0=$(event a pgfault)
in0=$(event a pgpgin)
ok "cm-anon holds 257 pages in a" start_held /tmp/o/anon.out in_c a cm-anon 257 --hold
drain_cpus
snap "anon-held"
points 8
within "$(( $(size a rss) - r1 ))" 256 4 \
	"rss grew by 256 pages over the 1-page run (stack placement: +/-4)"
# cm-anon's only cache page is its output file, a page of /tmp's tmpfs.
is "$(size a cache):$(size a shmem)" 1:1 "cache and shmem: its output file, 1 page"
# shmem pages are swap-backed: they live on the anon lists too.
is "$(( $(size a inactive_anon) + $(size a active_anon) ))" \
	"$(( $(size a rss) + $(size a shmem) ))" \
	"the anon LRU lists hold the anonymous pages and the shmem one"
points 2
atleast "$(( $(event a pgfault) - f0 ))" 256 "pgfault counts at least its 256 faults"
is "$(event a pgmajfault)" 0 "and none was major: nothing was read from disk"
points 4
adds_up a "a hog held"
release "$HELD_PID"
rm -f /tmp/o/anon.out
is "$(size a rss):$(usage a)" 0:0 "its exit takes rss back to 0"
atleast "$(event a pgpgout)" "$(( $(event a pgpgin) - in0 ))" \
	"pgpgout counts every page given back"
# @cm-end anon

# @cm-begin cache
# Read, not mapped: cache, on the file LRU lists, mapped_file 0.
in_c a cat /mnt/f256 >/dev/null
drain_cpus
snap "file-read"
points 6
within "$(size a cache)" 258 2 "a read 256 file pages: cache (+ 0..4 ext2 metadata)"
is "$(size a mapped_file)" 0 "read(2) maps nothing: mapped_file 0"
is "$(( $(size a inactive_file) + $(size a active_file) ))" "$(size a cache)" \
	"the cached pages are all on the file LRU lists"
# A page read twice is activated; a page read once is not.
in_c a cat /mnt/f64 >/dev/null
in_c a cat /mnt/f64 >/dev/null
drain_cpus
snap "read-twice"
points 2
atleast "$(size a active_file)" 64 "f64, read twice, is on the active list"
points 3
adds_up a "cat exited"
# @cm-end cache

# @cm-begin mapped
# mapped_file: the cached pages of the container that some task maps,
# whoever that task is.
start_held /tmp/o/map.out in_c a cm-file /mnt/f256 --mmap --hold
ma=$HELD_PID
points 6
is "$(size a mapped_file)" 256 "cm-file maps f256 in a: mapped_file 256"
start_held /tmp/o/mapb.out in_c b cm-file /mnt/f256 --mmap --hold
mb=$HELD_PID
snap "mapped"
points 3
is "$(size a mapped_file):$(size b mapped_file)" 256:0 \
	"b maps a's pages: they stay a's, in a's mapped_file"
release "$ma"
points 3
is "$(size a mapped_file)" 256 "a's task unmaps them; b still maps them: still 256"
release "$mb"
is "$(size a mapped_file)" 0 "b unmaps them too: 0"
within "$(size a cache)" 323 4 "and stay cached: f256, f64, ext2 metadata and a's output file"
settle
adds_up a "the cache dropped"
# @cm-end mapped

# @cm-begin shmem
# tmpfs pages are shmem, and cache counts them too.
in_c a dd if=/dev/zero of=/tmp/o/shm bs=4096 count=128 2>/dev/null
snap "shmem"
points 4
is "$(size a shmem)" 128 "128 pages written to tmpfs: shmem 128"
atleast "$(size a cache)" 128 "cache includes them"
rm -f /tmp/o/shm
is "$(size a shmem)" 0 "the file removed: shmem 0"
# @cm-end shmem

# @cm-begin mlock
# Locked pages are on the unevictable list.
ok "cm-anon locks 128 pages in a" start_held /tmp/o/lock.out in_c a cm-anon 128 --mlock --hold
drain_cpus
snap "mlocked"
points 4
is "$(size a unevictable)" 128 "unevictable: the 128 locked pages"
release "$HELD_PID"
drain_cpus
is "$(size a unevictable)" 0 "unlocked at exit: 0"
settle
# @cm-end mlock

# @cm-begin stream
# A stream 8 times the limit.  Reclaim (chapter 6) moves up to 32 pages
# from the active list to the inactive one each round and frees from
# the inactive one: f64's active pages, unused since, go too.
in_c a cat /mnt/f64 >/dev/null
in_c a cat /mnt/f64 >/dev/null
drain_cpus
act=$(size a active_file)
snap "before-stream"
diag "before the stream: active_file $act pages"
echo 0 >/container/a/memory.max_usage
echo 0 >/container/a/memory.failcnt
points 2
is "$(cat /container/a/memory.max_usage):$(cat /container/a/memory.failcnt)" \
	"$(usage a):0" "writing 0 starts max_usage from usage, failcnt from 0"
in0=$(event a pgpgin)
out0=$(event a pgpgout)
echo 256 >/container/a/memory.limit
in_c a cat /mnt/big >/dev/null
drain_cpus
snap "after-stream"
max=$(cat /container/a/memory.max_usage)
diag "after the stream: max_usage $max, failcnt $(failcnt a)," \
	"active_file $(size a active_file), inactive_file $(size a inactive_file)"
points 3
within "$max" 258 2 "max_usage holds the peak: the limit (+ 0..4 ext2 metadata)"
atleast "$(failcnt a)" 1 "failcnt counts the charges that had to reclaim"
points 3
atleast "$(( $(event a pgpgin) - in0 ))" 2048 "pgpgin grew by at least the stream's 2048 pages"
atleast "$(( $(event a pgpgout) - out0 ))" 1792 "pgpgout by at least the 1792 that had to go"
points 2
atleast "$((act - 1))" "$(size a active_file)" "reclaim deactivated f64's pages"
points 3
adds_up a "after the stream"
echo 9223372036854775807 >/container/a/memory.limit
# @cm-end stream

# @cm-begin peak
# The peak stays when usage falls.
u0=$(usage a)
echo 0 >/container/a/memory.max_usage
start_held /tmp/o/peak.out in_c a cm-anon 512 --hold
release "$HELD_PID"
rm -f /tmp/o/peak.out
points 2
atleast "$(cat /container/a/memory.max_usage)" $((u0 + 512)) \
	"a 512-page run on top of $u0 cached pages: max_usage holds the sum"
is "$(usage a)" "$u0" "while usage is back where it was"
# @cm-end peak

# @cm-begin bad
# Anything but 0 is refused, and changes nothing.
# (cm-write makes one write(2) and prints its result; see lab 2.)
# (The stream left failcnt above 0, the last run max_usage above 512.)
bad=0
for f in max_usage failcnt; do
	before=$(cat /container/a/memory.$f)
	for v in 5 -1 abc 00 ' 0' '0 ' 0x0 '0\n0' '0\n\n' '0\0'; do
		got=$(cm-write /container/a/memory.$f "$v" 2>/dev/null)
		if [ "$got" != errno=EINVAL ]; then
			diag "memory.$f, write '$v': $got"
			bad=1
		fi
		[ "$(cat /container/a/memory.$f)" = "$before" ] || bad=1
	done
done
points 3
is "$bad" 0 "max_usage and failcnt refuse 5, -1, abc, 00, ' 0', '0 ', 0x0, two lines, a NUL"
is "$(cm-write /container/a/memory.stat 0 2>/dev/null)" errno=EINVAL "a write to memory.stat is refused"
is "$(cm-write /container/a/memory.failcnt 0):$(failcnt a)" "ok 1:0" \
	"one write of 0, no newline, resets failcnt"
# @cm-end bad

# @cm-begin teardown
settle
ok "everything back to 0 in a" \
	awk '$1 ~ /^(total_)?(cache|rss|shmem|mapped_file|inactive_|active_|unevictable)/ &&
		$2 != 0 { exit 1 }' /container/a/memory.stat
adds_up a "at the end"
adds_up b "b, which only mapped"
ok "rmdir a and b" rmdir /container/a /container/b
# The root's lines add up too, but the lab's own commands run in the
# root and charge it as they read it: a few pages either way.
root=$(( $(awk '$1 == "cache" || $1 == "rss" { s += $2 } END { print s / 4096 }' \
	/container/memory.stat) ))
within "$root" "$(usage)" 16 "the root: cache + rss = usage (+/- 16: the lab runs there)"
# @cm-end teardown

done_testing
