#!/bin/sh
# tree.sh - the kernel tree: Debian's linux-source-6.1 as a git repository
# with one commit per patch of patches/series, each tagged chNN.
#
#   tree.sh            extract (once) and apply the series (when it changed)
#
# The tree lives in build/linux.  Tag ch00 is the pristine source; chNN is
# the tree after patches 1..NN.  When patches/ changes, the tags are moved
# by re-applying the whole series to ch00, so a tag never lies about what
# patches/ says.
set -eu
. labs/host/common.sh

# The linux-source package version the series was last tested on.
TESTED=patches/tested-on

extract() {
	[ -f "$SRC_TARBALL" ] ||
		die "$SRC_TARBALL not found: install linux-source-6.1 (make deps)"
	echo "tree: extracting $SRC_TARBALL into $TREE"
	rm -rf "$TREE.tmp"
	mkdir -p "$TREE.tmp"
	tar -xf "$SRC_TARBALL" -C "$TREE.tmp" --strip-components=1
	pkg=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
	(
		cd "$TREE.tmp"
		git init -q
		git config user.name "Containing Memory"
		git config user.email "kit@containing-memory.invalid"
		git config gc.auto 0
		# Debian's .gitignore ignores every top-level entry (/*): force.
		git add -A -f
		git commit -q -m "Linux $(make -s kernelversion) from Debian linux-source-6.1 $pkg"
		git tag ch00
	)
	echo "$pkg" >"$TREE.tmp/.git/cm-source-version"
	mv "$TREE.tmp" "$TREE"
}

lock_tree tree
[ -d "$TREE/.git" ] || extract

# Warn when the package differs from the one the series was tested on.
have=$(cat "$TREE/.git/cm-source-version")
if [ -f "$TESTED" ] && [ "$(cat "$TESTED")" != "$have" ]; then
	echo "tree: WARNING: patches were tested on linux-source-6.1 $(cat "$TESTED"), this tree is $have" >&2
fi

# Fingerprint of the series: the list and every patch's bytes.
sum=$( (cat "$SERIES" 2>/dev/null; series_patches | while read -r p; do
	cat "patches/$p" || echo "missing $p"; done) | sha256sum | cut -d' ' -f1)
[ "$(cat "$TREE/.git/cm-series" 2>/dev/null)" = "$sum" ] && exit 0

echo "tree: applying patches/series to ch00"
git -C "$TREE" am --abort >/dev/null 2>&1 || true
git -C "$TREE" checkout -q -f --detach ch00
git -C "$TREE" tag -l 'ch[0-9][0-9]' | grep -v '^ch00$' |
	xargs -r git -C "$TREE" tag -d >/dev/null
rm -f "$TREE/.git/cm-series"
mkdir -p "$LOGS"
n=0
for p in $(series_patches); do
	n=$((n + 1))
	nn=$(printf '%02d' $n)
	[ -f "patches/$p" ] || die "patches/series names $p, which is not in patches/"
	if ! git -C "$TREE" am -q --keep-cr "$PWD/patches/$p" >"$LOGS/git-am.log" 2>&1; then
		git -C "$TREE" am --abort >/dev/null 2>&1 || true
		grep -vE '^(hint:|When you have|If you prefer|To restore)' \
			"$LOGS/git-am.log" | sed 's/^/    /' >&2
		die "patch $p (chapter $n) does not apply on top of ch$(printf '%02d' $((n - 1)))"
	fi
	git -C "$TREE" tag "ch$nn"
	echo "tree: ch$nn $(git -C "$TREE" log -1 --format=%s)"
done
echo "$sum" >"$TREE/.git/cm-series"
