// SPDX-License-Identifier: GPL-2.0
/*
 * cm-perf - map a perf ring buffer and fault in every page of it.
 *
 *   cm-perf PAGES [--hold]
 *
 * Opens a software perf event on itself (the task clock, disabled: it
 * never counts, only its buffer matters) and maps its ring buffer:
 * one control page and PAGES data pages, PAGES a power of two, as perf
 * requires.  perf allocates the buffer's pages itself, when the buffer
 * is mapped, and hands them out from its ->fault handler; they are not
 * page cache and not anonymous memory, they belong to the event.  It
 * reads one byte of each page, so that each is mapped by a fault of
 * its own, and prints
 *   cm-perf: pid=<pid> pages=<PAGES> mapped=<1 + PAGES>
 * --hold as in cm-anon ("cm-perf: ready", SIGUSR1 or SIGTERM,
 * "cm-perf: released"), with the buffer still mapped.  Then it unmaps
 * the buffer and closes the event; perf frees the pages after an RCU
 * grace period, shortly after the program has exited.
 *
 * Exit 0 on success; 1 if perf_event_open() or mmap() fails, printing
 * "cm-perf: <call>: <strerror> (errno=<NAME>)"; 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-perf"
#define USAGE	"cm-perf PAGES [--hold]"

static void fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, what, strerror(err),
		cm_errname(err));
}

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	unsigned long pages = 0, max, mapped = 0, i;
	const char *pages_arg = NULL;
	struct perf_event_attr attr;
	volatile char sum = 0;
	int hold = 0, fd, a;
	size_t len;
	char *buf;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--hold") && !hold)
			hold = 1;
		else if (!strncmp(argv[a], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       argv[a]);
		else if (!pages_arg)
			pages_arg = argv[a];
		else
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'",
				       argv[a]);
	}
	if (!pages_arg)
		cm_usage_error(PROG, USAGE, "missing PAGES");
	/* the control page comes on top, and the whole must fit a size_t */
	max = SIZE_MAX / page - 1;
	if (cm_parse_ulong(pages_arg, 1, max, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to %lu, got '%s'",
			       max, pages_arg);
	if (pages & (pages - 1))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a power of two, got '%s'", pages_arg);
	len = (pages + 1) * page;

	/* @cm-begin open */
	/*
	 * A software event on this process (pid 0), on any CPU (-1).  A
	 * counting event, never enabled: perf still gives it a ring buffer
	 * when it is mapped.  exclude_kernel keeps it within what an
	 * unprivileged user may open (perf_event_paranoid 2).
	 */
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(__NR_perf_event_open, &attr, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		fail("perf_event_open", errno);
		return 1;
	}
	/* @cm-end open */

	/* @cm-begin map */
	/*
	 * perf allocates the buffer's pages here, and maps none of them:
	 * each first read of a page faults, and perf_mmap_fault() hands
	 * the fault its own page.
	 */
	buf = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED) {
		fail("mmap", errno);
		return 1;
	}
	for (i = 0; i <= pages; i++) {
		sum += buf[i * page];
		mapped++;
	}
	/* @cm-end map */

	printf("%s: pid=%d pages=%lu mapped=%lu\n", PROG, (int)getpid(),
	       pages, mapped);
	fflush(stdout);

	if (hold)
		cm_hold(PROG);

	/* perf frees the buffer once the mapping and the event are gone */
	munmap(buf, len);
	close(fd);
	return 0;
}
