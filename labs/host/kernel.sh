#!/bin/sh
# kernel.sh NN [FLAVOR] - build the chapter-NN kernel into build/chNN/bzImage
# (FLAVOR=debug: build/chNN-debug/bzImage).
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
*) die "FLAVOR=$flavor: valid flavours are default and debug" ;;
esac
obj=$BUILD/obj/$flavor

# Fragments: the base, then every chapter's own up to this one, then the
# flavour's.  Later fragments override earlier ones.
frags=labs/config/base.config
i=1
while [ "$i" -le "$(expr "$nn" + 0)" ]; do
	f=labs/config/ch$(printf '%02d' $i).config
	[ -f "$f" ] && frags="$frags $f"
	i=$((i + 1))
done
frags="$frags $extra"

lock_tree "kernel ch$nn ($flavor)"

sh labs/host/tree.sh

commit=$(git -C "$TREE" rev-parse "ch$nn^{commit}")
# shellcheck disable=SC2086
stamp=$( (echo "$commit"; cat $frags) | sha256sum | cut -d' ' -f1)
if [ -f "$dest/bzImage" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "kernel ch$nn ($flavor): up to date, $dest/bzImage"
	exit 0
fi

if [ -n "$(git -C "$TREE" status --porcelain --untracked-files=no)" ]; then
	die "$TREE has uncommitted changes; edit in build/tree (make tree), not in $TREE"
fi
git -C "$TREE" checkout -q --detach "ch$nn"

# Configure: tinyconfig, merge the fragments, then check that every
# option asked for really landed (merge_config.sh drops unmet ones).
mkdir -p "$obj" "$LOGS"
log=$LOGS/kernel-ch$nn-$flavor.log
abs_obj=$(cd "$obj" && pwd)
# shellcheck disable=SC2086
abs_frags=$(for f in $frags; do echo "$PWD/$f"; done)
(
	cd "$TREE"
	make -s O="$abs_obj" tinyconfig
	# shellcheck disable=SC2086
	scripts/kconfig/merge_config.sh -m -O "$abs_obj" "$abs_obj/.config" $abs_frags
	make -s O="$abs_obj" olddefconfig
) >"$log.config" 2>&1 || {
	tail -n 20 "$log.config" >&2
	die "configuring ch$nn failed (log: $log.config)"
}

bad=
# shellcheck disable=SC2086
for line in $(cat $frags | sed -nE 's/^# (CONFIG_[A-Za-z0-9_]+) is not set$/\1=n/p; s/^(CONFIG_[A-Za-z0-9_]+=.*)$/\1/p'); do
	key=${line%%=*}
	want=${line#*=}
	got=$(sed -nE "s/^$key=(.*)$/\1/p; s/^# $key is not set$/n/p" "$obj/.config")
	[ -z "$got" ] && got=n
	[ "$got" = "$want" ] || bad="$bad $key=$want(got $got)"
done
[ -z "$bad" ] || die "ch$nn ($flavor): options missing from .config:$bad"

cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
run_logged "kernel ch$nn ($flavor)" "$log" \
	make -C "$TREE" O="$abs_obj" CC="$cc" -j"$(nproc)" bzImage ||
	die "building ch$nn failed (log: $log)"

mkdir -p "$dest"
cp "$obj/arch/x86/boot/bzImage" "$dest/bzImage"
cp "$obj/.config" "$dest/config"
echo "$stamp" >"$dest/stamp"
echo "kernel ch$nn ($flavor): $dest/bzImage"
