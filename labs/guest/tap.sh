# tap.sh - tiny TAP producer for the guest-side labs (busybox sh).
#
# Source it from a lab:   . /lab/lib/tap.sh
#
#   plan N                       announce N test points (call first)
#   ok "what" cmd [args...]      pass if the command exits 0
#   not_ok_if "what" cmd ...     pass if the command exits non-zero
#   is GOT WANT "what"           pass if the two strings are equal
#   within GOT WANT TOL "what"   pass if |GOT - WANT| <= TOL (integers)
#   atleast GOT MIN "what"       pass if GOT >= MIN (integers)
#   between GOT LO HI "what"     pass if LO <= GOT <= HI (integers)
#   skip "what" "why"            a test point that does not apply here
#   points N                     the next test point is worth N points
#                                for make grade (1 if not said)
#   diag "text"                  a "# text" comment line
#   done_testing                 print the tally; exit 1 if anything failed
#                                or the count does not match the plan

TAP_N=0
TAP_FAILED=0
TAP_PLANNED=0
TAP_POINTS=
# "cmstop" on the boot line: stop at the first failing test point.  The
# negative controls (a lab run on the kernel before its patch) only need
# to see one failure, and a lab that fails early may not finish at all.
TAP_STOP=0
grep -qw cmstop /proc/cmdline 2>/dev/null && TAP_STOP=1

plan() {
	TAP_PLANNED=$1
	echo "1..$1"
}

diag() {
	echo "# $*"
}

# @cm-begin points
# points N: the next test point is worth N points in make grade, which
# reads the weight off the point's line: "ok 3 - what [2 points]".  It
# hands back the exit status it found, so a weight may stand between a
# command and the point that reads its status:
#	wait "$hog"; points 6; is "$?" 137 "the hog was killed"
points() {
	_tap_rc=$?
	TAP_POINTS=" [$1 points]"
	return $_tap_rc
}
# @cm-end points

_tap_result() {		# $1 = 0 (pass) or 1 (fail), $2 = description
	TAP_N=$((TAP_N + 1))
	_w=$TAP_POINTS
	TAP_POINTS=
	if [ "$1" -eq 0 ]; then
		echo "ok $TAP_N - $2$_w"
	else
		echo "not ok $TAP_N - $2$_w"
		TAP_FAILED=$((TAP_FAILED + 1))
		if [ "$TAP_STOP" = 1 ]; then
			echo "# cmstop: stopping at the first failure"
			exit 1
		fi
	fi
}

# @cm-begin ok
ok() {
	_d=$1; shift
	if "$@"; then _tap_result 0 "$_d"; else _tap_result 1 "$_d"; fi
}

# @cm-end ok

not_ok_if() {
	_d=$1; shift
	if "$@"; then _tap_result 1 "$_d"; else _tap_result 0 "$_d"; fi
}

# @cm-begin is
is() {
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		diag "  got: '$1'"
		diag "  expected: '$2'"
	fi
}

# @cm-end is

_tap_int() {		# is $1 a (possibly negative) decimal integer?
	case $1 in
	'' | - | *[!0-9-]* | ?*-*) return 1 ;;
	esac
	return 0
}

within() {
	if ! _tap_int "$1" || ! _tap_int "$2" || ! _tap_int "$3"; then
		_tap_result 1 "$4"
		diag "  not integers: got='$1' want='$2' tolerance='$3'"
		return
	fi
	_diff=$(($1 - $2))
	[ "$_diff" -lt 0 ] && _diff=$((-_diff))
	if [ "$_diff" -le "$3" ]; then
		_tap_result 0 "$4"
	else
		_tap_result 1 "$4"
		diag "  got $1, expected $2 +/- $3 (off by $_diff)"
	fi
}

atleast() {
	if ! _tap_int "$1" || ! _tap_int "$2"; then
		_tap_result 1 "$3"
		diag "  not integers: got='$1' minimum='$2'"
		return
	fi
	if [ "$1" -ge "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		diag "  got $1, expected at least $2"
	fi
}

# between GOT LOW HIGH "what": GOT is from LOW to HIGH, both included.
between() {
	if ! _tap_int "$1" || ! _tap_int "$2" || ! _tap_int "$3"; then
		_tap_result 1 "$4"
		diag "  not integers: got='$1' low='$2' high='$3'"
		return
	fi
	if [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then
		_tap_result 0 "$4"
	else
		_tap_result 1 "$4"
		diag "  got $1, expected $2 to $3"
	fi
}

skip() {
	_tap_result 0 "$1 # SKIP $2"
}

# skip_n N "why": N test points that do not apply here.
skip_n() {
	_n=$1
	while [ "$_n" -gt 0 ]; do
		skip "not run" "$2"
		_n=$((_n - 1))
	done
}

# @cm-begin done-testing
done_testing() {
	if [ "$TAP_N" -ne "$TAP_PLANNED" ]; then
		diag "planned $TAP_PLANNED tests but ran $TAP_N"
		return 1
	fi
	diag "$((TAP_N - TAP_FAILED)) passed, $TAP_FAILED failed"
	[ "$TAP_FAILED" -eq 0 ]
}
# @cm-end done-testing
