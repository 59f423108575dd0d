#!/bin/sh
# taptest.sh - the guest's TAP library, tested on the host (a second).
# Every lab leans on labs/guest/tap.sh: a helper that loses an exit
# status or passes a wrong number makes a lab lie.  Each case runs a
# small lab under the guest's shell (busybox ash, as the initramfs has
# it) and compares what it printed.
set -u
command -v busybox >/dev/null || { echo "not ok - tap.sh: busybox is missing (make deps)"; exit 1; }
lib=labs/guest/tap.sh
n=0 bad=0

# case WHAT WANT SCRIPT: run SCRIPT after sourcing the library; pass if
# its output contains the line WANT.
case_() {
	n=$((n + 1))
	got=$(busybox sh -c ". $lib; $3" 2>&1)
	if printf '%s\n' "$got" | grep -qxF -- "$2"; then
		echo "ok $n - tap.sh: $1"
	else
		echo "not ok $n - tap.sh: $1"
		printf '%s\n' "$got" | sed 's/^/    # /'
		bad=$((bad + 1))
	fi
}

case_ "points keeps the status of the command before it" \
	"ok 1 - killed [6 points]" \
	'sh -c "kill -KILL \$\$" & wait $!; points 6; is "$?" 137 killed'
case_ "a weight goes to the next point only" \
	"ok 2 - second" 'points 3; ok first true; ok second true'
case_ "is fails on a different string" \
	"not ok 1 - differ" 'is 1 2 differ'
case_ "within fails outside its tolerance" \
	"not ok 1 - far" 'within 10 5 4 far'
case_ "within passes at its tolerance" \
	"ok 1 - edge" 'within 9 5 4 edge'
case_ "atleast refuses a non-number" \
	"not ok 1 - word" 'atleast abc 1 word'
case_ "between passes at both ends" \
	"ok 2 - high" 'between 3 3 5 low; between 5 3 5 high'
case_ "between fails above its range" \
	"not ok 1 - above" 'between 6 3 5 above'
case_ "between fails below its range" \
	"not ok 1 - below" 'between 2 3 5 below'
case_ "between refuses a non-number" \
	"not ok 1 - empty" 'between "" 3 5 empty'
case_ "done_testing fails when the count misses the plan" \
	"# planned 2 tests but ran 1" 'plan 2; ok one true; done_testing'
case_ "done_testing exits 1 after a failure" \
	"rc=1" 'plan 1; ok one false; (done_testing) >/dev/null; echo rc=$?'
[ "$bad" -eq 0 ]
