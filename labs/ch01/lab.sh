#!/bin/sh
# Lab 1: resource counters.
#
# The chapter-1 kernel has the res_counter KUnit suite built in; the boot
# line has kunit.enable=1 (labs/ch01/cmdline), so the suite ran before
# /init started. This lab takes the suite's KTAP from the kernel log,
# re-emits every case as a TAP test point, and checks that the expected
# number of cases ran, that debugfs has the suite's verdict, and that the
# one deliberate underflow warning was printed (the warning is
# WARN_ON_ONCE, so the second underflow case is silent).
# timeout: 60
. /lab/lib/tap.sh
. /lab/lib/lib.sh

# @cm-begin setup
SUITE=res_counter
CASES=15		# KUNIT_CASE()s in kernel/res_counter_kunit.c
# chapter 7 adds a case, for res_counter_charge_over()
[ "$(kernel_chapter)" -ge 7 ] && CASES=16
# chapter 10 adds one, for max_usage and res_counter_reset()
[ "$(kernel_chapter)" -ge 10 ] && CASES=17
# chapter 11 adds one, for res_counter_set_limit()
[ "$(kernel_chapter)" -ge 11 ] && CASES=18
# chapter 12 adds one, for a counter with a parent
[ "$(kernel_chapter)" -ge 12 ] && CASES=19
# chapter 13 adds one, for res_counter_charge_ahead()
[ "$(kernel_chapter)" -ge 13 ] && CASES=20
WARNINGS=1		# WARN_ON_ONCE: the first of the two underflow cases
RESULTS=/sys/kernel/debug/kunit/$SUITE/results
# @cm-end setup

plan $((CASES + 4))

# @cm-begin ktap
# The suite's KTAP, from its "# Subtest:" line to its result line, taken
# from the kernel log. (debugfs has it too, but 6.1 keeps only 512 bytes
# of log per case there, so a failing case can lose its result line.)
dmesg | sed 's/^\[[^]]*\] //' |
	sed -nE "/^    # Subtest: $SUITE\$/,/^(not )?ok [0-9]+ (- )?$SUITE\$/p" >/tmp/ktap
diag "---- KTAP of suite $SUITE, from dmesg ----"
sed 's/^/#   /' /tmp/ktap
diag "----"
ok "KTAP results for suite $SUITE in debugfs" test -r "$RESULTS"
# @cm-end ktap

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
		grep -E "^    # $name: " /tmp/ktap | sed 's/^ */#   /' ;;
	*)
		_tap_result 1 "kunit $SUITE: case $i did not run" ;;
	esac
	i=$((i + 1))
done

# The suite's verdict, as debugfs reports it, sums up all of them.
ok "suite $SUITE passed as a whole" grep -qxE "ok 1 (- )?$SUITE" "$RESULTS"
# @cm-end cases

# @cm-begin warnings
# The first underflow warns, once per boot. The console shows the same lines, and
# the host counts them (labs/ch01/splats).
warned=$(dmesg | grep -c "WARNING: .*res_counter_uncharge_locked")
points 2
is "$warned" "$WARNINGS" "underflow warned $WARNINGS times"
# @cm-end warnings

done_testing
