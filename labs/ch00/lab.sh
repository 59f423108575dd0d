#!/bin/sh
# Lab 0: the lab bench on the unpatched kernel.  Everything later labs
# stand on: the kernel, a cgroup v1 hierarchy, zram swap, ext2 on zram for
# a droppable page cache, and the cm-* programs.
# timeout: 60
. /lab/lib/tap.sh
. /lab/lib/lib.sh

plan 20

case $(uname -r) in 6.1.*) v=6.1 ;; *) v=$(uname -r) ;; esac
is "$v" 6.1 "the guest runs a 6.1 kernel"

# @cm-begin cgroup
# A named v1 hierarchy with no controller: the bare cgroup core.
mkdir -p /cg
ok "a cgroup v1 hierarchy mounts" mount -t cgroup -o none,name=lab cgroup /cg
ok "a child cgroup can be made" mkdir /cg/box
echo $$ >/cg/box/tasks
is "$(grep ':name=lab:' /proc/self/cgroup)" "1:name=lab:/box" \
	"the shell moved into /box"
echo $$ >/cg/tasks
ok "an empty cgroup can be removed" rmdir /cg/box
umount /cg
# @cm-end cgroup

# @cm-begin swap
ok "32 MiB of zram swap comes up" zram_swap 32
within "$(meminfo SwapTotal)" 32764 4 "SwapTotal is 32 MiB less one page"
# @cm-end swap

# @cm-begin page-cache
ok "ext2 on a second zram device mounts" zram_ext2 16 /mnt
dd if=/dev/zero of=/mnt/file bs=4096 count=256 2>/dev/null
drop_caches
before=$(meminfo Cached)
cm-file /mnt/file --read >/tmp/read.out
is "$(report_field /tmp/read.out pages)" 256 "cm-file reads 256 pages"
# Other activity moves Cached by a few pages either way (on a busy
# host, up to about 10); 1 MiB, less 64 KiB, must show.
points 2
atleast "$(($(meminfo Cached) - before))" 960 \
	"the read put about 1 MiB into the page cache"
drop_caches
atleast "$((before + 200 - $(meminfo Cached)))" 0 \
	"drop_caches gives that page cache back"
# @cm-end page-cache

# @cm-begin anon
# Anonymous memory also counts the program's own stack and data, so
# compare a 257-page run with a 1-page run: the difference is the 256
# pages, give or take the page or two the randomised stack start moves.
start_held /tmp/one.out cm-anon 1 --hold
one=$(rollup_kb "$HELD_PID" Anonymous)
release "$HELD_PID"
ok "cm-anon holds 257 pages" start_held /tmp/anon.out cm-anon 257 --hold
is "$(report_field /tmp/anon.out touched)" 257 "cm-anon says it touched 257 pages"
points 2
within "$(($(rollup_kb "$HELD_PID" Anonymous) - one))" 1024 8 \
	"its anonymous memory grew by 256 pages (1024 kB)"
ok "cm-anon lets go when signalled" release "$HELD_PID"
# @cm-end anon

ok "cm-file maps the file and holds it" \
	start_held /tmp/map.out cm-file /mnt/file --mmap --hold
is "$(map_rss_kb "$HELD_PID" /mnt/file)" 1024 \
	"cm-file --mmap maps all 256 pages of the file"
release "$HELD_PID"

cm-fork-loop 200 4 >/tmp/fork.out
is "$(report_field /tmp/fork.out failures)" 0 "200 fork/exit rounds, no failure"

is "$(cm-runas 65534 id -u)" 65534 "cm-runas drops to an unprivileged uid"

cm-anon 12abc >/dev/null 2>&1
is "$?" 2 "a bad argument is refused with status 2"

done_testing
