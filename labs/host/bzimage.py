#!/usr/bin/env python3
"""bzimage.py OBJ - does OBJ's bzImage carry the vmlinux just linked in OBJ?

A kernel build hands over arch/x86/boot/bzImage, which holds a compressed
copy of vmlinux (the "payload", from arch/x86/boot/compressed/piggy.S,
which pulls the compressed kernel in with .incbin).  ccache cannot see a
file that .incbin reads: when two kernels compress to the same length,
piggy.S's text is the same, ccache hands back the old piggy.o, and the
bzImage boots the previous kernel.  This check finds that.

It reads the payload's place from the bzImage's setup header (x86 boot
protocol 2.08+: setup_sects at 0x1f1, payload_offset at 0x248,
payload_length at 0x24c), and requires that the payload
  - is byte for byte arch/x86/boot/compressed/vmlinux.bin.gz, and
  - decompresses to arch/x86/boot/compressed/vmlinux.bin (objcopy's
    copy of vmlinux), followed by nothing but the relocation table, and
  - holds vmlinux's GNU build id.

Prints one line and exits 0 if so; else says what differs and exits 1.
"""
import gzip
import os
import struct
import subprocess
import sys


def fail(msg):
    print("bzimage.py: " + msg, file=sys.stderr)
    sys.exit(1)


def build_id(vmlinux):
    out = subprocess.run(["readelf", "-n", vmlinux], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return bytes.fromhex(line.split("Build ID:")[1].strip())
    fail(vmlinux + " has no GNU build id note")


def main():
    if len(sys.argv) != 2:
        fail("usage: bzimage.py OBJ (a kernel object directory)")
    obj = sys.argv[1]
    comp = os.path.join(obj, "arch/x86/boot/compressed")
    with open(os.path.join(obj, "arch/x86/boot/bzImage"), "rb") as f:
        image = f.read()
    if image[0x202:0x206] != b"HdrS":
        fail("arch/x86/boot/bzImage has no x86 boot header")
    setup_sects = image[0x1f1] or 4
    offset, length = struct.unpack_from("<II", image, 0x248)
    start = (setup_sects + 1) * 512 + offset
    payload = image[start:start + length]

    with open(os.path.join(comp, "vmlinux.bin.gz"), "rb") as f:
        built = f.read()
    if payload != built:
        fail("the bzImage's payload (%d bytes) is not the vmlinux.bin.gz "
             "(%d bytes) this build made: a stale piggy.o?"
             % (len(payload), len(built)))

    kernel = gzip.decompress(payload)
    with open(os.path.join(comp, "vmlinux.bin"), "rb") as f:
        linked = f.read()
    if kernel[:len(linked)] != linked:
        fail("the payload does not decompress to this build's vmlinux.bin")
    rest = b""
    with open(os.path.join(obj, ".config")) as f:
        if "CONFIG_X86_NEED_RELOCS=y\n" in f.read():
            with open(os.path.join(comp, "vmlinux.relocs"), "rb") as r:
                rest = r.read()
    if kernel[len(linked):] != rest:
        fail("the payload holds more than vmlinux.bin and its relocations")

    bid = build_id(os.path.join(obj, "vmlinux"))
    if bid not in kernel:
        fail("the payload lacks vmlinux's build id " + bid.hex())
    print("bzImage carries vmlinux build id " + bid.hex())


main()
