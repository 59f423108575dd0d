#!/bin/sh
# export.sh - turn the commits of build/tree (ch00..work) back into
# patches/NNNN-*.patch and patches/series.
set -eu
. labs/host/common.sh

wt=$BUILD/tree
[ -d "$wt" ] || die "no $wt: make tree CH=N first"
[ -z "$(git -C "$wt" status --porcelain --untracked-files=no)" ] ||
	die "$wt has uncommitted changes: commit them first"

count=$(git -C "$wt" rev-list --count ch00..HEAD)
have=$(nr_patches)
if [ "$count" -lt "$have" ] && [ "${FORCE:-0}" != 1 ]; then
	die "$wt has $count commits after ch00 but the series has $have patches; exporting would drop patches $((count + 1))-$have (FORCE=1 to do it anyway)"
fi

rm -f patches/[0-9][0-9][0-9][0-9]-*.patch
mkdir -p patches
git -C "$wt" format-patch -q --zero-commit --no-signature --abbrev=12 \
	-o "$PWD/patches" ch00..HEAD
(cd patches && ls [0-9][0-9][0-9][0-9]-*.patch) >patches/series
cp "$TREE/.git/cm-source-version" patches/tested-on
echo "patches: wrote $count patches; patches/series:"
sed 's/^/  /' patches/series
git status --short patches
