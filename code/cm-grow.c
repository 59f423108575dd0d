// SPDX-License-Identifier: GPL-2.0
/*
 * cm-grow - touch more anonymous pages each time it is told to.
 *
 *   cm-grow PAGES [--thread] [--exit-leader]
 *
 * Prints "cm-grow: pid=<pid> tid=<tid>", where tid is the thread that
 * will touch the pages, then "cm-grow: ready".  Each SIGUSR1 then maps
 * PAGES new private anonymous pages and writes one byte to each (one
 * fault, one charge per page), and prints
 *   cm-grow: step=<K> touched=<PAGES> total=<all pages touched so far>
 * SIGTERM ends the program (exit 0).
 *
 * --thread      a second thread does the waiting and touching, so the
 *               toucher is not the thread-group leader: a lab can move
 *               the two threads apart.
 * --exit-leader (with --thread) the leader exits once the toucher is
 *               running: the process lives on with a zombie leader.
 *
 * Exit 1 if mmap fails (the step's line then says errno=...), 2 on bad
 * arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-grow"
#define USAGE	"cm-grow PAGES [--thread] [--exit-leader]"

static unsigned long pages;
static sigset_t sigs;

static void *toucher(void *arg)
{
	size_t page = cm_page_size();
	unsigned long step = 0, total = 0, i;
	int sig;
	char *mem;

	(void)arg;
	printf("%s: pid=%d tid=%d\n", PROG, (int)getpid(), (int)gettid());
	printf("%s: ready\n", PROG);
	fflush(stdout);

	for (;;) {
		if (sigwait(&sigs, &sig))
			continue;
		if (sig == SIGTERM)
			exit(0);

		/* @cm-begin step */
		mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED) {
			printf("%s: step=%lu errno=%s\n", PROG, step + 1,
			       cm_errname(errno));
			fflush(stdout);
			exit(1);
		}
		for (i = 0; i < pages; i++)
			mem[i * page] = 1;
		total += pages;
		printf("%s: step=%lu touched=%lu total=%lu\n", PROG, ++step,
		       pages, total);
		fflush(stdout);
		/* @cm-end step */
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int thread = 0, exit_leader = 0, a;
	const char *pages_arg = NULL;
	pthread_t t;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--thread") && !thread)
			thread = 1;
		else if (!strcmp(argv[a], "--exit-leader") && !exit_leader)
			exit_leader = 1;
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
	if (cm_parse_ulong(pages_arg, 1, SIZE_MAX / cm_page_size(), &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 1 to %zu, got '%s'",
			       SIZE_MAX / cm_page_size(), pages_arg);
	if (exit_leader && !thread)
		cm_usage_error(PROG, USAGE, "--exit-leader needs --thread");

	/* Blocked in every thread, so that only sigwait() takes them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);

	if (!thread)
		toucher(NULL);

	errno = pthread_create(&t, NULL, toucher, NULL);
	if (errno) {
		fprintf(stderr, "%s: pthread_create: %s (errno=%s)\n", PROG,
			strerror(errno), cm_errname(errno));
		return 1;
	}
	if (exit_leader)
		pthread_exit(NULL);	/* the toucher keeps the process alive */
	pthread_join(t, NULL);
	return 0;
}
