// SPDX-License-Identifier: GPL-2.0
/*
 * lib.c - helpers shared by the Containing Memory lab programs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"

/* @cm-begin parse */
int cm_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *out)
{
	unsigned long v;
	char *end;

	/* strtoul() alone would accept " 12", "+12", and "-1" (as ULONG_MAX). */
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end != '\0')	/* overflow, or "12abc" */
		return -1;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}
/* @cm-end parse */

const char *cm_errname(int err)
{
	static char buf[32];
	const char *name = strerrorname_np(err);	/* glibc >= 2.32 */

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "E?%d", err);
	return buf;
}

void cm_usage_error(const char *prog, const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: %s)\n", usage);
	exit(2);
}

/* @cm-begin hold */
void cm_hold(const char *prog)
{
	sigset_t set;
	int sig;

	/*
	 * Block the two signals first, so one sent right after "ready"
	 * is kept pending instead of killing us; sigwait() then takes it.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	printf("%s: ready\n", prog);
	fflush(stdout);

	while (sigwait(&set, &sig) != 0)
		;

	printf("%s: released\n", prog);
	fflush(stdout);
}
/* @cm-end hold */

size_t cm_page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

long long cm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
