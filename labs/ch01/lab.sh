#!/bin/sh
# Lab 1: resource counters.
#
# The chapter-1 kernel has the res_counter KUnit suite built in; the boot
# line has kunit.enable=1 (labs/ch01/cmdline), so the suite ran before
# /init started. This lab reads its KTAP results from debugfs, re-emits
# every case as a TAP test point, and checks that the expected number of
# cases ran and that the two deliberate underflow warnings were printed.
. /lab/lib/tap.sh

# @cm-begin setup
SUITE=res_counter
CASES=14		# KUNIT_CASE()s in kernel/res_counter_kunit.c
WARNINGS=2		# cases that uncharge more than was charged
RESULTS=/sys/kernel/debug/kunit/$SUITE/results
# @cm-end setup

plan $((CASES + 4))

ok "KTAP results for suite $SUITE in debugfs" test -r "$RESULTS"
cp "$RESULTS" /tmp/ktap 2>/dev/null || : >/tmp/ktap
diag "---- $RESULTS ----"
sed 's/^/#   /' /tmp/ktap
diag "----"

# @cm-begin cases
# The suite's own plan, "    1..N", says how many cases it has.
planned=$(sed -n 's/^    1\.\.\([0-9]*\)$/\1/p' /tmp/ktap | head -n 1)
is "${planned:-none}" "$CASES" "suite $SUITE has $CASES cases"

# One test point per case. 6.1 prints "    ok N name" (later kernels
# "    ok N - name"); "not ok", or no line at all, fails, and the case's
# KUnit diagnostics are shown.
i=1
while [ "$i" -le "$CASES" ]; do
	line=$(grep -E "^    (not )?ok $i (- )?[a-z_0-9]+" /tmp/ktap | head -n 1)
	name=$(echo "$line" | sed -E 's/^ *(not )?ok [0-9]+ (- )?//; s/ .*//')
	case $line in
	"    ok $i "*)
		_tap_result 0 "kunit $SUITE: $name" ;;
	"    not ok $i "*)
		_tap_result 1 "kunit $SUITE: $name"
		grep -E "^        # |^    # $name" /tmp/ktap | sed 's/^ */#   /' ;;
	*)
		_tap_result 1 "kunit $SUITE: case $i did not run" ;;
	esac
	i=$((i + 1))
done

# The suite's own result line sums up all of them.
ok "suite $SUITE passed as a whole" grep -qxE "ok 1 (- )?$SUITE" /tmp/ktap
# @cm-end cases

# @cm-begin warnings
# Each underflow must warn once. The console shows the same lines, and
# the host counts them (labs/ch01/splats).
warned=$(dmesg | grep -c "WARNING: .*res_counter_uncharge_locked")
is "$warned" "$WARNINGS" "underflow warned $WARNINGS times"
# @cm-end warnings

done_testing
