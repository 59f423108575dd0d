// SPDX-License-Identifier: GPL-2.0
/*
 * cm-node - run one command with its memory bound to one NUMA node.
 *
 *   cm-node NODE CMD [ARGS...]
 *
 * Sets its own memory policy to MPOL_BIND on node NODE (set_mempolicy(2),
 * called directly: the lab's libc has no libnuma), then execvp()s CMD.
 * A task's policy survives execve() and is inherited by its children, so
 * every page CMD and what it starts allocate comes from NODE, page cache
 * included; when NODE is full, reclaim runs on NODE, as "numactl
 * --membind" would have it.
 *
 * Exit status: that of CMD; 2, having changed nothing, on bad arguments
 * or a NODE the kernel refuses (no such node, or one without memory:
 * "cm-node: node N: <strerror> (errno=<NAME> from set_mempolicy)");
 * 127 if CMD cannot be executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-node"
#define USAGE	"cm-node NODE CMD [ARGS...]"

/* <linux/mempolicy.h>'s value; the lab's headers may not have it */
#define CM_MPOL_BIND	2

/* the nodes a mask of one unsigned long can name */
#define CM_MAX_NODE	(8 * sizeof(unsigned long) - 1)

int main(int argc, char **argv)
{
	unsigned long node, mask;

	if (argc < 3)
		cm_usage_error(PROG, USAGE, "missing %s", argc < 2 ? "NODE" : "CMD");
	if (cm_parse_ulong(argv[1], 0, CM_MAX_NODE, &node))
		cm_usage_error(PROG, USAGE,
			       "NODE must be a decimal number from 0 to %zu, got '%s'",
			       CM_MAX_NODE, argv[1]);
	if (!*argv[2])
		cm_usage_error(PROG, USAGE, "CMD is empty");

	mask = 1UL << node;
	/* maxnode counts bits, and the kernel ignores the last one */
	if (syscall(SYS_set_mempolicy, CM_MPOL_BIND, &mask,
		    CM_MAX_NODE + 2)) {
		int err = errno;

		fprintf(stderr, "%s: node %lu: %s (errno=%s from set_mempolicy)\n",
			PROG, node, strerror(err), cm_errname(err));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "%s: %s: %s\n", PROG, argv[2], strerror(errno));
	return 127;
}
