#!/bin/sh
# shell.sh NN [FLAVOR] - boot the chapter-NN kernel with a shell on this
# terminal.  Leave with `exit` or `poweroff` (the guest powers off) or
# Ctrl-a x; a shell that something kills is started again (labs/guest/init).
set -eu
. labs/host/common.sh

nn=$1 flavor=${2:-default}
guest_kernel "$nn" "$flavor"	# NN "tree": make try-shell
# So that "sh /lab/chNN/lab.sh" by hand runs as the lab would: the
# kernel's chapter (cmkernel=, see guest_kernel in common.sh) and what
# every lab adds to the boot line (labs/chNN/cmdline).
extra=$(cat labs/ch*/cmdline 2>/dev/null | grep -v '^#' | sort -u | tr '\n' ' ')

echo "shell: kernel $kernel; leave with 'exit', 'poweroff' or Ctrl-a x"
# Two CPUs as two sockets, as the labs boot them (see run.sh): with a
# plain "-smp 2" these kernels, which have no ACPI, would bring up one.
# shellcheck disable=SC2046
exec qemu-system-x86_64 $(qemu_accel) -m "${MEM:-256M}" -smp cpus=2,sockets=2 \
	-nodefaults -no-reboot -display none \
	-serial mon:stdio -serial null \
	-kernel "$kernel" -initrd "$BUILD/initramfs.cpio.gz" \
	-append "$(guest_cmdline) cmshell quiet cmkernel=$cmkernel $extra"
