#!/bin/sh
# treekernel.sh - build the kernel of build/tree as it is now, edits not
# yet committed and new files included, into build/tree-kernel/bzImage.
#
# It is built in the shared tree (build/linux, checked out at a snapshot
# of build/tree) and its object directory, with the configuration of the
# chapter the tree was made at: only what differs from the last kernel
# built there is compiled again.
set -eu
. labs/host/common.sh

nn=$(wt_chapter)
lock_tree "kernel $WT"
sh labs/host/tree.sh

snap=$(sh labs/host/snapshot.sh)
frags=$(chapter_frags "$nn")
# shellcheck disable=SC2086
stamp=$( (git -C "$TREE" rev-parse "$snap^{tree}"; cat $frags) | sha256sum | cut -d' ' -f1)
if [ -f "$WT_KERNEL/bzImage" ] && [ "$(cat "$WT_KERNEL/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "kernel $WT: up to date, $WT_KERNEL/bzImage"
	exit 0
fi

[ -z "$(git -C "$TREE" status --porcelain --untracked-files=no)" ] ||
	die "$TREE has uncommitted changes; edit in $WT, not in $TREE"
git -C "$TREE" checkout -q --detach "$snap"

obj=$BUILD/obj/default
log=$LOGS/kernel-$(basename "$WT").log
rm -f "$WT_KERNEL/bzImage" "$WT_KERNEL/stamp"
# shellcheck disable=SC2086
configure_kernel "$WT (chapter $(expr "$nn" + 0))" "$obj" "$log.config" $frags
abs_obj=$(cd "$obj" && pwd)
if ! run_logged "kernel $WT" "$log" \
	make -C "$TREE" O="$abs_obj" CC="$(kernel_cc)" -j"$(nproc)" bzImage; then
	echo "compiler errors and warnings:" >&2
	grep -E '(error|warning):' "$log" | sed 's/^/    /' | head -n 20 >&2
	die "building $WT failed (log: $log)"
fi
cp "$obj/arch/x86/boot/bzImage" "$WT_KERNEL/bzImage"
cp "$obj/.config" "$WT_KERNEL/config"
echo "$stamp" >"$WT_KERNEL/stamp"
grep -E 'warning:' "$log" | sed 's/^/    /' | head -n 10 |
	sed '1i kernel '"$WT"': the compiler warned:' >&2 || true
echo "kernel $WT: $WT_KERNEL/bzImage"
