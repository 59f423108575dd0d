#!/bin/sh
# run.sh KERNEL_NN LAB_NN [FLAVOR] - boot the chapter-KERNEL_NN kernel in
# QEMU, run lab LAB_NN in the guest and judge the result.
#
# Output: the lab's TAP lines indented by four spaces, then one verdict
# line, "ok - ..." or "not ok - ...".  Exit 0 only if the lab passed.
#
# Verdicts:
#   PASS        every test point passed, the plan was met, the lab exited 0
#               and the console shows no kernel splat
#   FAIL        a test point failed, the plan was not met, or a splat
#   NO LAB      the guest never printed a TAP plan (boot failure, no init)
#   TIMEOUT     QEMU was still running after TIMEOUT seconds
#   HUNG        the kernel reported a soft lockup, an RCU stall or a hung
#               task; the run is stopped a few seconds later
#   QEMU ERROR  QEMU itself exited with an error
#   ONE CPU     the guest did not bring up two CPUs (every lab needs two)
#
# STOP=1 adds "cmstop" to the boot line: the lab stops at its first
# failing test point (the negative controls in check.sh use it).
set -u
. labs/host/common.sh

knn=$1 lnn=$2 flavor=${3:-default}
# LAB_NN "stress": the stress lab, labs/stress (make stress, which sets
# CM_CPUS and CM_STRESS="SECONDS,SEED"); "cost": labs/cost (make cost,
# which sets CM_CPUS=1 and CM_ICOUNT=1); "contend": labs/contend (make
# contend, which sets CM_CPUS).
case $lnn in
stress) labdir=labs/stress guestlab=stress ;;
cost) labdir=labs/cost guestlab=cost ;;
contend) labdir=labs/contend guestlab=contend ;;
*) labdir=labs/ch$lnn guestlab=ch$lnn ;;
esac
ncpus=${CM_CPUS:-2}
# A lab with "# icount: 1" in its lab.sh counts instructions, as make
# cost does: one CPU, one guest nanosecond per instruction.
if grep -q '^# icount: 1$' "$labdir/lab.sh" 2>/dev/null; then
	ncpus=1 CM_ICOUNT=1
fi
# KERNEL_NN "tree": the kernel of the reader's tree (make try, make grade).
guest_kernel "$knn" "$flavor"
initrd=$BUILD/initramfs.cpio.gz
# The lab's own timeout ("# timeout: N" in its lab.sh: a few times what
# it takes on a loaded laptop), three times that on the debug kernel
# (the memcg kernel runs as fast as the default one); a hung guest then
# costs about a minute, not five.  TIMEOUT= overrides.
timeout=$(sed -nE 's/^# timeout: ([0-9]+)$/\1/p' "$labdir/lab.sh" 2>/dev/null | head -n 1)
timeout=${timeout:-300}
[ "$flavor" = debug ] && timeout=$((timeout * 3))
# make stress works out its own, from its length and flavour.
timeout=${CM_LAB_TIMEOUT:-$timeout}
# A host that is busy already (a kernel build, another guest) runs the
# guest slower, by about its runnable tasks per core: so many times the
# time, up to four.  The load is the last minute's, read before QEMU
# adds its own.
load=$(awk -v n="$(nproc)" '{ f = int($1 / n + 0.5); print (f < 1 ? 1 : f > 4 ? 4 : f) }' /proc/loadavg)
timeout=$((timeout * load))
timeout=${TIMEOUT:-$timeout}
name="lab $lnn on kernel $kname"
dir=$LOGS/lab$lnn-$kname
[ -n "${LABFILE-}" ] && dir=$dir-own	# not over the lab's own logs
console=$dir/console.log
tap=$dir/tap.raw	# as the guest wrote it; tap.log is it without CRs

[ -f "$kernel" ] || die "$kernel missing: make kernel CH=$knn FLAVOR=$flavor"
[ -f "$initrd" ] || die "$initrd missing"
[ -f "$labdir/lab.sh" ] || die "$labdir/lab.sh missing"

extra=
[ "${STOP:-0}" = 1 ] && extra=cmstop
[ -f "$labdir/cmdline" ] && extra="$extra $(grep -v '^#' "$labdir/cmdline" | tr '\n' ' ')"
[ -n "${CM_STRESS-}" ] && extra="$extra cmstress=$CM_STRESS"

rm -rf "$dir"
mkdir -p "$dir"

# LABFILE=path: run that script instead of lab LAB_NN (whose cmdline and
# splats still apply).  It goes into a second cpio archive after the
# shared one, as /lab/own/lab.sh; the kernel unpacks both.
if [ -n "${LABFILE-}" ]; then
	[ -f "$LABFILE" ] || die "LABFILE=$LABFILE: no such file"
	mkdir -p "$dir/own/lab/own"
	cp "$LABFILE" "$dir/own/lab/own/lab.sh"
	(cd "$dir/own" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -9n | cat "$initrd" - >"$dir/initrd"
	initrd=$dir/initrd guestlab=own name="$LABFILE (as lab $lnn) on kernel $kname"
fi
start=$(now)
# Two CPUs, as two sockets: the lab kernels have no ACPI, and with
# "-smp 2" QEMU describes the second CPU only in its ACPI tables, so the
# guest would bring up one.  Two sockets go into the MP table too.
# shellcheck disable=SC2046
# CM_ICOUNT=1 (make cost): one guest nanosecond per instruction.
icount=
[ -n "${CM_ICOUNT-}" ] && icount="-icount shift=0"
qemu-system-x86_64 $(qemu_accel) $icount -m "${MEM:-256M}" -smp cpus=$ncpus,sockets=$ncpus \
	-nodefaults -no-reboot -display none \
	-monitor "unix:$dir/monitor.sock,server=on,wait=off" \
	-serial "file:$console" -serial "file:$tap" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "$(guest_cmdline) cmlab=$guestlab cmkernel=$cmkernel $extra" \
	</dev/null >"$dir/qemu.log" 2>&1 &
qemu=$!
trap 'kill $qemu 2>/dev/null' INT TERM HUP
# A kernel that reports a hang of its own (a soft lockup after 20 s, an
# RCU stall, a task blocked for 30 s) will not recover: give it a few
# seconds to print the rest, then stop, rather than wait for the timeout.
# A splat the lab does not expect (see below) fails the lab whatever
# comes next, and what comes next is often a hang: stop 10 s after it.
hang_re='watchdog: BUG: soft lockup|rcu: INFO: .*detected stall|INFO: task .* blocked for more than'
# @cm-begin splat-re
# Kernel messages carry a "[    1.234567] " stamp; the lab's own echo on
# the console does not, so a lab printing "WARNING:" is not a splat.
splat_re='^\[ *[0-9]+\.[0-9]+\] .*(BUG:|WARNING:|Oops|Kernel panic|general protection fault|INFO: |UBSAN:|list_add corruption|list_del corruption)'
# @cm-end splat-re
expect_re=$(sed -nE 's/^[0-9]+[[:space:]]+//p' "$labdir/splats" 2>/dev/null | paste -sd'|')
unexpected_splat() {
	grep -aE "$splat_re" "$console" 2>/dev/null |
		grep -qavE "${expect_re:-^$}"
}
hung= splat= stop_at=
while kill -0 $qemu 2>/dev/null && [ $(($(now) - start)) -lt "$timeout" ]; do
	sleep 1
	if [ -z "$stop_at" ] && grep -qaE "$hang_re" "$console" 2>/dev/null; then
		hung=$(now) stop_at=$(($(now) + 5))
	elif [ -z "$stop_at" ] && unexpected_splat; then
		splat=$(now) stop_at=$(($(now) + 10))
	fi
	[ -n "$stop_at" ] && [ "$(now)" -ge "$stop_at" ] && break
done
if kill -0 $qemu 2>/dev/null; then
	# Out of time: before QEMU goes, ask it where every CPU is.
	python3 labs/host/backtrace.py "$dir/monitor.sock" "$(dirname "$kernel")/System.map" \
		>"$dir/backtrace.txt" 2>&1
	kill $qemu 2>/dev/null
	sleep 1
	kill -9 $qemu 2>/dev/null
	wait $qemu
	rc=124
else
	wait $qemu
	rc=$?
fi
secs=$(($(now) - start))

# @cm-begin splats
grep -aE "$splat_re" "$console" >"$dir/splats" 2>/dev/null

# Expected splats (labs/chNN/splats: "COUNT ERE" per line) must appear
# exactly COUNT times; they are then not held against the lab.
bad_expect=
if [ -f "$labdir/splats" ]; then
	while read -r count re; do
		case $count in '' | '#'*) continue ;; esac
		got=$(grep -acE "$re" "$dir/splats")
		if [ "$got" != "$count" ]; then
			bad_expect="$bad_expect; expected $count console lines matching '$re', saw $got"
		fi
		grep -avE "$re" "$dir/splats" >"$dir/splats.tmp"
		mv "$dir/splats.tmp" "$dir/splats"
	done <"$labdir/splats"
fi
# @cm-end splats

tr -d '\r' <"$tap" >"$dir/tap.log" 2>/dev/null
rm -f "$tap"
sed 's/^/    /' "$dir/tap.log"
plan=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$dir/tap.log" | head -n 1)
passed=$(grep -cE '^ok ' "$dir/tap.log")
failed=$(grep -cE '^not ok ' "$dir/tap.log")
exit_line=$(sed -nE 's/^# cm-lab-exit: ([0-9]+)$/\1/p' "$dir/tap.log")
cpus=$(sed -nE 's/.*smp: Brought up [0-9]+ nodes?, ([0-9]+) CPUs?.*/\1/p' "$console" | head -n 1)

# @cm-begin verdicts
why=
if [ -n "$hung" ]; then
	why="HUNG: the kernel reported a hang after $((hung - start)) s: $(grep -maE "$hang_re" "$console" |
		sed -E 's/^\[ *[0-9.]+\] //' | cut -c1-80)"
elif [ -n "$splat" ] && [ $rc -eq 124 ]; then
	why="STOPPED: still running 10 s after a kernel splat (at $((splat - start)) s)"
elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	why="TIMEOUT: QEMU still running after $timeout s"
	[ -z "${TIMEOUT-}" ] && [ "$load" -gt 1 ] &&
		why="$why (the lab's timeout times $load, for the host's load)"
elif [ $rc -ne 0 ]; then
	why="QEMU ERROR: exit status $rc ($(head -n 3 "$dir/qemu.log" | tr '\n' ' '))"
elif [ -z "$plan" ]; then
	why="NO LAB: the guest never printed a TAP plan (boot failure?)"
elif [ "${cpus:-0}" -lt "$ncpus" ]; then
	why="ONE CPU: the guest brought up ${cpus:-no} CPU(s), not $ncpus"
elif [ "$failed" -gt 0 ]; then
	why="FAIL: $failed of $plan test points failed"
elif [ "$passed" -ne "$plan" ]; then
	why="FAIL: planned $plan test points, $passed passed"
elif [ "$exit_line" != 0 ]; then
	why="FAIL: the lab script exited with status ${exit_line:-unknown}"
fi
if [ -s "$dir/splats" ]; then
	why="${why:+$why; }FAIL: kernel splat on the console"
fi
[ -n "$bad_expect" ] && why="${why:+$why; }FAIL${bad_expect}"
# A lab that calls a function it never sourced, or a program the guest
# lacks, has tested nothing at that line, whatever it printed.
sherr=$(grep -am 1 -E '^/lab/.*: line [0-9]+: .*not found' "$console" | tr -d '\r')
[ -n "$sherr" ] && why="${why:+$why; }FAIL: shell error in the lab: $sherr"
# @cm-end verdicts

# The verdict line goes into the log directory too (make grade reads it).
if [ -z "$why" ]; then
	echo "ok - $name: $passed/$plan passed, clean console ($secs s)" | tee "$dir/verdict"
	exit 0
fi

# The account below quotes lines the lab printed already; "| " in front
# keeps make check from counting a quoted "ok 24" as a second result.
echo "not ok - $name: $why ($secs s)" | tee "$dir/verdict"
{
	if [ "$failed" -gt 0 ]; then
		echo "  failing test points:"
		grep -A4 -E '^not ok ' "$dir/tap.log" | sed 's/^/    | /'
	fi
	if [ -s "$dir/splats" ]; then
		echo "  splat, with the console around it:"
		first=$(grep -anE "$splat_re" "$console" | head -n 1 | cut -d: -f1)
		sed -n "$((first > 5 ? first - 5 : 1)),$((first + 25))p" "$console" | sed 's/^/    | /'
	else
		echo "  last console lines:"
		tail -n 15 "$console" | sed 's/^/    | /'
	fi
	if [ -s "$dir/backtrace.txt" ]; then
		echo "  where each CPU was when the time ran out (read by the host):"
		sed 's/^/    | /' "$dir/backtrace.txt"
	fi
	echo "  logs: $dir/ (console.log, tap.log)"
} >&2
exit 1
