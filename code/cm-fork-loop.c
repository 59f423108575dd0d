// SPDX-License-Identifier: GPL-2.0
/*
 * cm-fork-loop - create and destroy many short-lived processes.
 *
 *   cm-fork-loop ITERATIONS [PAGES] [--exec | --vfork]
 *
 * Each iteration forks a child that maps and touches PAGES anonymous pages
 * (default 4, 0 allowed: fork and exit only) and exits; with --exec the
 * child then execs /bin/true instead of exiting (if /bin/true exists,
 * otherwise it just exits).  The parent waits for each child before
 * starting the next.  With --vfork each child is made by vfork() and
 * execs /bin/true at once, touching nothing: it runs on its parent's mm
 * until the exec replaces it (posix_spawn() does this too), which is
 * what lab 5 moves between cpusets.  Prints
 *   cm-fork-loop: iterations=<N> failures=<M>
 * A failure is a fork() that fails or a child that does not exit 0 (for
 * example one killed by an OOM kill); the first few are described on
 * stderr.  Exit 0 if M is 0, 1 otherwise, 2 on bad arguments.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"

#define PROG		"cm-fork-loop"
#define USAGE		"cm-fork-loop ITERATIONS [PAGES] [--exec | --vfork]"
#define MAX_REPORTS	5	/* failures described on stderr */

/* @cm-begin child */
static void child(unsigned long pages, int do_exec)
{
	size_t page = cm_page_size();
	unsigned long i;
	char *mem;

	if (pages) {
		mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(1);
		for (i = 0; i < pages; i++)
			mem[i * page] = 1;	/* fault in one page */
	}
	if (do_exec && access("/bin/true", X_OK) == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(1);			/* exec failed */
	}
	_exit(0);	/* exit_mmap() frees (and uncharges) the pages */
}
/* @cm-end child */

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	unsigned long iterations = 0, pages = 4, failures = 0, n;
	const char *pos[2] = { NULL, NULL };
	int npos = 0, do_exec = 0, do_vfork = 0, a, status;
	pid_t pid;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--exec") && !do_exec && !do_vfork)
			do_exec = 1;
		else if (!strcmp(argv[a], "--vfork") && !do_exec && !do_vfork)
			do_vfork = 1;
		else if (!strncmp(argv[a], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       argv[a]);
		else if (npos < 2)
			pos[npos++] = argv[a];
		else
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'",
				       argv[a]);
	}
	if (do_vfork && access("/bin/true", X_OK))
		cm_usage_error(PROG, USAGE, "--vfork needs /bin/true");
	if (!pos[0])
		cm_usage_error(PROG, USAGE, "missing ITERATIONS");
	if (cm_parse_ulong(pos[0], 1, 1000000000UL, &iterations))
		cm_usage_error(PROG, USAGE,
			       "ITERATIONS must be a decimal number from 1 to 1000000000, got '%s'",
			       pos[0]);
	if (pos[1] && cm_parse_ulong(pos[1], 0, SIZE_MAX / page, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from 0 to %zu, got '%s'",
			       SIZE_MAX / page, pos[1]);

	fflush(stdout);		/* children must not inherit buffered output */

	/* @cm-begin loop */
	for (n = 0; n < iterations; n++) {
		if (do_vfork) {
			/* the child may only exec or _exit: it has our mm */
			pid = vfork();
			if (pid == 0) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(1);
			}
		} else {
			pid = fork();
			if (pid == 0)
				child(pages, do_exec);
		}
		if (pid < 0) {
			if (failures++ < MAX_REPORTS)
				fprintf(stderr, "%s: iteration %lu: fork: %s (errno=%s)\n",
					PROG, n, strerror(errno), cm_errname(errno));
			continue;
		}
		while (waitpid(pid, &status, 0) < 0) {
			if (errno != EINTR) {
				status = -1;	/* cannot happen: not our child? */
				break;
			}
		}
		if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		if (failures++ >= MAX_REPORTS)
			continue;
		if (status == -1)
			fprintf(stderr, "%s: iteration %lu: waitpid: %s\n",
				PROG, n, strerror(errno));
		else if (WIFSIGNALED(status))
			fprintf(stderr, "%s: iteration %lu: child killed by signal %d (%s)\n",
				PROG, n, WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			fprintf(stderr, "%s: iteration %lu: child exited with status %d\n",
				PROG, n, WEXITSTATUS(status));
	}
	/* @cm-end loop */

	printf("%s: iterations=%lu failures=%lu\n", PROG, iterations, failures);
	fflush(stdout);
	return failures ? 1 : 0;
}
