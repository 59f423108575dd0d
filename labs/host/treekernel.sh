#!/bin/sh
# treekernel.sh [FLAVOR] - build the kernel of build/tree as it is now,
# edits not yet committed and new files included, into
# build/tree-kernel/bzImage (FLAVOR=debug: build/tree-kernel/debug/bzImage,
# with KASAN, lockdep, DEBUG_VM and DEBUG_LIST; FLAVOR=memcg:
# build/tree-kernel/memcg/bzImage, with 6.1's memcg instead of the kit's
# controller).
#
# It is built in the shared tree (build/linux, checked out at a snapshot
# of build/tree) and the flavour's object directory, with the
# configuration of the chapter the tree was made at: only what differs
# from the last kernel built there is compiled again.
set -eu
. labs/host/common.sh

flavor=${1:-default}
nn=$(wt_chapter)
frags=$(chapter_frags "$nn")
case $flavor in
default) dest=$WT_KERNEL ;;
debug) dest=$WT_KERNEL/debug frags="$frags labs/config/debug.config" ;;
memcg) dest=$WT_KERNEL/memcg frags="$frags labs/config/memcg.config" ;;
none) dest=$WT_KERNEL/none frags="$frags labs/config/none.config" ;;
*) die "FLAVOR=$flavor: valid flavours are default, debug, memcg and none" ;;
esac
lock_tree "kernel $WT ($flavor)"
sh labs/host/tree.sh

snap=$(sh labs/host/snapshot.sh)
# shellcheck disable=SC2086
stamp=$( (git -C "$TREE" rev-parse "$snap^{tree}"; cat $frags) | sha256sum | cut -d' ' -f1)
if [ -f "$dest/bzImage" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "kernel $WT ($flavor): up to date, $dest/bzImage"
	exit 0
fi

[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes; edit in $WT, not in $TREE"
git -C "$TREE" checkout -q --detach "$snap"

obj=$BUILD/obj/$flavor
log=$LOGS/kernel-$(basename "$WT")-$flavor.log
mkdir -p "$dest"
rm -f "$dest/bzImage" "$dest/stamp"
# shellcheck disable=SC2086
configure_kernel "$WT (chapter $(expr "$nn" + 0), $flavor)" "$obj" "$log.config" $frags
abs_obj=$(cd "$obj" && pwd)
if ! run_logged "kernel $WT ($flavor)" "$log" \
	make_bzimage "$TREE" "$abs_obj"; then
	# The build ran in $TREE, checked out at a snapshot of $WT: name
	# the files where the reader edits them.
	echo "compiler errors and warnings:" >&2
	grep -E '(error|warning):' "$log" |
		sed -e "s|$(cd "$TREE" && pwd)/|$WT/|g" -e 's/^/    /' |
		head -n 20 >&2
	die "building $WT failed (log: $log)"
fi
cp "$obj/arch/x86/boot/bzImage" "$dest/bzImage"
cp "$obj/.config" "$dest/config"
cp "$obj/System.map" "$dest/System.map"
echo "$stamp" >"$dest/stamp"
grep -E 'warning:' "$log" | sed -e "s|$(cd "$TREE" && pwd)/|$WT/|g" -e 's/^/    /' | head -n 10 |
	sed '1i kernel '"$WT"': the compiler warned:' >&2 || true
echo "kernel $WT ($flavor): $dest/bzImage"
