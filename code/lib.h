/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lib.h - helpers shared by the Containing Memory lab programs.
 *
 * Every program parses numbers the same strict way, names errno values
 * the same way, and "holds" (stays alive, keeping its pages) the same way.
 */
#ifndef CM_LIB_H
#define CM_LIB_H

#include <stddef.h>

/*
 * Parse a decimal number made of digits only (no sign, no spaces, no 0x)
 * in [min, max].  Returns 0 and sets *out, or -1 if @s is not such a number.
 */
int cm_parse_ulong(const char *s, unsigned long min, unsigned long max,
		   unsigned long *out);

/* "ENOMEM" for ENOMEM; "E?" plus the number for values glibc does not know. */
const char *cm_errname(int err);

/*
 * Print "<prog>: <fmt...> (usage: <usage>)" as one line on stderr and
 * exit with status 2.  Called before the program has done anything.
 */
void cm_usage_error(const char *prog, const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/*
 * Print "<prog>: ready", then sleep until SIGUSR1 or SIGTERM arrives,
 * then print "<prog>: released".  Every line is flushed at once.
 */
void cm_hold(const char *prog);

/* Size of a page, from sysconf(). */
size_t cm_page_size(void);

/*
 * CLOCK_MONOTONIC now, in nanoseconds.  Under QEMU's "-icount shift=0"
 * one guest nanosecond is one instruction.
 */
long long cm_now_ns(void);

#endif
