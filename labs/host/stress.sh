#!/bin/sh
# stress.sh NN FLAVOR SECONDS SEED CPUS - build the chapter-NN kernel
# (FLAVOR: debug by default, see the Makefile) and run the stress lab,
# labs/stress/lab.sh, on it: SECONDS of everything at once on CPUS
# virtual CPUs, from SEED.  Its verdict is run.sh's, so a kernel splat
# anywhere in the run fails it.
set -eu
. labs/host/common.sh

nn=$1 flavor=$2 secs=$3 seed=$4 cpus=$5
sh labs/host/kernel.sh "$nn" "$flavor"
echo "stress: chapter $(expr "$nn" + 0) ($flavor), $secs s, seed $seed, $cpus CPUs"
echo "stress: to replay this schedule: make stress CH=$(expr "$nn" + 0) SEED=$seed SECONDS=$secs CPUS=$cpus FLAVOR=$flavor"
# The guest's clock runs the workers for SECONDS; boot, setup, the quiet
# points and teardown come on top, about three times slower on debug.
case $flavor in
debug) limit=$((secs * 2 + 600)) ;;
*) limit=$((secs + 300)) ;;
esac
CM_CPUS=$cpus CM_STRESS=$secs,$seed TIMEOUT=${TIMEOUT:-$limit} MEM=${MEM:-512M} \
	exec sh labs/host/run.sh "$nn" stress "$flavor"
