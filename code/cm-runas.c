// SPDX-License-Identifier: GPL-2.0
/*
 * cm-runas - run a command as another (unprivileged) user.
 *
 *   cm-runas UID CMD [ARGS...]
 *
 * Drops all supplementary groups, sets the group ID and then the user ID
 * (real, effective and saved) to UID, and execvp()s CMD.  Labs use it to
 * check that an unprivileged user cannot change a container's limit.
 * Needs to be started as root (CAP_SETUID, CAP_SETGID).
 *
 * Exit status: that of CMD; 1 if the ID change fails; 127 if CMD cannot
 * be executed; 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-runas"
#define USAGE	"cm-runas UID CMD [ARGS...]"

int main(int argc, char **argv)
{
	unsigned long uid;

	if (argc < 3)
		cm_usage_error(PROG, USAGE, "missing %s", argc < 2 ? "UID" : "CMD");
	/* (uid_t)-1 means "unchanged" to the set*id() calls: refuse it. */
	if (cm_parse_ulong(argv[1], 0, (uid_t)-2, &uid))
		cm_usage_error(PROG, USAGE,
			       "UID must be a decimal number from 0 to %u, got '%s'",
			       (uid_t)-2, argv[1]);
	if (!*argv[2])
		cm_usage_error(PROG, USAGE, "CMD is empty");

	/* @cm-begin drop */
	/* Order matters: once the UID is dropped we may no longer change groups. */
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid)) {
		fprintf(stderr, "%s: cannot become uid %lu: %s (errno=%s)\n",
			PROG, uid, strerror(errno), cm_errname(errno));
		return 1;
	}
	/* @cm-end drop */

	execvp(argv[2], argv + 2);
	fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, argv[2],
		strerror(errno), cm_errname(errno));
	return 127;
}
