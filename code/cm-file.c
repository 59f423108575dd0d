// SPDX-License-Identifier: GPL-2.0
/*
 * cm-file - bring a file's pages into the page cache, read or mapped.
 *
 *   cm-file PATH --read|--mmap [--pages N] [--wait] [--hold|--loop]
 *
 * --read  reads the file with read(2), one page per call: the pages
 *         land in the page cache but are not mapped by this process.
 * --mmap  maps the file MAP_SHARED, PROT_READ and reads one byte per page:
 *         each read faults in one file-mapped page.
 * --pages N  stops after the first N pages (default: the whole file).
 *
 * Prints
 *   cm-file: pid=<pid> mode=read|mmap pages=<N> bytes=<B>
 * where B is the number of file bytes read or mapped and N = B rounded up
 * to pages.  --hold as in cm-anon ("cm-file: ready", SIGUSR1 or SIGTERM,
 * "cm-file: released"); with --mmap the mapping is kept while holding.
 * --wait holds the same way before the file is even opened, so a lab can
 * change the program's container (or remove it) before the first page
 * is read; --wait and --hold together hold twice.
 * --loop (with --mmap) holds like --hold, but keeps reading one byte of
 * every mapped page, pass after pass, while it holds: the pages stay
 * recently used, as the pages of a busy program do.  Between passes it
 * makes the mapping inaccessible and readable again (two mprotect()s),
 * which flushes its TLB entries: x86 clears a page's accessed bit
 * without a flush, and a tight loop over a few pages would otherwise
 * never set it again, while a real program's larger working set keeps
 * pushing its entries out of the TLB.
 *
 * Exit 0 on success; 1 if open/read/mmap fails (or a mapped read raises
 * SIGBUS), printing "cm-file: <path>: <strerror> (errno=<NAME> from <call>)";
 * 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"

#define PROG	"cm-file"
#define USAGE	"cm-file PATH --read|--mmap [--pages N] [--wait] [--hold|--loop]"

static const char *path;

static void fail(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s (errno=%s from %s)\n", PROG, path,
		strerror(err), cm_errname(err), what);
}

/* A mapped read that the kernel cannot satisfy may end in SIGBUS. */
static void on_sigbus(int sig)
{
	static const char msg[] = PROG ": mapped read raised SIGBUS\n";

	(void)sig;
	write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

/* Read up to @limit bytes with read(2); returns bytes read or -1. */
static long long read_pages(int fd, unsigned long long limit)
{
	static char buf[65536];		/* at least one page */
	size_t page = cm_page_size();
	unsigned long long done = 0;
	ssize_t n;

	/* @cm-begin read */
	/*
	 * One page per read(2): the kernel copies from the page cache,
	 * allocating (and charging) each page the first time it is read.
	 */
	while (done < limit) {
		size_t want = page < sizeof(buf) ? page : sizeof(buf);

		if (limit - done < want)
			want = limit - done;
		n = read(fd, buf, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fail("read", errno);
			return -1;
		}
		if (n == 0)		/* end of file */
			break;
		done += n;
	}
	/* @cm-end read */
	return done;
}

/* Map @len bytes and touch one byte per page; returns the mapping. */
static char *map_pages(int fd, size_t len)
{
	size_t page = cm_page_size();
	volatile char sum = 0;
	char *p;
	size_t off;

	/* @cm-begin mmap */
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		fail("mmap", errno);
		return NULL;
	}
	/* Each first read of a page faults it in as a file-mapped page. */
	for (off = 0; off < len; off += page)
		sum += p[off];
	/* @cm-end mmap */
	return p;
}

/*
 * --loop: hold as cm_hold() does, reading one byte of every page of
 * @map, over and over, until SIGUSR1 or SIGTERM is pending.
 */
static void touch_loop(char *map, size_t len)
{
	size_t page = cm_page_size();
	volatile char sum = 0;
	sigset_t set, pending;
	size_t off;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("%s: ready\n", PROG);
	fflush(stdout);

	/* @cm-begin loop */
	do {
		for (off = 0; off < len; off += page)
			sum += map[off];
		if (mprotect(map, len, PROT_NONE) ||
		    mprotect(map, len, PROT_READ)) {
			fail("mprotect", errno);
			exit(1);
		}
		sigpending(&pending);
	} while (!sigismember(&pending, SIGUSR1) &&
		 !sigismember(&pending, SIGTERM));
	/* @cm-end loop */

	while (sigwait(&set, &sig) != 0)
		;
	printf("%s: released\n", PROG);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	size_t page = cm_page_size();
	unsigned long pages = 0;
	int have_pages = 0, hold = 0, wait = 0, loop = 0;
	int mode = 0;					/* 'r' or 'm' */
	unsigned long long limit, bytes;
	char *map = NULL;
	struct stat st;
	int fd, a;

	for (a = 1; a < argc; a++) {
		const char *arg = argv[a];

		if (!strcmp(arg, "--read") || !strcmp(arg, "--mmap")) {
			if (mode)
				cm_usage_error(PROG, USAGE,
					       "give exactly one of --read, --mmap");
			mode = arg[2];
		} else if (!strcmp(arg, "--hold") && !hold) {
			hold = 1;
		} else if (!strcmp(arg, "--wait") && !wait) {
			wait = 1;
		} else if (!strcmp(arg, "--loop") && !loop) {
			loop = 1;
		} else if (!strcmp(arg, "--pages") && !have_pages) {
			if (a + 1 >= argc)
				cm_usage_error(PROG, USAGE, "--pages needs a number");
			if (cm_parse_ulong(argv[++a], 1, SIZE_MAX / page, &pages))
				cm_usage_error(PROG, USAGE,
					       "--pages must be a decimal number from 1 to %zu, got '%s'",
					       SIZE_MAX / page, argv[a]);
			have_pages = 1;
		} else if (!strncmp(arg, "--", 2)) {
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       arg);
		} else if (!path) {
			path = arg;
		} else {
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'", arg);
		}
	}
	if (!path || !*path)
		cm_usage_error(PROG, USAGE, "missing PATH");
	if (!mode)
		cm_usage_error(PROG, USAGE, "give exactly one of --read, --mmap");
	if (loop && (mode != 'm' || hold))
		cm_usage_error(PROG, USAGE, "--loop goes with --mmap, without --hold");

	if (wait)
		cm_hold(PROG);

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fail("open", errno);
		return 1;
	}

	limit = have_pages ? (unsigned long long)pages * page : UINT64_MAX;
	if (mode == 'r') {
		long long n = read_pages(fd, limit);

		if (n < 0)
			return 1;
		bytes = n;
	} else {
		if (fstat(fd, &st)) {
			fail("fstat", errno);
			return 1;
		}
		bytes = st.st_size < 0 ? 0 : (unsigned long long)st.st_size;
		if (bytes > limit)
			bytes = limit;
		if (bytes > SIZE_MAX - page) {
			fail("mmap", EFBIG);
			return 1;
		}
		signal(SIGBUS, on_sigbus);
		if (bytes) {		/* mmap() of 0 bytes is EINVAL */
			map = map_pages(fd, bytes);
			if (!map)
				return 1;
		}
	}

	printf("%s: pid=%d mode=%s pages=%llu bytes=%llu\n", PROG,
	       (int)getpid(), mode == 'r' ? "read" : "mmap",
	       (bytes + page - 1) / page, bytes);
	fflush(stdout);

	if (hold)
		cm_hold(PROG);
	if (loop)
		touch_loop(map, bytes);

	if (map)
		munmap(map, bytes);
	close(fd);
	return 0;
}
