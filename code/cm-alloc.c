// SPDX-License-Identifier: GPL-2.0
/*
 * cm-alloc - bring PAGES pages of one kind of memory into use, the way a
 * program over its limit would, and say how it ended.
 *
 *   cm-alloc KIND PAGES [--hold]
 *
 * KIND is one of
 *   anon    private anonymous memory, each page written once;
 *   shmem   a shared mapping of /dev/zero (shmem pages), each page written;
 *   sysv    a System V shared memory segment (shmget/shmat), each page
 *           written; the segment is removed when the program ends;
 *   mlock   private anonymous memory locked with mlock(2) before it is
 *           touched: mlock() faults every page in itself;
 *   locked  private anonymous memory mapped with MAP_LOCKED | MAP_POPULATE.
 *
 * On success it prints
 *   cm-alloc: KIND pages=<N>
 * and exits 0; with --hold it then prints "cm-alloc: ready" and keeps the
 * pages until SIGUSR1 or SIGTERM.  A system call that fails prints
 *   cm-alloc: <call>: <strerror> (errno=<NAME>)
 * and exits 1: for mlock that is how memcg v1 may refuse a lock over the
 * limit (EAGAIN).  Over the limit with nothing left to reclaim, the other
 * kinds end with the program killed by the OOM killer (SIGKILL, so a
 * shell sees status 137).  Exit 2 on bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <fcntl.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-alloc"
#define USAGE	"cm-alloc anon|shmem|sysv|mlock|locked PAGES [--hold]"

static int failed(const char *call)
{
	int err = errno;

	printf("%s: %s: %s (errno=%s)\n", PROG, call, strerror(err),
	       cm_errname(err));
	return 1;
}

static void touch(char *mem, unsigned long pages, size_t page)
{
	unsigned long i;

	for (i = 0; i < pages; i++)
		mem[i * page] = 1;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = {
		"anon", "shmem", "sysv", "mlock", "locked",
	};
	size_t page = cm_page_size();
	unsigned long pages;
	int kind, hold = 0, fd, id;
	size_t len;
	char *mem;

	if (argc == 4 && !strcmp(argv[3], "--hold"))
		hold = 1;
	else if (argc != 3)
		cm_usage_error(PROG, USAGE, "expected KIND PAGES [--hold]");
	for (kind = 0; kind < 5; kind++)
		if (!strcmp(argv[1], kinds[kind]))
			break;
	if (kind == 5)
		cm_usage_error(PROG, USAGE, "unknown KIND '%s'", argv[1]);
	if (cm_parse_ulong(argv[2], 1, (1UL << 30) / page, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to %zu, got '%s'",
			       (1UL << 30) / page, argv[2]);
	len = pages * page;

	switch (kind) {
	case 0:		/* anon */
	case 3:		/* mlock */
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			return failed("mmap");
		if (kind == 3) {
			if (mlock(mem, len))
				return failed("mlock");
		} else {
			touch(mem, pages, page);
		}
		break;
	case 1:		/* shmem */
		fd = open("/dev/zero", O_RDWR);
		if (fd < 0)
			return failed("open /dev/zero");
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED)
			return failed("mmap");
		close(fd);
		touch(mem, pages, page);
		break;
	case 2:		/* sysv */
		id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);
		if (id < 0)
			return failed("shmget");
		mem = shmat(id, NULL, 0);
		/* removed now: it goes once the last attachment does */
		shmctl(id, IPC_RMID, NULL);
		if (mem == (void *)-1)
			return failed("shmat");
		touch(mem, pages, page);
		break;
	default:	/* locked */
		mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED |
			   MAP_POPULATE, -1, 0);
		if (mem == MAP_FAILED)
			return failed("mmap");
		break;
	}

	printf("%s: %s pages=%lu\n", PROG, kinds[kind], pages);
	fflush(stdout);
	if (hold)
		cm_hold(PROG);
	return 0;
}
