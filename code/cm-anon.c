// SPDX-License-Identifier: GPL-2.0
/*
 * cm-anon - fault in an exact number of anonymous pages.
 *
 *   cm-anon PAGES [--verify] [--mlock] [--hold]
 *
 * Maps PAGES private anonymous pages and writes one byte to each, so that
 * each write faults in exactly one page (the lab kernels have no THP).
 * Prints
 *   cm-anon: pid=<pid> pages=<N> touched=<N>
 * then unmaps and exits 0; with --hold it prints "cm-anon: ready" and
 * keeps the pages until SIGUSR1 or SIGTERM, prints "cm-anon: released"
 * and exits 0.  Exit 1 if mmap fails, 2 on bad arguments.
 *
 * --verify writes a word that names the page (its index, mixed with a
 * constant) into every page as it touches it, then reads every page back
 * once all are touched, and prints
 *   cm-anon: verified=<N> bad=<pages whose word changed>
 * exiting 1 if any did.  Under a small limit with swap, the first pages
 * go out to swap while the last are touched, and come back when read.
 *
 * --mlock locks the pages (mlock(2)) once they are touched, before the
 * report; they then sit on the unevictable list until the program ends.
 * Exit 1, with "cm-anon: mlock: <strerror> (errno=<NAME>)", if it fails.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-anon"
#define USAGE	"cm-anon PAGES [--verify] [--mlock] [--hold]"

/* mixed into each page's word, so that a zero page never looks right */
#define CM_PATTERN	0x5a5a5a5a5a5a5a5aUL

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	unsigned long pages = 0, i, touched = 0;
	const char *pages_arg = NULL;
	int hold = 0, verify = 0, lock = 0;
	unsigned long bad = 0;
	char *mem;
	int a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--hold") && !hold)
			hold = 1;
		else if (!strcmp(argv[a], "--verify") && !verify)
			verify = 1;
		else if (!strcmp(argv[a], "--mlock") && !lock)
			lock = 1;
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
	if (cm_parse_ulong(pages_arg, 1, SIZE_MAX / page, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to %zu, got '%s'",
			       SIZE_MAX / page, pages_arg);

	/* @cm-begin map */
	/* Reserve address space only: no page is allocated or charged yet. */
	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %lu pages: %s (errno=%s)\n", PROG,
			pages, strerror(errno), cm_errname(errno));
		return 1;
	}
	/* @cm-end map */

	/* @cm-begin touch */
	/*
	 * One write per page: each write takes a page fault, and the fault
	 * handler allocates (and, with the controller, charges) one page.
	 */
	for (i = 0; i < pages; i++) {
		mem[i * page] = 1;
		touched++;
	}
	/* @cm-end touch */

	/* @cm-begin verify */
	if (verify) {
		for (i = 0; i < pages; i++)
			*(unsigned long *)(mem + i * page) = i ^ CM_PATTERN;
		for (i = 0; i < pages; i++)
			if (*(unsigned long *)(mem + i * page) != (i ^ CM_PATTERN))
				bad++;
	}
	/* @cm-end verify */

	if (lock && mlock(mem, pages * page)) {
		fprintf(stderr, "%s: mlock: %s (errno=%s)\n", PROG,
			strerror(errno), cm_errname(errno));
		return 1;
	}

	printf("%s: pid=%d pages=%lu touched=%lu\n", PROG, (int)getpid(),
	       pages, touched);
	if (verify)
		printf("%s: verified=%lu bad=%lu\n", PROG, pages, bad);
	fflush(stdout);

	if (hold)
		cm_hold(PROG);

	munmap(mem, pages * page);	/* uncharges the pages */
	return bad ? 1 : 0;
}
