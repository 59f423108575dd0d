// SPDX-License-Identifier: GPL-2.0
/*
 * cm-time - how long a command takes, in nanoseconds.
 *
 *   cm-time CMD [ARGS...]
 *
 * Runs CMD, waits for it, and prints on stderr
 *   cm-time: ns=<n>
 * the CLOCK_MONOTONIC time from just before the fork to just after the
 * wait. Under QEMU's "-icount shift=0" one guest nanosecond is one
 * instruction: the figure is then what the machine executed meanwhile,
 * the command, the kernel's work for it, and anything else that ran (the
 * labs that use it run nothing else).
 *
 * Exits with CMD's status (128 + the signal's number if a signal ended
 * it); 127 if CMD could not be run; 2 on bad arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-time"
#define USAGE	"cm-time CMD [ARGS...]"

int main(int argc, char **argv)
{
	long long start, end;
	int status;
	pid_t pid;

	if (argc < 2)
		cm_usage_error(PROG, USAGE, "missing CMD");
	if (argv[1][0] == '-')
		cm_usage_error(PROG, USAGE, "unknown option '%s'", argv[1]);
	if (!*argv[1])
		cm_usage_error(PROG, USAGE, "CMD is empty");

	start = cm_now_ns();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, PROG ": fork: %s\n", strerror(errno));
		return 127;
	}
	if (!pid) {
		execvp(argv[1], argv + 1);
		fprintf(stderr, PROG ": %s: %s\n", argv[1], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, PROG ": waitpid: %s\n", strerror(errno));
			return 127;
		}
	}
	end = cm_now_ns();
	fprintf(stderr, PROG ": ns=%lld\n", end - start);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
