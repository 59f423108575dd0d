#!/bin/sh
# stress.sh NN|tree FLAVOR SECONDS SEED CPUS - build the chapter-NN
# kernel, or with "tree" the kernel of build/tree as it is now (make
# try-stress, as make try does), in FLAVOR (debug by default, see the
# Makefile), and run the stress lab, labs/stress/lab.sh, on it: SECONDS
# of everything at once on CPUS virtual CPUs, from SEED.  The lab runs
# what the kernel's chapter has (the tree's: the chapter it was made
# at).  Its verdict is run.sh's, so a kernel splat anywhere in the run
# fails it.
set -eu
. labs/host/common.sh

nn=$1 flavor=$2 secs=$3 seed=$4 cpus=$5
if [ "$nn" = tree ]; then
	sh labs/host/treekernel.sh "$flavor"
	what="$WT (chapter $(expr "$(wt_chapter)" + 0))" again="make try-stress"
else
	sh labs/host/kernel.sh "$nn" "$flavor"
	what="chapter $(expr "$nn" + 0)" again="make stress CH=$(expr "$nn" + 0)"
fi
echo "stress: $what ($flavor), $secs s, seed $seed, $cpus CPUs"
echo "stress: to replay this schedule: $again SEED=$seed SECONDS=$secs CPUS=$cpus FLAVOR=$flavor"
# The guest's clock runs the workers for SECONDS; boot, setup, the quiet
# points (each a walk over every page frame) and teardown come on top.
# On debug, with four vCPUs on a two-core host, 1800 s took 70 minutes
# and more: allow three times SECONDS there.  run.sh scales this by
# the host's load, and TIMEOUT= still overrides it.
case $flavor in
debug) limit=$((secs * 3 + 600)) ;;
*) limit=$((secs * 3 / 2 + 300)) ;;
esac
CM_CPUS=$cpus CM_STRESS=$secs,$seed CM_LAB_TIMEOUT=$limit MEM=${MEM:-512M} \
	exec sh labs/host/run.sh "$nn" stress "$flavor"
