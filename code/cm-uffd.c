// SPDX-License-Identifier: GPL-2.0
/*
 * cm-uffd - map shmem pages with userfaultfd, not with a page fault.
 *
 *   cm-uffd copy|continue PAGES [--hold]
 *
 * Makes a shmem file of PAGES pages (memfd_create), maps it shared, and
 * registers the mapping with a userfaultfd.  Then, without ever
 * faulting on it:
 *
 *   copy      UFFDIO_COPY fills the whole range from a buffer: shmem
 *             allocates each page, adds it to the file and maps it.
 *   continue  the file is first written with pwrite(), which puts its
 *             pages in the page cache unmapped; UFFDIO_CONTINUE (minor
 *             mode) then maps those pages into the range.
 *
 * Prints
 *   cm-uffd: pid=<pid> <mode> pages=<N> mapped=<pages the ioctl mapped>
 * and exits 0; with --hold it prints "cm-uffd: ready" and keeps the
 * mapping until SIGUSR1 or SIGTERM, prints "cm-uffd: released" and
 * exits 0.  Exit 1, with the failing call and its errno name, if a call
 * fails (a kernel without CONFIG_USERFAULTFD fails at userfaultfd());
 * 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-uffd"
#define USAGE	"cm-uffd copy|continue PAGES [--hold]"

static void fail(const char *what)
{
	int err = errno;

	printf(PROG ": %s: %s (errno=%s)\n", what, strerror(err), cm_errname(err));
	exit(1);
}

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	const char *mode = NULL, *pages_arg = NULL;
	unsigned long pages;
	int hold = 0, minor, fd, uffd, a;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	unsigned long long mapped;
	size_t len;
	char *mem, *buf;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--hold") && !hold)
			hold = 1;
		else if (!strncmp(argv[a], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       argv[a]);
		else if (!mode)
			mode = argv[a];
		else if (!pages_arg)
			pages_arg = argv[a];
		else
			cm_usage_error(PROG, USAGE, "too many arguments");
	}
	if (!mode || !pages_arg)
		cm_usage_error(PROG, USAGE, "a mode and a page count are needed");
	if (strcmp(mode, "copy") && strcmp(mode, "continue"))
		cm_usage_error(PROG, USAGE, "mode '%s' is neither copy nor continue",
			       mode);
	if (cm_parse_ulong(pages_arg, 1, 1UL << 20, &pages))
		cm_usage_error(PROG, USAGE, "PAGES '%s' is not a number in 1..%lu",
			       pages_arg, 1UL << 20);
	minor = !strcmp(mode, "continue");
	len = pages * page;

	buf = malloc(len);
	if (!buf)
		fail("malloc");
	memset(buf, 0x5a, len);
	fd = memfd_create(PROG, MFD_CLOEXEC);
	if (fd < 0)
		fail("memfd_create");
	if (ftruncate(fd, len))
		fail("ftruncate");
	/* continue: the pages must be in the file's cache, not mapped */
	if (minor && pwrite(fd, buf, len, 0) != (ssize_t)len)
		fail("pwrite");
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		fail("mmap");

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		fail("userfaultfd");
	if (minor)
		api.features = UFFD_FEATURE_MINOR_SHMEM;
	if (ioctl(uffd, UFFDIO_API, &api))
		fail("UFFDIO_API");
	reg.range.start = (unsigned long)mem;
	reg.range.len = len;
	reg.mode = minor ? UFFDIO_REGISTER_MODE_MINOR : UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		fail("UFFDIO_REGISTER");

	if (minor) {
		struct uffdio_continue c = {
			.range = { .start = (unsigned long)mem, .len = len },
		};

		if (ioctl(uffd, UFFDIO_CONTINUE, &c))
			fail("UFFDIO_CONTINUE");
		mapped = c.mapped;
	} else {
		struct uffdio_copy c = {
			.dst = (unsigned long)mem, .src = (unsigned long)buf,
			.len = len,
		};

		if (ioctl(uffd, UFFDIO_COPY, &c))
			fail("UFFDIO_COPY");
		mapped = c.copy;
	}
	/* the buffer's pages are this program's, not the file's: gone */
	free(buf);
	printf(PROG ": pid=%d %s pages=%lu mapped=%llu\n", (int)getpid(), mode,
	       pages, mapped / page);
	fflush(stdout);
	if (hold)
		cm_hold(PROG);
	return 0;
}
