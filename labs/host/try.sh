#!/bin/sh
# try.sh lab [NN] | shell - build the kernel of build/tree as it is now
# (treekernel.sh), then run a lab on it (the tree's chapter's, or lab NN)
# or boot it with a shell.
set -eu
. labs/host/common.sh

nn=$(wt_chapter)
sh labs/host/treekernel.sh
case $1 in
lab) exec sh labs/host/run.sh tree "${2:-$nn}" ;;
shell) exec sh labs/host/shell.sh tree ;;
esac
