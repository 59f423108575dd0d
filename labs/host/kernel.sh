#!/bin/sh
# kernel.sh NN [FLAVOR] - build the chapter-NN kernel into build/chNN/bzImage
# (FLAVOR=debug: build/chNN-debug/bzImage, with the checkers on;
# FLAVOR=memcg: build/chNN-memcg/bzImage, the kit's controller off and
# 6.1's memcg on; FLAVOR=none: build/chNN-none/bzImage, no memory
# controller at all, the cost lab's baseline).
#
# One object directory per flavour (build/obj/FLAVOR) is shared by all
# chapters: moving the tree from chNN to chMM touches only the files the
# patches between them change, so Kbuild rebuilds only those (plus what
# includes them).  Building ch00..ch04 in order costs one cold build and a
# few incremental ones.  ccache, when installed, makes going back cheap too.
set -eu
. labs/host/common.sh

nn=$1
flavor=${2:-default}
case $flavor in
default) dest=$BUILD/ch$nn; extra= ;;
debug) dest=$BUILD/ch$nn-debug; extra=labs/config/debug.config ;;
memcg) dest=$BUILD/ch$nn-memcg; extra=labs/config/memcg.config ;;
none) dest=$BUILD/ch$nn-none; extra=labs/config/none.config ;;
*) die "FLAVOR=$flavor: valid flavours are default, debug, memcg and none" ;;
esac
obj=$BUILD/obj/$flavor

# Fragments: the chapter's (see chapter_frags), then the flavour's.
# Later fragments override earlier ones.
frags="$(chapter_frags "$nn") $extra"

# CM_KSRC=DIR: build from DIR, a checkout of its own at chNN (make check
# builds the debug and memcg flavours there, in the background, while
# other steps use the shared tree), into an object directory of its own
# for each flavour.
if [ -n "${CM_KSRC-}" ]; then
	[ "$(git -C "$CM_KSRC" rev-parse HEAD 2>/dev/null)" = \
		"$(git -C "$TREE" rev-parse "ch$nn^{commit}")" ] ||
		die "CM_KSRC=$CM_KSRC is not a checkout of ch$nn"
	TREE=$CM_KSRC obj=$BUILD/obj/$(basename "$CM_KSRC")-$flavor
else
	lock_tree "kernel ch$nn ($flavor)"
	sh labs/host/tree.sh
fi

commit=$(git -C "$TREE" rev-parse "ch$nn^{commit}")
# shellcheck disable=SC2086
stamp=$( (echo "$commit"; cat $frags) | sha256sum | cut -d' ' -f1)
if [ -f "$dest/bzImage" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "kernel ch$nn ($flavor): up to date, $dest/bzImage"
	exit 0
fi

[ -n "${CM_KSRC-}" ] || checkout_chapter "$nn"

log=$LOGS/kernel-ch$nn-$flavor.log
# shellcheck disable=SC2086
configure_kernel "ch$nn ($flavor)" "$obj" "$log.config" $frags
abs_obj=$(cd "$obj" && pwd)

run_logged "kernel ch$nn ($flavor)" "$log" \
	make_bzimage "$TREE" "$abs_obj" ||
	die "building ch$nn failed (log: $log)"

mkdir -p "$dest"
cp "$obj/arch/x86/boot/bzImage" "$dest/bzImage"
cp "$obj/.config" "$dest/config"
cp "$obj/System.map" "$dest/System.map"	# for run.sh's backtrace of a hung guest
echo "$stamp" >"$dest/stamp"
echo "kernel ch$nn ($flavor): $dest/bzImage"
