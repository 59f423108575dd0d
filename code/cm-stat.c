// SPDX-License-Identifier: GPL-2.0
/*
 * cm-stat - stat every entry of a directory, after an optional hold.
 *
 *   cm-stat DIR [--hold]
 *
 * Reads the names in DIR first (getdents(2) reads only the directory's
 * own blocks), then, with --hold, prints "cm-stat: ready" and waits for
 * SIGUSR1 or SIGTERM as cm-anon does.  Then it calls fstatat() on each
 * name, prints its report and, with --hold, holds a second time, so that
 * a lab can read its container's usage while its pages are still there.  On ext2 that reads the inode-table block of every inode that is
 * not cached yet, which is metadata the kernel must not fail to read.
 *
 * Every page it needs of its own (the name table, the stack, the stdio
 * buffer) is touched before the hold, so a lab can put it at its
 * container's limit and know that the only new pages are the kernel's.
 *
 * Prints
 *   cm-stat: pid=<pid> entries=<N> stated=<S> failed=<F>
 * and the first failure as "cm-stat: <name>: <strerror> (errno=<NAME>)"
 * on stderr.  Exit 0 if every entry was stated, 1 if any stat (or the
 * directory read) failed, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-stat"
#define USAGE	"cm-stat DIR [--hold]"

int main(int argc, char **argv)
{
	const char *dir = NULL;
	unsigned long entries = 0, stated = 0, failed = 0, cap = 0, i;
	char **names = NULL;
	int hold = 0, first_err = 0, fd, a;
	const char *first_name = NULL;
	struct dirent *de;
	struct stat st;
	DIR *d;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--hold") && !hold)
			hold = 1;
		else if (!strncmp(argv[a], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       argv[a]);
		else if (!dir)
			dir = argv[a];
		else
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'",
				       argv[a]);
	}
	if (!dir || !*dir)
		cm_usage_error(PROG, USAGE, "missing DIR");

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, dir,
			strerror(errno), cm_errname(errno));
		return 1;
	}
	fd = dirfd(d);
	errno = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (entries == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				break;
		}
		names[entries] = strdup(de->d_name);
		if (!names[entries])
			break;
		entries++;
	}
	if (errno) {
		fprintf(stderr, "%s: reading %s: %s (errno=%s)\n", PROG, dir,
			strerror(errno), cm_errname(errno));
		return 1;
	}

	/* Fault in the stack that fstatat() and printf() will use. */
	memset(&st, 0, sizeof(st));
	if (hold)
		cm_hold(PROG);

	for (i = 0; i < entries; i++) {
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0) {
			stated++;
			continue;
		}
		if (!failed++) {
			first_err = errno;
			first_name = names[i];
		}
	}

	printf("%s: pid=%d entries=%lu stated=%lu failed=%lu\n", PROG,
	       (int)getpid(), entries, stated, failed);
	fflush(stdout);
	if (failed)
		fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, first_name,
			strerror(first_err), cm_errname(first_err));
	if (hold)
		cm_hold(PROG);
	return failed ? 1 : 0;
}
