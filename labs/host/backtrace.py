#!/usr/bin/env python3
"""backtrace.py SOCKET [SYSTEM_MAP] - where is each CPU of a hung guest?

run.sh calls this when a lab runs out of time, before it kills QEMU.
Through the QEMU monitor on SOCKET it reads every vCPU's registers and
the top of its stack, and prints, per CPU, the instruction pointer and
every kernel text address found on the stack, as symbol+offset from the
kernel's System.map: a crude backtrace (it may show stale return
addresses too, as the kernel's own "? func" lines do), but one that
works however the guest hangs, interrupts off included.
"""
import bisect
import re
import socket
import sys
import time

STACK_WORDS = 96


def monitor(sock_path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sock_path)

    def cmd(line):
        s.sendall(line.encode() + b'\n')
        out = b''
        # The monitor answers, then prints its "(qemu) " prompt.
        deadline = time.time() + 10
        while not out.rstrip().endswith(b'(qemu)') and time.time() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        text = re.sub(r'\x1b\[[0-9;]*[A-Za-z]', '', out.decode(errors='replace'))
        return text.replace('\r', '')

    cmd('')	# the banner and first prompt
    return cmd


def symbols(path):
    addrs, names = [], []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[1] in 'tTwW':
                    addrs.append(int(parts[0], 16))
                    names.append(parts[2])
    except (OSError, ValueError):
        return None
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def name(syms, addr):
    if not syms:
        return None
    addrs, names = syms
    i = bisect.bisect_right(addrs, addr) - 1
    if i < 0 or addr - addrs[i] > 0x10000:
        return None
    return '%s+0x%x' % (names[i], addr - addrs[i])


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    syms = symbols(sys.argv[2]) if len(sys.argv) == 3 else None
    try:
        cmd = monitor(sys.argv[1])
    except OSError as e:
        print('backtrace: no QEMU monitor at %s: %s' % (sys.argv[1], e))
        return 1
    cmd('stop')	# hold the CPUs still while we read them
    regs = cmd('info registers -a')
    cpus = re.split(r'^CPU#(\d+)', regs, flags=re.M)[1:]
    if not cpus:
        print('backtrace: the monitor gave no registers')
        return 1
    for i in range(0, len(cpus), 2):
        cpu, text = cpus[i], cpus[i + 1]
        rip = re.search(r'RIP=([0-9a-f]+)', text)
        rsp = re.search(r'RSP=([0-9a-f]+)', text)
        flags = re.search(r'RFL=([0-9a-f]+)', text)
        if not rip or not rsp:
            continue
        rip, rsp = int(rip.group(1), 16), int(rsp.group(1), 16)
        irqs = ''
        if flags:
            irqs = ', interrupts %s' % ('on' if int(flags.group(1), 16) & 0x200 else 'off')
        where = name(syms, rip) or ('user space' if rip < 1 << 63 else hex(rip))
        print('CPU %s: at %s%s' % (cpu, where, irqs))
        if rip < 1 << 63:
            continue
        cmd('cpu %s' % cpu)
        dump = cmd('x/%dgx 0x%x' % (STACK_WORDS, rsp))
        seen = 0
        for word in re.findall(r'0x([0-9a-f]{16})', dump.split('\n', 1)[-1]):
            sym = name(syms, int(word, 16))
            if sym and seen < 16:
                print('  ? %s' % sym)
                seen += 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
