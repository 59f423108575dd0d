// SPDX-License-Identifier: GPL-2.0
/*
 * cm-mmlat - how long does mmap_lock stay taken while a fault is stuck?
 *
 *   cm-mmlat DIR PAGES MS
 *
 * DIR is a memory container (with cgroup.procs).  A faulter thread
 * touches PAGES anonymous pages, one write each; the main thread times
 * mmap(2) and munmap(2) of one page (both take mmap_lock for writing,
 * the fault takes it for reading).  First the program prints
 *   cm-mmlat: pid=<pid> pages=<PAGES> ms=<MS>
 * and faults in all that its main thread will touch, charged to the
 * container it starts in; then it moves itself into DIR (cgroup.procs)
 * and the faulter starts.  Once the faulter has made no progress for
 * STALL_MS (stuck at DIR's limit), or has finished, the main thread maps
 * and unmaps in a loop for MS milliseconds and prints
 *   cm-mmlat: samples=<calls> worst_us=<us> worst_ms=<ms> slow=<calls>
 *             touched=<pages>
 * (all on one line; worst: the slowest single call; slow: the calls that
 * took over 10 ms; touched: the faulter's pages so far).  Then it waits
 * for the faulter to finish (raise DIR's limit to let it), prints
 *   cm-mmlat: done touched=<PAGES>
 * and exits 0.  Exit 1 on an error, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib.h"

#define PROG		"cm-mmlat"
#define USAGE		"cm-mmlat DIR PAGES MS"
#define MAX_PAGES	1048576
#define MAX_MS		60000
#define STALL_MS	500	/* no progress for this long: stuck */
#define POLL_MS		10
#define SLOW_US		10000	/* a call this slow is counted */

static unsigned long pages;
static size_t page;
static char *mem;			/* the faulter's pages */
static atomic_ulong touched;
static atomic_int go;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, what,
		strerror(errno), cm_errname(errno));
	_exit(1);
}

static long long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* @cm-begin faulter */
/* One write per page: each faults, and each charges one page to DIR. */
static void *faulter(void *arg)
{
	unsigned long i;

	while (!atomic_load(&go))
		sleep_ms(1);
	for (i = 0; i < pages; i++) {
		mem[i * page] = 1;
		atomic_store(&touched, i + 1);
	}
	return arg;
}
/* @cm-end faulter */

/* @cm-begin measure */
/*
 * mmap and munmap one page, @ms milliseconds long, timing each call.
 * Neither touches the page, so nothing is charged: a slow call waited
 * for mmap_lock, held for reading by the faulter's charge.
 */
static long long worst_us;
static unsigned long samples, slow;

static void timed(long long us)
{
	if (us > worst_us)
		worst_us = us;
	if (us > SLOW_US)
		slow++;
	samples++;
}

static void measure(long ms)
{
	long long end = now_us() + ms * 1000LL, t0, t1;
	void *p;

	do {
		t0 = now_us();
		p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		t1 = now_us();
		if (p == MAP_FAILED)
			die("mmap of one page");
		timed(t1 - t0);
		t0 = t1;
		if (munmap(p, page))
			die("munmap of one page");
		t1 = now_us();
		timed(t1 - t0);
	} while (t1 < end);
}
/* @cm-end measure */

/* Wait until the faulter finishes or makes no progress for STALL_MS. */
static void wait_stuck(void)
{
	unsigned long last = atomic_load(&touched), t;
	long quiet = 0;

	while (last < pages && quiet < STALL_MS) {
		sleep_ms(POLL_MS);
		t = atomic_load(&touched);
		quiet = t == last ? quiet + POLL_MS : 0;
		last = t;
	}
}

/*
 * Fault in (here, in the container we started in) the stack the main
 * thread will use: once in DIR, a new page of its own would get stuck
 * in the charge like the faulter's.
 */
static void touch_stack(void)
{
	volatile char buf[64 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 256)
		buf[i] = 0;
}

int main(int argc, char **argv)
{
	const char *pos[3] = { NULL };
	unsigned long ms;
	char path[4096], pid[24];
	pthread_t thread;
	int npos = 0, a, fd, len;

	for (a = 1; a < argc; a++) {
		if (!strncmp(argv[a], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown option '%s'",
				       argv[a]);
		else if (npos < 3)
			pos[npos++] = argv[a];
		else
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'",
				       argv[a]);
	}
	if (npos < 3)
		cm_usage_error(PROG, USAGE, "missing %s",
			       (const char *[]){ "DIR", "PAGES", "MS" }[npos]);
	if (!*pos[0])
		cm_usage_error(PROG, USAGE, "DIR must not be empty");
	if (cm_parse_ulong(pos[1], 1, MAX_PAGES, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to %d, got '%s'",
			       MAX_PAGES, pos[1]);
	if (cm_parse_ulong(pos[2], 1, MAX_MS, &ms))
		cm_usage_error(PROG, USAGE,
			       "MS must be a decimal number from 1 to %d, got '%s'",
			       MAX_MS, pos[2]);

	page = cm_page_size();
	snprintf(path, sizeof(path), "%s/cgroup.procs", pos[0]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	atomic_store(&touched, 0);	/* their page, written here */
	atomic_store(&go, 0);
	errno = pthread_create(&thread, NULL, faulter, NULL);
	if (errno)
		die("pthread_create");

	/* @cm-begin warm-up */
	/*
	 * Run the main thread's whole path once before moving: stdout's
	 * buffer, the stack, the measuring loop, the polling.  Its pages
	 * stay charged where we started; in DIR only the faulter faults.
	 */
	touch_stack();
	printf("%s: pid=%d pages=%lu ms=%lu\n", PROG, (int)getpid(), pages,
	       ms);
	fflush(stdout);
	measure(20);
	sleep_ms(1);
	worst_us = 0;
	samples = slow = 0;
	len = snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (write(fd, pid, len) != len)	/* the whole process moves */
		die(path);
	close(fd);
	atomic_store(&go, 1);
	/* @cm-end warm-up */

	wait_stuck();
	measure(ms);
	printf("%s: samples=%lu worst_us=%lld worst_ms=%lld slow=%lu touched=%lu\n",
	       PROG, samples, worst_us, worst_us / 1000, slow,
	       atomic_load(&touched));
	fflush(stdout);

	pthread_join(thread, NULL);
	printf("%s: done touched=%lu\n", PROG, atomic_load(&touched));
	fflush(stdout);
	munmap(mem, pages * page);	/* uncharges the pages */
	return 0;
}
