#!/bin/sh
# export.sh - make patches: write the commits of build/tree back into
# patches/NNNN-*.patch and patches/series.  Only this writes patches/.
#
# A tree made at chapter K (make tree CH=K) replaces patches 1..K and
# keeps the later ones, which must still apply on top.  To change patch
# K, amend its commit (git commit --amend, or git rebase -i ch00); a new
# commit on top becomes a new patch only in a tree at the newest chapter.
set -eu
. labs/host/common.sh

[ -f "$WT/.git" ] || die "no $WT: make tree CH=N first"
[ -z "$(git -C "$WT" status --porcelain --untracked-files=no)" ] ||
	die "$WT has edits not committed: commit them (git -C $WT commit -a --amend to change the newest patch)"
git -C "$WT" log --format=%s ch00..HEAD | grep -q '^exercise [0-9]' &&
	die "$WT is an exercise (make exercise): patches/ is written only from a reference tree (make tree CH=N)"

k=$(expr "$(wt_chapter)" + 0)
count=$(git -C "$WT" rev-list --count ch00..HEAD)
have=$(nr_patches)
if [ "$k" -lt "$have" ] && [ "$count" -ne "$k" ]; then
	die "$WT was made at chapter $k and has $count commits after ch00: fold them into the $k chapter commits (git -C $WT rebase -i ch00), or start from make tree CH=$have to add a patch"
fi

keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
cp patches/* "$keep/"
# The later patches, kept as they are.
series_patches | tail -n +$((count + 1)) >"$keep/later"

rm -f patches/[0-9][0-9][0-9][0-9]-*.patch
git -C "$WT" format-patch -q --zero-commit --no-signature --abbrev=12 \
	-o "$PWD/patches" ch00..HEAD
(cd patches && ls [0-9][0-9][0-9][0-9]-*.patch) >patches/series
while read -r p; do
	cp "$keep/$p" patches/ && echo "$p" >>patches/series
done <"$keep/later"
cp "$TREE/.git/cm-source-version" patches/tested-on

if ! sh labs/host/tree.sh; then
	rm -f patches/[0-9][0-9][0-9][0-9]-*.patch
	cp "$keep"/[0-9][0-9][0-9][0-9]-*.patch "$keep/series" "$keep/tested-on" patches/
	sh labs/host/tree.sh >/dev/null
	die "the later patches do not apply on top of yours: patches/ is left as it was"
fi
echo "patches: wrote patches 1-$count from $WT, kept $(wc -l <"$keep/later") later; patches/series:"
sed 's/^/  /' patches/series
git status --short patches
