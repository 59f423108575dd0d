#!/bin/sh
# cost.sh NN FLAVOR - build the chapter-NN kernel and run the cost lab,
# labs/cost/lab.sh, on it: one CPU, "-icount shift=0", so that its
# figures are instructions.  Prints the lab, then one line:
#   cost: chapter NN (FLAVOR): root N, container M, depth 2 N, depth 4 N,
#   depth 8 N instructions per fault
set -eu
. labs/host/common.sh

nn=$1 flavor=$2
sh labs/host/kernel.sh "$nn" "$flavor"
out=$(CM_CPUS=1 CM_ICOUNT=1 sh labs/host/run.sh "$nn" cost "$flavor") && rc=0 || rc=$?
echo "$out"
line=$(echo "$out" | sed -n 's/^ *# cost: //p' | tail -n 1)
[ -n "$line" ] || die "the cost lab printed no cost line"
echo "cost: chapter $(expr "$nn" + 0) ($flavor): $(echo "$line" |
	sed 's/ /, /g; s/=/ /g; s/depth\([0-9]\)/depth \1/g') instructions per fault"
exit $rc
