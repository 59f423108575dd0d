#!/bin/sh
# initramfs.sh OUT - pack the lab guest's root filesystem into OUT
# (a gzipped newc cpio), without root: busybox-static, the static
# programs from code/, /init, the TAP helpers and every chapter's lab.
set -eu
. labs/host/common.sh

out=$1
busybox=/bin/busybox		# from busybox-static
[ -x "$busybox" ] || die "$busybox not found: install busybox-static"
ldd "$busybox" >/dev/null 2>&1 &&
	die "$busybox is dynamically linked: install busybox-static"

# Two makes in one checkout (make lab in one terminal, make try in
# another) would pack into the same stage: one at a time.
mkdir -p "$BUILD"
exec 8>"$BUILD/.initramfs.lock"
flock 8
stage=$BUILD/initramfs.d
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" \
	"$stage/tmp" "$stage/lab/bin" "$stage/lab/lib"
cp "$busybox" "$stage/bin/busybox"
cp labs/guest/init "$stage/init"
cp labs/guest/banner "$stage/lab/banner"
cp labs/guest/*.sh "$stage/lab/lib/"
cp "$BUILD"/code/cm-* "$stage/lab/bin/" 2>/dev/null ||
	die "no programs in $BUILD/code: build code/ first (make -C code)"
rm -f "$stage/lab/bin/cm-test"
for d in labs/ch[0-9][0-9] labs/stress labs/cost labs/contend; do
	[ -d "$d" ] && cp -r "$d" "$stage/lab/"
done
chmod 755 "$stage/init"

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
echo "initramfs: $out ($(du -k "$out" | cut -f1) KiB)"
