#!/bin/sh
# Lab 2: the memory container's files.
#
# Mounts the "memory" subsystem on a v1 hierarchy, looks for the three
# files in the root and in (nested) children, round-trips the limit,
# throws bad input at it, and creates and removes groups. Nothing is
# charged in chapter 2; later chapters run this lab too, so it makes no
# claim about the root group's usage.
# timeout: 60
. /lab/lib/tap.sh
. /lab/lib/lib.sh

NOLIMIT=9223372036854775807	# LONG_MAX: a new group's limit, as in 2007
C=/container

# @cm-begin badinput
# Each line: what to write (cm-write escapes), the expected result.
BAD='
\n EINVAL
abc EINVAL
12abc EINVAL
-1 EINVAL
+1 EINVAL
0x10 EINVAL
1.5 EINVAL
1e3 EINVAL
\x201 EINVAL
1\x20 EINVAL
1\t EINVAL
1\n\n EINVAL
1\n2 EINVAL
1\0 EINVAL
18446744073709551616 ERANGE
99999999999999999999999 ERANGE
'
# @cm-end badinput
nbad=$(echo "$BAD" | grep -c .)

plan $((37 + nbad))

# @cm-begin mount
mkdir -p $C
ok "mount -t cgroup -o memory none $C" mount -t cgroup -o memory none $C
ok "/proc/cgroups lists the memory subsystem" grep -q '^memory[[:space:]]' /proc/cgroups
# @cm-end mount

# @cm-begin files
files_in() {		# files_in DIR: are all three files there?
	for f in usage limit failcnt; do
		[ -f "$1/memory.$f" ] || { diag "  no $1/memory.$f"; return 1; }
	done
}
ok "memory.{usage,limit,failcnt} in the root" files_in $C
ok "mkdir $C/a" mkdir $C/a
ok "mkdir $C/a/b (nested)" mkdir $C/a/b
ok "the files in a child" files_in $C/a
ok "the files in a grandchild" files_in $C/a/b
# @cm-end files

is "$(stat -c %a $C/a/memory.limit)" 644 "memory.limit is 0644"
is "$(stat -c %a $C/a/memory.usage)" 444 "memory.usage is 0444"
# From chapter 10, writing 0 to failcnt resets it: the file is 0644.
if [ "$(kernel_chapter)" -lt 10 ]; then
	is "$(stat -c %a $C/a/memory.failcnt)" 444 "memory.failcnt is 0444"
else
	is "$(stat -c %a $C/a/memory.failcnt)" 644 "memory.failcnt is 0644 (chapter 10)"
fi

# @cm-begin defaults
is "$(cat $C/memory.limit)" $NOLIMIT "root limit is the default (no limit)"
ok "root usage and failcnt are numbers" \
	grep -qE '^[0-9]+$' $C/memory.usage $C/memory.failcnt
points 2
is "$(cat $C/a/b/memory.limit)" $NOLIMIT "new group's limit: no limit"
is "$(cat $C/a/b/memory.usage)" 0 "new group's usage: 0"
is "$(cat $C/a/b/memory.failcnt)" 0 "new group's failcnt: 0"
# @cm-end defaults

# @cm-begin root-limit
# The root container holds every task outside a container and every
# kernel thread; a low limit there would stop the whole machine.  Its
# limit cannot be set (EINVAL), as in memcg.  (The value tried is huge,
# so a kernel that wrongly takes it still runs on.)
is "$(cm-write $C/memory.limit 1000000000)" "errno=EINVAL" \
	"root's memory.limit refuses a write (EINVAL)"
is "$(cat $C/memory.limit)" $NOLIMIT "and root's limit is unchanged"
# @cm-end root-limit

# @cm-begin roundtrip
L=$C/a/memory.limit
echo 100 >$L
points 2
is "$(cat $L)" 100 "echo 100 > memory.limit (with a newline)"
echo -n 200 >$L
is "$(cat $L)" 200 "echo -n 200 > memory.limit (without)"
points 2
is "$(cm-write $L '300\n')" "ok 4" "one write(2) of \"300\\n\" returns 4"
is "$(cm-write $L 400)" "ok 3" "one write(2) of \"400\" returns 3"
points 2
is "$(cat $L)" 400 "the limit reads back 400"
echo 010 >$L
is "$(cat $L)" 10 "010 is decimal ten, not octal"
echo 0 >$L
is "$(cat $L)" 0 "a limit of 0 is accepted"
echo 18446744073709551615 >$L
points 2
is "$(cat $L)" 18446744073709551615 "the largest value (ULONG_MAX) is accepted"
points 2
is "$(cat $C/a/b/memory.limit)" $NOLIMIT "the child's limit is its own"
# @cm-end roundtrip

# @cm-begin matrix
echo 1234 >$L
while read -r input want; do
	[ -n "$input" ] || continue
	got=$(cm-write $L "$input")
	is "$got $(cat $L)" "errno=$want 1234" "write \"$input\": $want, limit unchanged"
done <<EOF_BAD
$BAD
EOF_BAD
# "echo > memory.limit" writes just a newline, refused above. A write(2)
# of zero bytes never reaches the controller: cgroup_file_write() returns
# 0 for it, having written nothing.
points 2
is "$(cm-write $L '') $(cat $L)" "ok 0 1234" "a zero-byte write(2) changes nothing"
# @cm-end matrix

# @cm-begin readonly
# Mode 0444 keeps users out at open(2). Root passes the permission check
# (CAP_DAC_OVERRIDE) and the write(2) is refused: the file has no handler.
is "$(cm-write $C/a/memory.usage 5)" "errno=EINVAL" "root cannot write memory.usage"
if [ "$(kernel_chapter)" -lt 10 ]; then
	is "$(cm-write $C/a/memory.failcnt 0)" "errno=EINVAL" "root cannot write memory.failcnt"
else
	is "$(cm-write $C/a/memory.failcnt 5)" "errno=EINVAL" \
		"memory.failcnt takes 0 only (chapter 10): 5 is refused"
fi
is "$(cm-runas 65534 cm-write $C/a/memory.usage 5)" "errno=EACCES" \
	"uid 65534 cannot open memory.usage for writing"
is "$(cm-runas 65534 cm-write $L 5)" "errno=EACCES" "uid 65534 cannot write memory.limit"
is "$(cat $L) $(cat $C/a/memory.usage) $(cat $C/a/memory.failcnt)" "1234 0 0" \
	"nothing changed"
# @cm-end readonly

# @cm-begin rmdir
not_ok_if "rmdir a group with a child: refused" rmdir $C/a
ok "rmdir $C/a/b" rmdir $C/a/b
ok "rmdir $C/a" rmdir $C/a
ok "mkdir $C/a again" mkdir $C/a
is "$(cat $C/a/memory.limit)" $NOLIMIT "the new $C/a starts with no limit"
rmdir $C/a
# @cm-end rmdir

umount $C
done_testing
