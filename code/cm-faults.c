// SPDX-License-Identifier: GPL-2.0
/*
 * cm-faults - time anonymous page faults.
 *
 *   cm-faults PAGES ROUNDS
 *
 * ROUNDS times over: map PAGES private anonymous pages, write one byte to
 * each (one fault per page: the lab kernels have no THP), unmap them. The
 * first round is a warm-up and is not timed. Prints
 *   cm-faults: pages=<PAGES> rounds=<ROUNDS> faults=<timed faults> ns_per_fault=<n>
 * where ns_per_fault is CLOCK_MONOTONIC time over the timed rounds, unmap
 * included, divided by their faults (rusage minor faults, so that a fault
 * the kernel did not take is not counted as one). Under QEMU's
 * "-icount shift=0" one guest nanosecond is one instruction, so the
 * figure is instructions per fault, the same on any host.
 *
 * Exit 0; 1 if mmap fails; 2 on bad arguments (PAGES 1-1048576, ROUNDS
 * 2-100000).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "lib.h"

#define PROG	"cm-faults"
#define USAGE	"cm-faults PAGES ROUNDS"

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* @cm-begin round */
/* one round: map, touch every page once, unmap */
static int round_once(unsigned long pages, size_t page)
{
	volatile char *mem;
	unsigned long i;

	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "%s: mmap %lu pages: %s (errno=%s)\n", PROG,
			pages, strerror(errno), cm_errname(errno));
		return -1;
	}
	for (i = 0; i < pages; i++)
		mem[i * page] = 1;
	munmap((void *)mem, pages * page);
	return 0;
}
/* @cm-end round */

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	unsigned long pages, rounds, r;
	long long t0, t1;
	long f0, f1;

	if (argc != 3)
		cm_usage_error(PROG, USAGE, "expected PAGES and ROUNDS");
	if (cm_parse_ulong(argv[1], 1, 1048576, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to 1048576, got '%s'",
			       argv[1]);
	if (cm_parse_ulong(argv[2], 2, 100000, &rounds))
		cm_usage_error(PROG, USAGE,
			       "ROUNDS must be a decimal number from 2 to 100000, got '%s'",
			       argv[2]);

	if (round_once(pages, page))
		return 1;
	f0 = minor_faults();
	t0 = cm_now_ns();
	for (r = 1; r < rounds; r++)
		if (round_once(pages, page))
			return 1;
	t1 = cm_now_ns();
	f1 = minor_faults();
	printf("cm-faults: pages=%lu rounds=%lu faults=%ld ns_per_fault=%lld\n",
	       pages, rounds, f1 - f0, f1 > f0 ? (t1 - t0) / (f1 - f0) : 0);
	return 0;
}
