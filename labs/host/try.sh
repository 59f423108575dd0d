#!/bin/sh
# try.sh lab FLAVOR [NN] | shell FLAVOR - build the kernel of build/tree
# as it is now (treekernel.sh), in the default, debug, memcg or none
# flavour, then run a lab on it (the tree's chapter's, or lab NN) or
# boot it with a shell.
set -eu
. labs/host/common.sh

nn=$(wt_chapter)
flavor=${2:-default}
sh labs/host/treekernel.sh "$flavor"
case $1 in
lab) exec sh labs/host/run.sh tree "${3:-$nn}" "$flavor" ;;
shell) exec sh labs/host/shell.sh tree "$flavor" ;;
esac
