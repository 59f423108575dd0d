// SPDX-License-Identifier: GPL-2.0
/*
 * cm-in - run one command inside a container, leaving the caller where it is.
 *
 *   cm-in NAME CMD [ARGS...]
 *
 * Writes its own pid to /container/NAME/tasks, then execvp()s CMD, which
 * keeps that pid: CMD is the only task that moves, and the shell that
 * started cm-in stays in its own container.  CMD's mm is made by the
 * exec, after the move, so every page of it is charged to NAME; cm-in's
 * own mm, made before the move, goes with the exec.  Whatever CMD starts
 * is in NAME too.
 *
 * NAME is a container below the root of the hierarchy: "a", or "a/b" for
 * one inside "a" (a trailing "/", as tab completion leaves it, is fine).
 * It must exist: cm-in creates nothing (mkdir it first).  The root is
 * /container, where the kit mounts the controller, or $CM_ROOT if set.
 *
 * Exit status: that of CMD; 2, having changed nothing, on bad arguments,
 * a bad NAME, or no such container; 1 if joining fails; 127 if CMD cannot
 * be executed (cm-in had joined NAME, and leaves it as it exits).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-in"
#define USAGE	"cm-in NAME CMD [ARGS...]"
#define ROOT	"/container"

/*
 * NAME without its trailing slashes, if it names a directory below the
 * root and nothing else: no leading "/", no empty, "." or ".." part.
 * NULL if it does not.
 */
static char *clean_name(const char *name)
{
	char *s = strdup(name), *part, *save = NULL;
	size_t len = strlen(s);

	while (len > 1 && s[len - 1] == '/')
		s[--len] = '\0';
	if (!len || s[0] == '/' || strstr(s, "//"))
		return NULL;
	for (part = strtok_r(strdupa(s), "/", &save); part;
	     part = strtok_r(NULL, "/", &save))
		if (!strcmp(part, ".") || !strcmp(part, ".."))
			return NULL;
	return s;
}

int main(int argc, char **argv)
{
	const char *root = getenv("CM_ROOT");
	char path[PATH_MAX], pid[32];
	char *name;
	ssize_t n;
	int fd, len;

	if (!root || !*root)
		root = ROOT;
	if (argc < 3)
		cm_usage_error(PROG, USAGE, "missing %s", argc < 2 ? "NAME" : "CMD");
	if (argv[1][0] == '-')
		cm_usage_error(PROG, USAGE, "unknown option '%s'", argv[1]);
	name = clean_name(argv[1]);
	if (!name)
		cm_usage_error(PROG, USAGE,
			       "NAME must be a container below %s, like a or a/b, got '%s'",
			       root, argv[1]);
	if (!*argv[2])
		cm_usage_error(PROG, USAGE, "CMD is empty");

	/* @cm-begin join */
	if (snprintf(path, sizeof(path), "%s/%s/tasks", root, name) >=
	    (int)sizeof(path))
		cm_usage_error(PROG, USAGE, "NAME is too long");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		snprintf(path, sizeof(path), "%s/tasks", root);
		if (access(path, F_OK))
			cm_usage_error(PROG, USAGE,
				       "no hierarchy mounted at %s: mount -t cgroup -o memory none %s first",
				       root, root);
		cm_usage_error(PROG, USAGE, "no container %s/%s: mkdir it first",
			       root, name);
	}
	/* One write of our own pid: exec keeps it, so CMD is what moved. */
	len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	n = fd < 0 ? -1 : write(fd, pid, len);
	if (n >= 0 && n != len)
		errno = EIO;		/* a short write: cgroup files do not */
	if (n != len || close(fd)) {
		fprintf(stderr, "%s: cannot join %s/%s: %s (errno=%s)\n", PROG,
			root, name, strerror(errno), cm_errname(errno));
		return 1;
	}
	/* @cm-end join */

	execvp(argv[2], argv + 2);
	fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, argv[2],
		strerror(errno), cm_errname(errno));
	return 127;
}
