#!/bin/sh
# snapshot.sh - print a commit holding build/tree exactly as it is now:
# HEAD plus every edit not yet committed and every new file.  The
# reader's index and branch are not touched (a scratch index is used).
set -eu
. labs/host/common.sh

[ -f "$WT/.git" ] || die "no $WT: make tree CH=N or make exercise CH=N first"
# Build output inside the tree would be swept in, and makes Kbuild refuse
# an O= build of it: the kernels are built elsewhere (make try).
if [ -e "$WT/.config" ] || [ -d "$WT/include/config" ]; then
	die "$WT has build output in it: run 'make -C $WT mrproper', then make try"
fi
idx=$(mktemp)
trap 'rm -f "$idx"' EXIT
cp "$(git -C "$WT" rev-parse --path-format=absolute --git-path index)" "$idx"
# Debian's .gitignore ignores every top-level entry: -f takes new files.
GIT_INDEX_FILE=$idx git -C "$WT" add -A -f .
tree=$(GIT_INDEX_FILE=$idx git -C "$WT" write-tree)
if [ "$tree" = "$(git -C "$WT" rev-parse 'HEAD^{tree}')" ]; then
	git -C "$WT" rev-parse HEAD
else
	git -C "$WT" commit-tree "$tree" -p HEAD -m "snapshot of $WT"
fi
