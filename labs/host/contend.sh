#!/bin/sh
# contend.sh NN RUNS - the contention experiment (make contend CH=NN):
# labs/contend on three kernels of the chapter-NN tree, the kit
# (build/chNN), the same tree without a controller (chNN-none) and 6.1's
# memcg (chNN-memcg), on 1, 2 and 4 vCPUs, RUNS times over.  No -icount:
# the guest's clock is the host's, so the figures are nanoseconds and
# include what one vCPU's work costs the others.  Each run boots the
# three kernels one after the other, so that a ratio is taken side by
# side, and the table gives, per CPU count, the median ratio to the
# kernel without a controller and the spread (lowest-highest) over the
# runs.  The numbers go to build/contend/chNN.dat as well (for a plot).
#
# Under TCG every vCPU is a host thread; on a 2-core host, 4 vCPUs
# share 2 cores, so their times include waiting for one.  What this can
# show is a ratio that grows with the CPU count where the kit or memcg
# makes CPUs share a line, a lock or an interrupt; not what 64 real CPUs
# would see.  Builds any kernel that is missing or out of date.
set -eu
. labs/host/common.sh

nn=$1 runs=$2
[ "$(expr "$nn" + 0)" -ge 11 ] ||
	die "make contend: CH=$(expr "$nn" + 0): the side-by-side with memcg is Part II's, chapter 11 on"
for fl in default none memcg; do
	sh labs/host/kernel.sh "$nn" "$fl" >&2
done
out=$BUILD/contend
mkdir -p "$out"
raw=$out/ch$nn.raw
: >"$raw"
failed=0
for cpus in 1 2 4; do
	r=0
	while [ $r -lt "$runs" ]; do
		r=$((r + 1))
		for fl in default none memcg; do
			res=$(CM_CPUS=$cpus sh labs/host/run.sh "$nn" contend "$fl" 2>&1) ||
				{ failed=$((failed + 1)); echo "$res" | tail -n 5 >&2; }
			line=$(echo "$res" | sed -n 's/^ *# contend: //p' | tail -n 1)
			echo "run $r: $line" >&2
			[ -n "$line" ] && echo "run=$r $line" >>"$raw"
		done
	done
done

# For each CPU count and run, the kit's and memcg's one/siblings over
# none's root; then the median and the spread over the runs.
awk '
function field(line, k) {
	line = " " line
	return match(line, " " k "=[^ ]+") ? substr(line, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : ""
}
{ r = field($0, "run"); c = field($0, "cpus"); s = field($0, "side")
  key = c SUBSEP r
  if (s == "none") base[key] = field($0, "root")
  else { one[s, key] = field($0, "one"); sib[s, key] = field($0, "siblings") }
  cpus[c] = 1; runs[r] = 1 }
function stats(vals, n,   i, j, t) {
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
		if (vals[j] < vals[i]) { t = vals[i]; vals[i] = vals[j]; vals[j] = t }
	return sprintf("%.2f %.2f %.2f", vals[int((n + 1) / 2)], vals[1], vals[n])
}
END {
	print "# cpus  kit_one(med min max)  kit_siblings  memcg_one  memcg_siblings  none_root_ns(med)"
	for (c = 1; c <= 4; c++) {
		if (!(c in cpus)) continue
		line = c
		split("kit memcg", sides, " ")
		for (si = 1; si <= 2; si++) for (w = 1; w <= 2; w++) {
			n = 0
			for (r in runs) {
				key = c SUBSEP r
				v = (w == 1) ? one[sides[si], key] : sib[sides[si], key]
				if (base[key] > 0 && v > 0) vals[++n] = v / base[key]
			}
			line = line " " (n ? stats(vals, n) : "- - -")
		}
		n = 0
		for (r in runs) if (base[c SUBSEP r] > 0) vals[++n] = base[c SUBSEP r]
		split(stats(vals, n), m, " ")
		print line " " m[1]
	}
}' "$raw" >"$out/ch$nn.dat"

echo "contend: chapter $(expr "$nn" + 0), $runs runs; per fault, over the kernel without a controller (median, lowest-highest)"
awk 'NR > 1 { printf "  %d CPU%s  one container: kit %s (%s-%s), memcg %s (%s-%s);  siblings: kit %s (%s-%s), memcg %s (%s-%s);  none %d ns\n",
	$1, ($1 > 1 ? "s" : " "), $2, $3, $4, $8, $9, $10, $5, $6, $7, $11, $12, $13, $14 }' "$out/ch$nn.dat"
echo "contend: numbers in $out/ch$nn.dat, raw lines in $raw"
[ $failed = 0 ] || die "$failed of the runs failed (their last lines are above)"
