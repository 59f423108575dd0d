// SPDX-License-Identifier: GPL-2.0
/*
 * cm-test - host-side tests for the lab programs in code/.
 *
 *   cm-test BINDIR
 *
 * Runs the programs built into BINDIR as real processes and checks what
 * they claim against what the kernel reports (/proc/<pid>/smaps,
 * /proc/<pid>/smaps_rollup, mincore(), file contents, rusage), and that
 * bad arguments give exit status 2, one usage line on stderr, and no side
 * effect.  Prints TAP ("ok N - ...", "not ok N - ...", then "1..N") and
 * exits 1 if any test failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"

#define TIMEOUT_MS	10000
#define OUTMAX		16384

#define ARGV(...)	((const char *[]){ __VA_ARGS__, NULL })

static const char *bindir;
static char tmpdir[PATH_MAX];
static size_t page;
static int ntests, nfailed;
static char diagbuf[4096];
static const char *skip_reason;	/* set by a test that could not run */

/* Record why the current test failed; printed as TAP "# " lines. */
static void diag(const char *fmt, ...)
{
	size_t len = strlen(diagbuf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(diagbuf + len, sizeof(diagbuf) - len, fmt, ap);
	va_end(ap);
	len = strlen(diagbuf);
	if (len + 1 < sizeof(diagbuf)) {
		diagbuf[len] = '\n';
		diagbuf[len + 1] = '\0';
	}
}

static void report(int pass, const char *fmt, ...)
{
	char *line, *save = NULL;
	va_list ap;

	ntests++;
	if (!pass)
		nfailed++;
	printf("%sok %d - ", pass ? "" : "not ", ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (skip_reason)
		printf(" # SKIP %s", skip_reason);
	printf("\n");
	skip_reason = NULL;
	if (!pass)
		for (line = strtok_r(diagbuf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			printf("# %s\n", line);
	diagbuf[0] = '\0';
	fflush(stdout);
}

#define CHECK(cond, ...)					\
	do {							\
		if (!(cond)) {					\
			diag("failed: %s", #cond);		\
			diag(__VA_ARGS__);			\
			return 0;				\
		}						\
	} while (0)

/* ------------------------------------------------------------------ */
/* Running programs                                                    */

static const char *prog_path(const char *name)
{
	static char buf[PATH_MAX];

	if (strncmp(name, "cm-", 3))
		return name;
	snprintf(buf, sizeof(buf), "%s/%s", bindir, name);
	return buf;
}

struct run {
	pid_t pid;
	int status;		/* from waitpid(), or -1 on timeout */
	char out[OUTMAX];
	char err[OUTMAX];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static pid_t start(const char *const argv[], int outfd[2], int errfd[2],
		   void (*pre)(void))
{
	pid_t pid;

	if (pipe(outfd) || (errfd && pipe(errfd))) {
		perror("pipe");
		exit(99);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(99);
	}
	if (pid == 0) {
		dup2(outfd[1], 1);
		close(outfd[0]);
		close(outfd[1]);
		if (errfd) {
			dup2(errfd[1], 2);
			close(errfd[0]);
			close(errfd[1]);
		}
		if (pre)
			pre();
		execvp(prog_path(argv[0]), (char *const *)argv);
		fprintf(stderr, "cm-test: exec %s: %s\n", argv[0], strerror(errno));
		_exit(126);
	}
	close(outfd[1]);
	if (errfd)
		close(errfd[1]);
	return pid;
}

/* Run a program to completion, collecting stdout, stderr and status. */
static void run_pre(struct run *r, const char *const argv[], void (*pre)(void))
{
	int outfd[2], errfd[2];
	size_t olen = 0, elen = 0;
	long long deadline = now_ms() + TIMEOUT_MS;
	struct pollfd pfd[2];
	int open_fds = 2;

	memset(r, 0, sizeof(*r));
	r->pid = start(argv, outfd, errfd, pre);
	pfd[0].fd = outfd[0];
	pfd[1].fd = errfd[0];
	pfd[0].events = pfd[1].events = POLLIN;
	while (open_fds) {
		long long left = deadline - now_ms();
		int i;

		if (left <= 0) {
			kill(r->pid, SIGKILL);
			break;
		}
		if (poll(pfd, 2, (int)left) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			char *buf = i ? r->err : r->out;
			size_t *len = i ? &elen : &olen;
			char tmp[4096];
			ssize_t n;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(pfd[i].fd, tmp, sizeof(tmp));
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				open_fds--;
				continue;
			}
			if (*len + n >= OUTMAX)
				n = OUTMAX - 1 - *len;
			memcpy(buf + *len, tmp, n);
			*len += n;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	waitpid(r->pid, &r->status, 0);
	if (now_ms() >= deadline)
		r->status = -1;
}

static void run(struct run *r, const char *const argv[])
{
	run_pre(r, argv, NULL);
}

static int exited(const struct run *r, int code)
{
	return r->status != -1 && WIFEXITED(r->status) &&
	       WEXITSTATUS(r->status) == code;
}

/* A program left running (--hold): its pid and its stdout. */
struct held {
	pid_t pid;
	int fd;
};

static void spawn(struct held *h, const char *const argv[])
{
	int outfd[2];

	h->pid = start(argv, outfd, NULL, NULL);
	h->fd = outfd[0];
}

/* Read one line (without '\n') from a held program; -1 on EOF/timeout. */
static int read_line(struct held *h, char *buf, size_t size)
{
	long long deadline = now_ms() + TIMEOUT_MS;
	size_t len = 0;

	while (len + 1 < size) {
		struct pollfd pfd = { .fd = h->fd, .events = POLLIN };
		long long left = deadline - now_ms();
		char c;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		if (read(h->fd, &c, 1) != 1)
			break;
		if (c == '\n') {
			buf[len] = '\0';
			return 0;
		}
		buf[len++] = c;
	}
	buf[len] = '\0';
	return -1;
}

/* Signal a held program and collect its last line and exit status. */
static int release(struct held *h, int sig, char *line, size_t size,
		   int *status)
{
	int ret;

	kill(h->pid, sig);
	ret = read_line(h, line, size);
	close(h->fd);
	waitpid(h->pid, status, 0);
	return ret;
}

static void kill_held(struct held *h)
{
	kill(h->pid, SIGKILL);
	close(h->fd);
	waitpid(h->pid, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Reading what the kernel says                                        */

/* A "Name:   123 kB" field of /proc/<pid>/<file>; -1 if absent. */
static long proc_kb(pid_t pid, const char *file, const char *field)
{
	char path[64], line[256];
	size_t flen = strlen(field);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, flen) && line[flen] == ':') {
			kb = strtol(line + flen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

struct mapping {
	long size_kb, rss_kb, anon_kb;
	int found;
};

/*
 * Find in /proc/<pid>/smaps the mapping of @file (if @file is set) or the
 * first anonymous mapping of exactly @size_kb kB (if @file is NULL).
 */
static void find_mapping(pid_t pid, const char *file, long size_kb,
			 struct mapping *m)
{
	char path[64], line[PATH_MAX + 128];
	struct mapping cur = { 0 };
	int in_file = 0, header;
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int name = 0;

		line[strcspn(line, "\n")] = '\0';
		header = sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi,
				&name) >= 2 && name > 0;
		if (header) {
			if (cur.found)
				break;
			in_file = file && !strcmp(line + name, file);
			cur.found = 0;
			cur.size_kb = cur.rss_kb = cur.anon_kb = 0;
			if (in_file || (!file && !line[name]))
				cur.found = -1;		/* candidate */
			continue;
		}
		if (!cur.found)
			continue;
		sscanf(line, "Size: %ld", &cur.size_kb);
		sscanf(line, "Rss: %ld", &cur.rss_kb);
		sscanf(line, "Anonymous: %ld", &cur.anon_kb);
		/* Anonymous: comes after Size: and Rss: in every smaps entry. */
		if (!strncmp(line, "Anonymous:", 10)) {
			if (file || cur.size_kb == size_kb)
				cur.found = 1;
			else
				cur.found = 0;
			if (cur.found == 1) {
				*m = cur;
				break;
			}
		}
	}
	fclose(f);
}

static int read_file(const char *path, char *buf, size_t size, size_t *len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return -1;
	*len = n;
	return 0;
}

static void write_file(const char *path, const void *buf, size_t len,
		       mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror(path);
		exit(99);
	}
	fchmod(fd, mode);
	fsync(fd);
	close(fd);
}

static const char *tmp(const char *name)
{
	static char buf[4][PATH_MAX];
	static int i;

	i = (i + 1) % 4;
	if (snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name) >=
	    (int)sizeof(buf[i]))
		abort();
	return buf[i];
}

/* ------------------------------------------------------------------ */
/* Bad arguments: exit 2, nothing on stdout, one "prog: ... usage" line */

static int bad_args(const char *const argv[], const char *must_not_exist,
		    const char *unchanged_file, const char *unchanged_content)
{
	char prefix[64], content[256];
	struct run r;
	size_t len;
	char *nl;

	run(&r, argv);
	snprintf(prefix, sizeof(prefix), "%s: ", argv[0]);
	CHECK(exited(&r, 2), "status %#x, stderr: %s", r.status, r.err);
	CHECK(r.out[0] == '\0', "stdout: %s", r.out);
	nl = strchr(r.err, '\n');
	CHECK(nl && nl[1] == '\0', "stderr is not one line: '%s'", r.err);
	CHECK(!strncmp(r.err, prefix, strlen(prefix)) && strstr(r.err, "usage:"),
	      "stderr: %s", r.err);
	if (must_not_exist)
		CHECK(access(must_not_exist, F_OK) != 0,
		      "%s was created", must_not_exist);
	if (unchanged_file) {
		CHECK(read_file(unchanged_file, content, sizeof(content), &len) == 0,
		      "cannot read %s", unchanged_file);
		CHECK(len == strlen(unchanged_content) &&
		      !memcmp(content, unchanged_content, len),
		      "%s changed", unchanged_file);
	}
	return 1;
}

static void argv_str(const char *const argv[], char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; argv[i] && len + 4 < size; i++)
		len += snprintf(buf + len, size - len, "%s'%s'", i ? " " : "",
				argv[i]);
}

static void test_bad(const char *const argv[], const char *must_not_exist,
		     const char *unchanged_file, const char *unchanged_content)
{
	char desc[512];

	argv_str(argv, desc, sizeof(desc));
	report(bad_args(argv, must_not_exist, unchanged_file, unchanged_content),
	       "bad arguments refused (exit 2, usage): %s", desc);
}

/* ------------------------------------------------------------------ */
/* lib.c                                                               */

static int t_parse(void)
{
	static const struct {
		const char *s;
		unsigned long min, max;
		int ret;
		unsigned long v;
	} c[] = {
		{ "0", 0, 10, 0, 0 },
		{ "10", 0, 10, 0, 10 },
		{ "010", 0, 10, 0, 10 },
		{ "11", 0, 10, -1, 0 },
		{ "0", 1, 10, -1, 0 },
		{ "18446744073709551615", 0, ULONG_MAX, 0, ULONG_MAX },
		{ "18446744073709551616", 0, ULONG_MAX, -1, 0 },
		{ "", 0, 10, -1, 0 },
		{ "-1", 0, ULONG_MAX, -1, 0 },
		{ "+1", 0, 10, -1, 0 },
		{ " 1", 0, 10, -1, 0 },
		{ "1 ", 0, 10, -1, 0 },
		{ "1\n", 0, 10, -1, 0 },
		{ "0x1", 0, 10, -1, 0 },
		{ "1e3", 0, 10000, -1, 0 },
		{ "abc", 0, 10, -1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		unsigned long v = 12345;
		int ret = cm_parse_ulong(c[i].s, c[i].min, c[i].max, &v);

		CHECK(ret == c[i].ret, "'%s' [%lu, %lu] returned %d", c[i].s,
		      c[i].min, c[i].max, ret);
		CHECK(ret ? v == 12345 : v == c[i].v,
		      "'%s' gave %lu", c[i].s, v);
	}
	return 1;
}

static int t_errname(void)
{
	CHECK(!strcmp(cm_errname(ENOMEM), "ENOMEM"), "%s", cm_errname(ENOMEM));
	CHECK(!strcmp(cm_errname(EINVAL), "EINVAL"), "%s", cm_errname(EINVAL));
	CHECK(!strcmp(cm_errname(ERANGE), "ERANGE"), "%s", cm_errname(ERANGE));
	CHECK(!strncmp(cm_errname(100000), "E?", 2), "%s", cm_errname(100000));
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-anon                                                             */

static int t_anon_report(void)
{
	char want[128];
	struct run r;

	run(&r, ARGV("cm-anon", "10"));
	snprintf(want, sizeof(want), "cm-anon: pid=%d pages=10 touched=10\n",
		 (int)r.pid);
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, want), "stdout: '%s', want '%s'", r.out, want);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	return 1;
}

/* Start "cm-anon N --hold" and wait for its two lines. */
static int anon_hold(struct held *h, const char *pages)
{
	char line[256], want[128];

	spawn(h, ARGV("cm-anon", pages, "--hold"));
	snprintf(want, sizeof(want), "cm-anon: pid=%d pages=%s touched=%s",
		 (int)h->pid, pages, pages);
	if (read_line(h, line, sizeof(line)) || strcmp(line, want)) {
		diag("first line '%s', want '%s'", line, want);
		return 0;
	}
	if (read_line(h, line, sizeof(line)) || strcmp(line, "cm-anon: ready")) {
		diag("second line '%s', want 'cm-anon: ready'", line);
		return 0;
	}
	return 1;
}

static int t_anon_mapping(void)
{
	struct mapping m;
	struct held h;
	int ok;

	ok = anon_hold(&h, "1000");
	if (ok)
		find_mapping(h.pid, NULL, 1000 * page / 1024, &m);
	kill_held(&h);
	CHECK(ok, "cm-anon 1000 --hold did not report");
	CHECK(m.found, "no anonymous mapping of %zu kB", 1000 * page / 1024);
	CHECK(m.rss_kb == (long)(1000 * page / 1024) && m.anon_kb == m.rss_kb,
	      "Rss %ld kB Anonymous %ld kB", m.rss_kb, m.anon_kb);
	return 1;
}

static int t_anon_rollup(void)
{
	long small = -1, big = -1;
	struct held a, b;
	int ok;

	ok = anon_hold(&a, "8") && anon_hold(&b, "1008");
	if (ok) {
		small = proc_kb(a.pid, "smaps_rollup", "Anonymous");
		big = proc_kb(b.pid, "smaps_rollup", "Anonymous");
	}
	kill_held(&a);
	kill_held(&b);
	CHECK(ok, "cm-anon --hold did not report");
	/*
	 * Not exact to the page: the stack's randomised start decides
	 * whether argv and the environment span one stack page or two.
	 */
	CHECK(small > 0 && labs(big - small - (long)(1000 * page / 1024)) <=
	      (long)(2 * page / 1024),
	      "Anonymous: %ld kB (8 pages) vs %ld kB (1008 pages)", small, big);
	return 1;
}

static int t_anon_release(int sig)
{
	char line[256] = "";
	struct held h;
	int status = -1, ok;

	ok = anon_hold(&h, "3");
	if (!ok) {
		kill_held(&h);
		return 0;
	}
	CHECK(release(&h, sig, line, sizeof(line), &status) == 0,
	      "no line after the signal");
	CHECK(!strcmp(line, "cm-anon: released"), "line '%s'", line);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	return 1;
}

static int t_anon_hold_first(void)
{
	char line[256], want[128];
	struct held h;
	int ok = 1;

	spawn(&h, ARGV("cm-anon", "--hold", "3"));
	snprintf(want, sizeof(want), "cm-anon: pid=%d pages=3 touched=3",
		 (int)h.pid);
	if (read_line(&h, line, sizeof(line)) || strcmp(line, want)) {
		diag("line '%s', want '%s'", line, want);
		ok = 0;
	}
	kill_held(&h);
	return ok;
}

static int t_anon_mmap_fails(void)
{
	char max[32];
	struct run r;

	/* The largest PAGES accepted is more than any address space. */
	snprintf(max, sizeof(max), "%zu", SIZE_MAX / page);
	run(&r, ARGV("cm-anon", max));
	CHECK(exited(&r, 1), "status %#x", r.status);
	CHECK(r.out[0] == '\0', "stdout: %s", r.out);
	CHECK(strstr(r.err, "errno=ENOMEM"), "stderr: %s", r.err);
	return 1;
}

/* --mlock: the touched pages are locked while the program holds them. */
static int t_anon_mlock(void)
{
	char line[256], want[128];
	long locked = -1;
	struct held h;
	int ok = 1;

	spawn(&h, ARGV("cm-anon", "16", "--mlock", "--hold"));
	snprintf(want, sizeof(want), "cm-anon: pid=%d pages=16 touched=16",
		 (int)h.pid);
	if (read_line(&h, line, sizeof(line)) || strcmp(line, want) ||
	    read_line(&h, line, sizeof(line)) || strcmp(line, "cm-anon: ready"))
		ok = 0;
	else
		locked = proc_kb(h.pid, "status", "VmLck");
	kill_held(&h);
	CHECK(ok, "cm-anon 16 --mlock --hold did not report");
	/* the 16 pages, and nothing else of the program's */
	CHECK(locked == (long)(16 * page / 1024), "VmLck %ld kB", locked);
	return 1;
}

static int t_anon_verify(void)
{
	char want[256];
	struct run r;

	run(&r, ARGV("cm-anon", "300", "--verify"));
	snprintf(want, sizeof(want),
		 "cm-anon: pid=%d pages=300 touched=300\ncm-anon: verified=300 bad=0\n",
		 (int)r.pid);
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, want), "stdout '%s', want '%s'", r.out, want);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-file                                                             */

#define FILE_PAGES	10
#define FILE_EXTRA	100

static const char *data_file;
static long data_bytes;

static int file_report(const char *const argv[], const char *mode,
		       long pages, long bytes)
{
	char want[256];
	struct run r;

	run(&r, argv);
	snprintf(want, sizeof(want), "cm-file: pid=%d mode=%s pages=%ld bytes=%ld\n",
		 (int)r.pid, mode, pages, bytes);
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, want), "stdout '%s', want '%s'", r.out, want);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	return 1;
}

static int file_hold(struct held *h, const char *const argv[])
{
	char line[256];

	spawn(h, argv);
	if (read_line(h, line, sizeof(line)) || strncmp(line, "cm-file: pid=", 13)) {
		diag("first line '%s'", line);
		return 0;
	}
	if (read_line(h, line, sizeof(line)) || strcmp(line, "cm-file: ready")) {
		diag("second line '%s'", line);
		return 0;
	}
	return 1;
}

static int t_file_mmap_rss(const char *pages, long want_pages)
{
	const char *const with[] = { "cm-file", data_file, "--mmap", "--pages",
				     pages, "--hold", NULL };
	const char *const whole[] = { "cm-file", data_file, "--mmap", "--hold",
				      NULL };
	char line[256];
	struct mapping m;
	struct held h;
	int ok, status;

	ok = file_hold(&h, pages ? with : whole);
	if (ok)
		find_mapping(h.pid, data_file, 0, &m);
	if (!ok) {
		kill_held(&h);
		return 0;
	}
	release(&h, SIGUSR1, line, sizeof(line), &status);
	CHECK(m.found, "no mapping of %s", data_file);
	CHECK(m.size_kb == (long)(want_pages * page / 1024) &&
	      m.rss_kb == m.size_kb && m.anon_kb == 0,
	      "Size %ld kB Rss %ld kB Anonymous %ld kB, want %ld kB resident",
	      m.size_kb, m.rss_kb, m.anon_kb, (long)(want_pages * page / 1024));
	CHECK(!strcmp(line, "cm-file: released") && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "last line '%s' status %#x", line, status);
	return 1;
}

/* utime + stime of @pid, in clock ticks; -1 if unknown */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command name, in parentheses: state, 10 fields, utime, stime */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			 &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/* --loop: like --hold, and it keeps running (it uses CPU time) */
static int t_file_loop(void)
{
	char line[256];
	struct mapping m;
	struct held h;
	int ok, status;
	long t0, t1;

	ok = file_hold(&h, ARGV("cm-file", data_file, "--mmap", "--loop"));
	if (!ok) {
		kill_held(&h);
		CHECK(0, "cm-file --mmap --loop did not report");
	}
	find_mapping(h.pid, data_file, 0, &m);
	t0 = cpu_ticks(h.pid);
	usleep(300000);
	t1 = cpu_ticks(h.pid);
	release(&h, SIGUSR1, line, sizeof(line), &status);
	CHECK(m.found && m.rss_kb == m.size_kb, "mapping found %d, Rss %ld kB of %ld kB",
	      m.found, m.rss_kb, m.size_kb);
	CHECK(t0 >= 0 && t1 > t0, "no CPU time used while holding (%ld, %ld ticks)",
	      t0, t1);
	CHECK(!strcmp(line, "cm-file: released") && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "last line '%s' status %#x", line, status);
	return 1;
}

static int t_file_read_unmapped(void)
{
	struct mapping m;
	struct held h;
	int ok;

	ok = file_hold(&h, ARGV("cm-file", data_file, "--read", "--hold"));
	if (ok)
		find_mapping(h.pid, data_file, 0, &m);
	kill_held(&h);
	CHECK(ok, "cm-file --read --hold did not report");
	CHECK(!m.found, "--read mapped the file");
	return 1;
}

/* Pages [0, n) of @path resident in the page cache? -1 if unknown. */
static int resident(const char *path, long n, long *count)
{
	int fd = open(path, O_RDONLY);
	unsigned char vec[64];
	void *p;
	long i;

	*count = 0;
	if (fd < 0)
		return -1;
	p = mmap(NULL, n * page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	if (mincore(p, n * page, vec)) {
		munmap(p, n * page);
		return -1;
	}
	for (i = 0; i < n; i++)
		*count += vec[i] & 1;
	munmap(p, n * page);
	return 0;
}

static int t_file_read_cache(void)
{
	long before, after;
	struct run r;
	int fd;

	fd = open(data_file, O_RDONLY);
	CHECK(fd >= 0, "open %s", data_file);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	CHECK(resident(data_file, 3, &before) == 0, "mincore");
	if (before) {
		/* The file system keeps the pages (tmpfs?): nothing to see. */
		skip_reason = "cannot drop the test file from the page cache";
		return 1;
	}
	run(&r, ARGV("cm-file", data_file, "--read", "--pages", "3"));
	CHECK(exited(&r, 0), "status %#x", r.status);
	CHECK(resident(data_file, 3, &after) == 0, "mincore");
	CHECK(after == 3, "%ld of the first 3 pages in the page cache", after);
	return 1;
}

/*
 * cm-node 0 CMD: CMD runs bound to node 0 (every host has one), as its
 * own /proc/self/numa_maps says ("bind:0" on its mappings).
 */
static int t_node_bind(void)
{
	struct run r;

	run(&r, ARGV("cm-node", "0", "cat", "/proc/self/numa_maps"));
	if (exited(&r, 2) && strstr(r.err, "errno=ENOSYS")) {
		skip_reason = "this host's kernel has no NUMA policy";
		return 1;
	}
	CHECK(exited(&r, 0), "status %#x, stderr %s", r.status, r.err);
	CHECK(strstr(r.out, " bind:0 ") != NULL, "numa_maps: %.200s", r.out);
	return 1;
}

/* cm-node 63 true: no such node on this host; refused, true not run */
static int t_node_missing(void)
{
	struct run r;

	run(&r, ARGV("cm-node", "63", "true"));
	CHECK(exited(&r, 2), "status %#x", r.status);
	CHECK(strstr(r.err, "cm-node: node 63: ") && strstr(r.err, "from set_mempolicy)"),
	      "stderr '%s'", r.err);
	return 1;
}

static int t_file_error(const char *path, const char *mode, const char *err)
{
	char want[PATH_MAX + 128];
	struct run r;

	run(&r, ARGV("cm-file", path, mode));
	snprintf(want, sizeof(want), "cm-file: %s: %s (errno=%s from ",
		 path, err, !strcmp(err, "Is a directory") ? "EISDIR" : "ENOENT");
	CHECK(exited(&r, 1), "status %#x", r.status);
	CHECK(r.out[0] == '\0', "stdout: %s", r.out);
	CHECK(!strncmp(r.err, want, strlen(want)), "stderr '%s', want '%s...'",
	      r.err, want);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-write                                                            */

static int write_case(const char *init, const char *arg, const char *out,
		      const char *bytes, size_t nbytes)
{
	const char *path = tmp("w");
	char buf[256];
	struct run r;
	size_t len;

	write_file(path, init, strlen(init), 0644);
	run(&r, ARGV("cm-write", path, arg));
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, out), "stdout '%s', want '%s'", r.out, out);
	CHECK(read_file(path, buf, sizeof(buf), &len) == 0, "read back");
	CHECK(len == nbytes && !memcmp(buf, bytes, len),
	      "file has %zu bytes, want %zu", len, nbytes);
	return 1;
}

static int write_error(const char *const argv[], const char *out, int code,
		       void (*pre)(void))
{
	struct run r;

	run_pre(&r, argv, pre);
	CHECK(exited(&r, code), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, out), "stdout '%s', want '%s'", r.out, out);
	CHECK(!strncmp(r.err, "cm-write: ", 10), "stderr '%s'", r.err);
	return 1;
}

static int t_write_eacces(void)
{
	const char *path = tmp("rootonly");
	char buf[64], *writer;
	size_t len;
	int ok;

	if (geteuid() != 0) {
		skip_reason = "not root: cm-runas cannot switch users";
		return 1;
	}
	/* prog_path() returns a static buffer that run() reuses. */
	writer = strdup(prog_path("cm-write"));
	write_file(path, "orig", 4, 0644);
	ok = write_error(ARGV("cm-runas", "65534", writer, path, "100"),
			 "errno=EACCES\n", 1, NULL);
	free(writer);
	if (!ok)
		return 0;
	CHECK(read_file(path, buf, sizeof(buf), &len) == 0 && len == 4 &&
	      !memcmp(buf, "orig", 4), "file changed");
	return 1;
}

static int t_write_noent(void)
{
	const char *path = tmp("does-not-exist");

	if (!write_error(ARGV("cm-write", path, "x"), "errno=ENOENT\n", 1, NULL))
		return 0;
	CHECK(access(path, F_OK) != 0, "cm-write created %s", path);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-fork-loop                                                        */

static void limit_as(void)
{
	struct rlimit rl = { 64 << 20, 64 << 20 };

	setrlimit(RLIMIT_AS, &rl);
}

static int t_fork_ok(const char *const argv[], const char *want,
		     long min_faults)
{
	struct rusage before, after;
	struct run r;

	getrusage(RUSAGE_CHILDREN, &before);
	run(&r, argv);
	getrusage(RUSAGE_CHILDREN, &after);
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, want), "stdout '%s', want '%s'", r.out, want);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	CHECK(after.ru_minflt - before.ru_minflt >= min_faults,
	      "children took %ld page faults, want at least %ld",
	      after.ru_minflt - before.ru_minflt, min_faults);
	return 1;
}

static int t_fork_failures(void)
{
	struct run r;

	/* Under a 64 MiB address-space limit a 400 MB child mmap fails. */
	run_pre(&r, ARGV("cm-fork-loop", "3", "100000"), limit_as);
	CHECK(exited(&r, 1), "status %#x, stderr: %s", r.status, r.err);
	CHECK(!strcmp(r.out, "cm-fork-loop: iterations=3 failures=3\n"),
	      "stdout '%s'", r.out);
	CHECK(strstr(r.err, "iteration 0: child exited with status 1"),
	      "stderr '%s'", r.err);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-faults                                                           */

/* Its report: the numbers it was given, and the faults it timed. */
static int t_faults(void)
{
	unsigned long pages, rounds;
	long faults;
	long long ns;
	struct run r;

	run(&r, ARGV("cm-faults", "64", "3"));
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(sscanf(r.out, "cm-faults: pages=%lu rounds=%lu faults=%ld ns_per_fault=%lld",
		     &pages, &rounds, &faults, &ns) == 4, "stdout '%s'", r.out);
	CHECK(pages == 64 && rounds == 3, "stdout '%s'", r.out);
	/* two timed rounds of 64 faults, and a few of its own (stack) */
	CHECK(faults >= 128 && faults < 128 + 16, "faults=%ld, want 128..143", faults);
	CHECK(ns > 0, "ns_per_fault=%lld", ns);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-time                                                             */

/* CMD's exit status passes through, and the time is on stderr. */
static int t_time(const char *const argv[], int code)
{
	long long ns;
	struct run r;

	run(&r, argv);
	CHECK(exited(&r, code), "status %#x, want exit %d; stderr: %s",
	      r.status, code, r.err);
	CHECK(sscanf(r.err, "cm-time: ns=%lld", &ns) == 1, "stderr '%s'", r.err);
	CHECK(ns > 0, "ns=%lld", ns);
	return 1;
}

/* A command that sleeps 0.2 s takes at least that long. */
static int t_time_sleep(void)
{
	long long ns;
	struct run r;

	run(&r, ARGV("cm-time", "sleep", "0.2"));
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(sscanf(r.err, "cm-time: ns=%lld", &ns) == 1, "stderr '%s'", r.err);
	CHECK(ns >= 200000000LL && ns < 5000000000LL, "ns=%lld, want 0.2-5 s", ns);
	return 1;
}

/* A command that cannot be run: 127, and no time. */
static int t_time_missing(void)
{
	struct run r;

	run(&r, ARGV("cm-time", "/nonexistent/cmd"));
	CHECK(exited(&r, 127), "status %#x, stderr: %s", r.status, r.err);
	CHECK(strstr(r.err, "/nonexistent/cmd") != NULL, "stderr '%s'", r.err);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-alloc                                                            */

/* Each kind, a few pages: the report line, exit 0, nothing on stderr. */
static int t_alloc(const char *kind)
{
	char want[64];
	struct run r;

	run(&r, ARGV("cm-alloc", kind, "4"));
	CHECK(exited(&r, 0), "status %#x, stdout '%s', stderr: %s", r.status,
	      r.out, r.err);
	snprintf(want, sizeof(want), "cm-alloc: %s pages=4\n", kind);
	CHECK(!strcmp(r.out, want), "stdout '%s', want '%s'", r.out, want);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-runas                                                            */

static int t_runas_ids(void)
{
	struct run r;
	char *uid, *gid, *groups;

	run(&r, ARGV("cm-runas", "65534", "cat", "/proc/self/status"));
	if (geteuid() != 0) {
		CHECK(exited(&r, 1), "status %#x", r.status);
		CHECK(strstr(r.err, "errno=EPERM"), "stderr '%s'", r.err);
		return 1;
	}
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	uid = strstr(r.out, "\nUid:");
	gid = strstr(r.out, "\nGid:");
	groups = strstr(r.out, "\nGroups:");
	CHECK(uid && !strncmp(uid, "\nUid:\t65534\t65534\t65534\t65534\n", 30),
	      "Uid line wrong");
	CHECK(gid && !strncmp(gid, "\nGid:\t65534\t65534\t65534\t65534\n", 30),
	      "Gid line wrong");
	CHECK(groups && strspn(groups + 8, " \t") == strcspn(groups + 8, "\n"),
	      "supplementary groups kept");
	return 1;
}

static int t_runas_status(void)
{
	struct run r;

	if (geteuid() != 0) {
		skip_reason = "not root: cm-runas cannot switch users";
		return 1;
	}
	run(&r, ARGV("cm-runas", "65534", "sh", "-c", "exit 7"));
	CHECK(exited(&r, 7), "status %#x, stderr: %s", r.status, r.err);
	return 1;
}

static int t_runas_noexec(void)
{
	struct run r;

	if (geteuid() != 0) {
		skip_reason = "not root: cm-runas cannot switch users";
		return 1;
	}
	run(&r, ARGV("cm-runas", "0", tmp("no-such-command")));
	CHECK(exited(&r, 127), "status %#x", r.status);
	CHECK(strstr(r.err, "errno=ENOENT"), "stderr '%s'", r.err);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-in, in a stand-in hierarchy: $CM_ROOT with plain "tasks" files    */

/* Empty ROOT/tasks, a/tasks and a/b/tasks, and a directory with none. */
static void in_reset(void)
{
	write_file(tmp("croot/tasks"), "", 0, 0644);
	write_file(tmp("croot/a/tasks"), "", 0, 0644);
	write_file(tmp("croot/a/b/tasks"), "", 0, 0644);
}

/* "cm-in NAME sh -c 'echo $$'": CMD printed the pid cm-in wrote to FILE. */
static int t_in_join(const char *name, const char *file)
{
	char content[256];
	struct run r;
	size_t len;

	in_reset();
	run(&r, ARGV("cm-in", name, "sh", "-c", "echo $$"));
	CHECK(exited(&r, 0), "status %#x, stderr: %s", r.status, r.err);
	CHECK(read_file(tmp(file), content, sizeof(content) - 1, &len) == 0,
	      "cannot read %s", file);
	content[len] = '\0';
	CHECK(r.out[0] && !strcmp(content, r.out),
	      "%s holds '%s', CMD's pid is '%s'", file, content, r.out);
	CHECK(r.err[0] == '\0', "stderr: %s", r.err);
	return 1;
}

static int t_in_status(void)
{
	struct run r;

	in_reset();
	run(&r, ARGV("cm-in", "a", "sh", "-c", "exit 7"));
	CHECK(exited(&r, 7), "status %#x, stderr: %s", r.status, r.err);
	return 1;
}

static int t_in_noexec(void)
{
	struct run r;

	in_reset();
	run(&r, ARGV("cm-in", "a", tmp("no-such-command")));
	CHECK(exited(&r, 127), "status %#x", r.status);
	CHECK(strstr(r.err, "errno=ENOENT"), "stderr '%s'", r.err);
	return 1;
}

/* A tasks file that cannot be written (here a directory): exit 1, CMD not run. */
static int t_in_cannot_join(const char *marker)
{
	struct run r;

	in_reset();
	run(&r, ARGV("cm-in", "d", "touch", marker));
	CHECK(exited(&r, 1), "status %#x, stderr: %s", r.status, r.err);
	CHECK(strstr(r.err, "cannot join") && strstr(r.err, "errno=EISDIR"),
	      "stderr '%s'", r.err);
	CHECK(access(marker, F_OK) != 0, "CMD ran");
	return 1;
}

/* ------------------------------------------------------------------ */

/*
 * cm-file --wait: nothing is opened before the release, so a file that
 * appears only while it waits is read.
 */
static int t_file_wait(void)
{
	const char *late = tmp("late");
	char line[256], want[256];
	struct held h;
	int status;

	unlink(late);
	spawn(&h, ARGV("cm-file", late, "--read", "--wait"));
	if (read_line(&h, line, sizeof(line)) || strcmp(line, "cm-file: ready")) {
		kill_held(&h);
		CHECK(0, "first line '%s', want 'cm-file: ready'", line);
	}
	write_file(late, "abc", 3, 0644);
	kill(h.pid, SIGUSR1);
	if (read_line(&h, line, sizeof(line)) || strcmp(line, "cm-file: released")) {
		kill_held(&h);
		CHECK(0, "second line '%s', want 'cm-file: released'", line);
	}
	snprintf(want, sizeof(want), "cm-file: pid=%d mode=read pages=1 bytes=3",
		 (int)h.pid);
	read_line(&h, line, sizeof(line));
	close(h.fd);
	waitpid(h.pid, &status, 0);
	CHECK(!strcmp(line, want), "report '%s', want '%s'", line, want);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-grow                                                             */

/*
 * Start cm-grow, check its pid/tid line (tid == pid unless --thread),
 * take two steps and check each report and the growth of its anonymous
 * memory (smaps_rollup), then end it with SIGTERM.
 */
static int t_grow(const char *const argv[], int threaded, int leader_exits)
{
	char line[256], want[256];
	long kb0, kb1;
	int pid, tid, status, step;
	struct held h;

	spawn(&h, argv);
	if (read_line(&h, line, sizeof(line)) ||
	    sscanf(line, "cm-grow: pid=%d tid=%d", &pid, &tid) != 2 ||
	    read_line(&h, want, sizeof(want)) || strcmp(want, "cm-grow: ready")) {
		kill_held(&h);
		CHECK(0, "first lines '%s' / '%s'", line, want);
	}
	if (pid != h.pid || (threaded ? tid == pid : tid != pid)) {
		kill_held(&h);
		CHECK(0, "pid=%d tid=%d, spawned %d, threaded %d", pid, tid,
		      (int)h.pid, threaded);
	}
	kb0 = proc_kb(h.pid, "smaps_rollup", "Anonymous");
	for (step = 1; step <= 2; step++) {
		kill(h.pid, SIGUSR1);
		snprintf(want, sizeof(want), "cm-grow: step=%d touched=50 total=%d",
			 step, 50 * step);
		if (read_line(&h, line, sizeof(line)) || strcmp(line, want)) {
			kill_held(&h);
			CHECK(0, "step %d: '%s', want '%s'", step, line, want);
		}
	}
	kb1 = proc_kb(h.pid, "smaps_rollup", "Anonymous");
	if (leader_exits) {
		char path[64], state[256] = "";
		FILE *f;
		int tries;

		/*
		 * The leader's pthread_exit() may still be on its way when the
		 * steps are done (on a loaded machine): give it 2 seconds.
		 */
		snprintf(path, sizeof(path), "/proc/%d/status", (int)h.pid);
		for (tries = 0; tries < 200; tries++) {
			state[0] = '\0';
			f = fopen(path, "r");
			while (f && fgets(state, sizeof(state), f) &&
			       strncmp(state, "State:", 6))
				;
			if (f)
				fclose(f);
			if (strstr(state, "zombie"))
				break;
			usleep(10000);
		}
		if (!strstr(state, "zombie")) {
			kill_held(&h);
			CHECK(0, "leader state '%s', want zombie", state);
		}
	}
	kill(h.pid, SIGTERM);
	close(h.fd);
	waitpid(h.pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	/* smaps_rollup of a zombie leader is empty: check growth otherwise */
	if (!leader_exits)
		CHECK(kb1 - kb0 >= (long)(100 * page / 1024),
		      "Anonymous grew %ld kB, want at least %ld", kb1 - kb0,
		      (long)(100 * page / 1024));
	return 1;
}

/* ------------------------------------------------------------------ */
/* cm-stat                                                             */

static int t_stat_dir(const char *dir, int hold, const char *want_tail,
		      int code)
{
	char line[256], want[256];
	struct held h;
	int status;
	struct run r;

	if (!hold) {
		run(&r, ARGV("cm-stat", dir));
		snprintf(want, sizeof(want), "cm-stat: pid=%d %s\n", (int)r.pid,
			 want_tail);
		CHECK(exited(&r, code), "status %#x, stderr: %s", r.status, r.err);
		CHECK(!strcmp(r.out, want), "stdout '%s', want '%s'", r.out, want);
		return 1;
	}
	spawn(&h, ARGV("cm-stat", dir, "--hold"));
	if (read_line(&h, line, sizeof(line)) || strcmp(line, "cm-stat: ready")) {
		kill_held(&h);
		CHECK(0, "first line '%s', want 'cm-stat: ready'", line);
	}
	kill(h.pid, SIGUSR1);
	read_line(&h, line, sizeof(line));	/* "cm-stat: released" */
	CHECK(!strcmp(line, "cm-stat: released"), "second line '%s'", line);
	read_line(&h, line, sizeof(line));
	snprintf(want, sizeof(want), "cm-stat: pid=%d %s", (int)h.pid, want_tail);
	if (strcmp(line, want)) {
		kill_held(&h);
		CHECK(0, "report '%s', want '%s'", line, want);
	}
	/* and holds again after the report */
	read_line(&h, line, sizeof(line));
	if (strcmp(line, "cm-stat: ready")) {
		kill_held(&h);
		CHECK(0, "after the report '%s', want 'cm-stat: ready'", line);
	}
	release(&h, SIGUSR1, line, sizeof(line), &status);
	CHECK(!strcmp(line, "cm-stat: released"), "last line '%s'", line);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == code, "status %#x",
	      status);
	return 1;
}

int main(int argc, char **argv)
{
	char pagesbuf[32], marker[PATH_MAX];
	long long t0 = now_ms();
	const char *empty, *w;
	char *data;

	if (argc != 2) {
		fprintf(stderr, "usage: cm-test BINDIR\n");
		return 2;
	}
	bindir = argv[1];
	page = cm_page_size();
	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test-tmp", bindir);
	mkdir(tmpdir, 0755);
	snprintf(tmpdir, sizeof(tmpdir), "%s/test-tmp/run.XXXXXX", bindir);
	if (!mkdtemp(tmpdir)) {
		perror(tmpdir);
		return 99;
	}
	chmod(tmpdir, 0755);	/* cm-runas tests reach files in here */

	/* lib.c */
	report(t_parse(), "cm_parse_ulong accepts only plain decimal numbers in range");
	report(t_errname(), "cm_errname gives symbolic errno names");

	/* cm-anon */
	report(t_anon_report(), "cm-anon 10: exact report line with its pid, exit 0");
	report(t_anon_mapping(), "cm-anon 1000 --hold: a 1000-page anon mapping, all resident (smaps)");
	report(t_anon_rollup(), "cm-anon: 1008 vs 8 pages differ by 1000 pages (+-2 for the stack) of Anonymous (smaps_rollup)");
	report(t_anon_mlock(), "cm-anon 16 --mlock --hold: exactly its 16 pages locked (VmLck)");
	report(t_anon_release(SIGUSR1), "cm-anon --hold: SIGUSR1 -> 'cm-anon: released', exit 0");
	report(t_anon_release(SIGTERM), "cm-anon --hold: SIGTERM -> 'cm-anon: released', exit 0");
	report(t_anon_hold_first(), "cm-anon --hold 3: option before PAGES");
	report(t_anon_mmap_fails(), "cm-anon with more pages than the address space: exit 1, errno=ENOMEM");
	snprintf(pagesbuf, sizeof(pagesbuf), "%zu", SIZE_MAX / page + 1);
	test_bad(ARGV("cm-anon"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", ""), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "abc"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "-1"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "10x"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "+5"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "0x10"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "99999999999999999999"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", pagesbuf), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "10", "--bogus"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "10", "20"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "10", "--hold", "--hold"), NULL, NULL, NULL);
	test_bad(ARGV("cm-anon", "10", "--verify", "--verify"), NULL, NULL, NULL);
	report(t_anon_verify(), "cm-anon 300 --verify: every page reads back its own word");

	/* cm-file */
	data_bytes = FILE_PAGES * page + FILE_EXTRA;
	data = malloc(data_bytes);
	memset(data, 'x', data_bytes);
	data_file = strdup(tmp("data"));
	write_file(data_file, data, data_bytes, 0644);
	free(data);
	empty = strdup(tmp("empty"));
	write_file(empty, "", 0, 0644);
	report(file_report(ARGV("cm-file", data_file, "--read"), "read",
			   FILE_PAGES + 1, data_bytes),
	       "cm-file --read: whole file, pages rounded up, exact bytes");
	report(file_report(ARGV("cm-file", data_file, "--read", "--pages", "3"),
			   "read", 3, 3 * page),
	       "cm-file --read --pages 3: 3 pages");
	report(file_report(ARGV("cm-file", "--pages", "100", "--read", data_file),
			   "read", FILE_PAGES + 1, data_bytes),
	       "cm-file --pages 100 larger than the file: whole file");
	report(file_report(ARGV("cm-file", data_file, "--mmap"), "mmap",
			   FILE_PAGES + 1, data_bytes),
	       "cm-file --mmap: whole file");
	report(file_report(ARGV("cm-file", empty, "--read"), "read", 0, 0),
	       "cm-file --read of an empty file: 0 pages");
	report(file_report(ARGV("cm-file", empty, "--mmap"), "mmap", 0, 0),
	       "cm-file --mmap of an empty file: 0 pages");
	report(t_file_mmap_rss("5", 5),
	       "cm-file --mmap --pages 5 --hold: mapping is 5 pages, all resident, file-backed (smaps)");
	report(t_file_mmap_rss(NULL, FILE_PAGES + 1),
	       "cm-file --mmap --hold: whole file mapped and resident (smaps), released on SIGUSR1");
	report(t_file_read_unmapped(), "cm-file --read --hold: the file is not mapped");
	report(t_file_read_cache(), "cm-file --read --pages 3: pages are in the page cache (mincore)");
	report(t_file_error(tmp("nope"), "--read", "No such file or directory"),
	       "cm-file on a missing file: exit 1, strerror and errno=ENOENT");
	report(t_file_error(tmpdir, "--read", "Is a directory"),
	       "cm-file --read of a directory: exit 1, errno=EISDIR");
	test_bad(ARGV("cm-file"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", "--read"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--read", "--mmap"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--read", "--pages"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--read", "--pages", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--mmap", "--pages", "-1"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--mmap", "--pages", "abc"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--read", "--bogus"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, data_file, "--read"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--read", "--wait", "--wait"), NULL, NULL, NULL);
	report(t_file_wait(), "cm-file --wait: opens the file only after SIGUSR1");
	report(t_file_loop(), "cm-file --mmap --loop: holds the mapping, keeps reading, released on SIGUSR1");
	test_bad(ARGV("cm-file", data_file, "--read", "--loop"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--mmap", "--loop", "--hold"), NULL, NULL, NULL);
	test_bad(ARGV("cm-file", data_file, "--mmap", "--loop", "--loop"), NULL, NULL, NULL);

	/* cm-grow */
	report(t_grow(ARGV("cm-grow", "50"), 0, 0),
	       "cm-grow 50: the leader touches 50 new pages per SIGUSR1, exit 0 on SIGTERM");
	report(t_grow(ARGV("cm-grow", "50", "--thread"), 1, 0),
	       "cm-grow 50 --thread: a second thread (tid != pid) touches");
	report(t_grow(ARGV("cm-grow", "--thread", "--exit-leader", "50"), 1, 1),
	       "cm-grow --exit-leader: the leader is a zombie, the toucher runs on");
	test_bad(ARGV("cm-grow"), NULL, NULL, NULL);
	test_bad(ARGV("cm-grow", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-grow", "x"), NULL, NULL, NULL);
	test_bad(ARGV("cm-grow", "5", "6"), NULL, NULL, NULL);
	test_bad(ARGV("cm-grow", "5", "--exit-leader"), NULL, NULL, NULL);
	test_bad(ARGV("cm-grow", "5", "--thread", "--thread"), NULL, NULL, NULL);

	/* cm-stat */
	{
		char sdir[PATH_MAX];

		snprintf(sdir, sizeof(sdir), "%s", tmp("sdir"));
		mkdir(sdir, 0755);
		write_file(tmp("sdir/a"), "a", 1, 0644);
		write_file(tmp("sdir/b"), "b", 1, 0644);
		mkdir(tmp("sdir/c"), 0755);
		report(t_stat_dir(sdir, 0, "entries=3 stated=3 failed=0", 0),
		       "cm-stat DIR: 3 entries, all stated, exit 0");
		report(t_stat_dir(sdir, 1, "entries=3 stated=3 failed=0", 0),
		       "cm-stat DIR --hold: ready, stats after SIGUSR1, holds again after the report");
		report(t_stat_dir(tmp("sdir/c"), 0, "entries=0 stated=0 failed=0", 0),
		       "cm-stat of an empty directory: 0 entries");
		test_bad(ARGV("cm-stat"), NULL, NULL, NULL);
		test_bad(ARGV("cm-stat", ""), NULL, NULL, NULL);
		test_bad(ARGV("cm-stat", sdir, "--bogus"), NULL, NULL, NULL);
		test_bad(ARGV("cm-stat", sdir, sdir), NULL, NULL, NULL);
		test_bad(ARGV("cm-stat", sdir, "--hold", "--hold"), NULL, NULL, NULL);
	}

	/*
	 * cm-perf: its arguments only.  Whether it may open a perf event
	 * depends on the host (perf_event_paranoid, a container's seccomp
	 * profile); the guest, where it runs as root, is where it maps.
	 */
	test_bad(ARGV("cm-perf"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", ""), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "3"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "12"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "-8"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "+8"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "0x8"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "99999999999999999999"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", pagesbuf), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "8", "16"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "8", "--bogus"), NULL, NULL, NULL);
	test_bad(ARGV("cm-perf", "8", "--hold", "--hold"), NULL, NULL, NULL);

	/* cm-write */
	report(write_case("", "100\\n", "ok 4\n", "100\n", 4),
	       "cm-write '100\\n': one 4-byte write, 'ok 4'");
	report(write_case("", "100", "ok 3\n", "100", 3),
	       "cm-write '100': 3 bytes, no newline added");
	report(write_case("", "", "ok 0\n", "", 0),
	       "cm-write '': a zero-byte write, 'ok 0'");
	report(write_case("", "a\\tb\\\\c\\0d\\x41\\r", "ok 9\n",
			  "a\tb\\c\0dA\r", 9),
	       "cm-write escapes \\t \\\\ \\0 \\xHH \\r");
	report(write_case("abcdef", "XY", "ok 2\n", "XYcdef", 6),
	       "cm-write opens without O_TRUNC");
	report(write_error(ARGV("cm-write", "/dev/full", "x"), "errno=ENOSPC\n",
			   1, NULL),
	       "cm-write to /dev/full: 'errno=ENOSPC', exit 1");
	report(t_write_noent(), "cm-write to a missing file: 'errno=ENOENT', exit 1, no file created");
	report(t_write_eacces(), "cm-runas 65534 cm-write on a root-only file: 'errno=EACCES', unchanged");
	w = strdup(tmp("w-orig"));
	write_file(w, "orig", 4, 0644);
	test_bad(ARGV("cm-write"), NULL, w, "orig");
	test_bad(ARGV("cm-write", w), NULL, w, "orig");
	test_bad(ARGV("cm-write", w, "a", "b"), NULL, w, "orig");
	test_bad(ARGV("cm-write", w, "\\q"), NULL, w, "orig");
	test_bad(ARGV("cm-write", w, "abc\\"), NULL, w, "orig");
	test_bad(ARGV("cm-write", w, "\\x4"), NULL, w, "orig");
	test_bad(ARGV("cm-write", w, "\\xZZ"), NULL, w, "orig");
	test_bad(ARGV("cm-write", "", "x"), NULL, w, "orig");

	/* cm-alloc (mlock and locked need RLIMIT_MEMLOCK >= 4 pages) */
	report(t_alloc("anon"), "cm-alloc anon 4");
	report(t_alloc("shmem"), "cm-alloc shmem 4");
	report(t_alloc("sysv"), "cm-alloc sysv 4");
	report(t_alloc("mlock"), "cm-alloc mlock 4");
	report(t_alloc("locked"), "cm-alloc locked 4");
	test_bad(ARGV("cm-alloc"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "anon"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "heap", "4"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "anon", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "anon", "4x"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "anon", "4", "--keep"), NULL, NULL, NULL);
	test_bad(ARGV("cm-alloc", "anon", "4", "--hold", "x"), NULL, NULL, NULL);

	/* cm-faults */
	report(t_faults(), "cm-faults 64 3: times two rounds of 64 faults");
	test_bad(ARGV("cm-faults"), NULL, NULL, NULL);
	test_bad(ARGV("cm-faults", "64"), NULL, NULL, NULL);
	test_bad(ARGV("cm-faults", "0", "3"), NULL, NULL, NULL);
	test_bad(ARGV("cm-faults", "64", "1"), NULL, NULL, NULL);
	test_bad(ARGV("cm-faults", "x", "3"), NULL, NULL, NULL);
	test_bad(ARGV("cm-faults", "64", "3", "5"), NULL, NULL, NULL);

	/* cm-node */
	report(t_node_bind(), "cm-node 0 CMD: CMD runs bound to node 0 (numa_maps)");
	report(t_node_missing(), "cm-node 63 CMD: no such node, exit 2, CMD not run");
	{
		struct run r;

		run(&r, ARGV("cm-node", "0", tmp("no-such-command")));
		report(exited(&r, 127), "cm-node with a missing command: exit 127");
	}
	test_bad(ARGV("cm-node"), NULL, NULL, NULL);
	test_bad(ARGV("cm-node", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-node", "x", "true"), NULL, NULL, NULL);
	test_bad(ARGV("cm-node", "-1", "true"), NULL, NULL, NULL);
	test_bad(ARGV("cm-node", "64", "true"), NULL, NULL, NULL);
	test_bad(ARGV("cm-node", "0", ""), NULL, NULL, NULL);

	/* cm-uffd: refused before it makes a file or touches userfaultfd */
	test_bad(ARGV("cm-uffd"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "copy"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "paste", "4"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "copy", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "copy", "4k"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "continue", "4", "5"), NULL, NULL, NULL);
	test_bad(ARGV("cm-uffd", "copy", "4", "--hold", "--hold"), NULL, NULL, NULL);

	/* cm-time */
	report(t_time(ARGV("cm-time", "true"), 0), "cm-time true: exit 0, ns on stderr");
	report(t_time(ARGV("cm-time", "sh", "-c", "exit 3"), 3),
	       "cm-time sh -c 'exit 3': exit 3");
	report(t_time(ARGV("cm-time", "sh", "-c", "kill -TERM $$"), 128 + SIGTERM),
	       "cm-time: a command killed by SIGTERM gives 143");
	report(t_time_sleep(), "cm-time sleep 0.2: at least 0.2 s");
	report(t_time_missing(), "cm-time /nonexistent/cmd: 127");
	test_bad(ARGV("cm-time"), NULL, NULL, NULL);
	test_bad(ARGV("cm-time", "-x", "true"), NULL, NULL, NULL);
	test_bad(ARGV("cm-time", ""), NULL, NULL, NULL);

	/* cm-fork-loop */
	report(t_fork_ok(ARGV("cm-fork-loop", "5"),
			 "cm-fork-loop: iterations=5 failures=0\n", 5 * 4),
	       "cm-fork-loop 5: report line, exit 0");
	report(t_fork_ok(ARGV("cm-fork-loop", "5", "2000"),
			 "cm-fork-loop: iterations=5 failures=0\n", 5 * 2000),
	       "cm-fork-loop 5 2000: children fault in at least 10000 pages (rusage)");
	report(t_fork_ok(ARGV("cm-fork-loop", "3", "0", "--exec"),
			 "cm-fork-loop: iterations=3 failures=0\n", 0),
	       "cm-fork-loop 3 0 --exec");
	report(t_fork_ok(ARGV("cm-fork-loop", "3", "--vfork"),
			 "cm-fork-loop: iterations=3 failures=0\n", 0),
	       "cm-fork-loop 3 --vfork");
	test_bad(ARGV("cm-fork-loop", "3", "--vfork", "--exec"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "3", "--vfork", "--vfork"), NULL, NULL, NULL);
	report(t_fork_failures(), "cm-fork-loop: failing children counted, exit 1");
	snprintf(marker, sizeof(marker), "%s", tmp("marker"));
	test_bad(ARGV("cm-fork-loop"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "0"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "abc"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "-3"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "1000000001"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "5", "-1"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "5", "x"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "5", pagesbuf), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "5", "4", "6"), NULL, NULL, NULL);
	test_bad(ARGV("cm-fork-loop", "5", "--bogus"), NULL, NULL, NULL);

	/*
	 * cm-race: its arguments only; a race needs the guest's memory
	 * containers.  RA and RB do not exist, so a run that got past the
	 * checks would fail with 1, not 2.
	 */
	{
		const char *ra = strdup(tmp("ra")), *rb = strdup(tmp("rb"));

		test_bad(ARGV("cm-race"), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "64", ra), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "spawn", "4", "64", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "", "4", "64", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "0", "64", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "1001", "64", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "exec", "+4", "64", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "exec", "4", "31", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "exec", "4", "0x40", ra, rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "99999999999999999999", ra, rb),
			 NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "64", ra, ra), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "64", "", rb), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "64", ra, rb, ra), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "fork", "4", "64", ra, rb, "--bogus"),
			 NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "--hold", "fork", "4", "64", ra, rb, "--hold"),
			 NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "--touch", "64"), NULL, NULL, NULL);
		test_bad(ARGV("cm-race", "--touch", "64", "1", "x"), NULL, NULL, NULL);
	}

	/* cm-runas */
	report(t_runas_ids(), "cm-runas 65534: uid, gid 65534 (real, effective, saved), no supplementary groups");
	report(t_runas_status(), "cm-runas passes on the command's exit status");
	report(t_runas_noexec(), "cm-runas with a missing command: exit 127, errno=ENOENT");
	test_bad(ARGV("cm-runas"), NULL, NULL, NULL);
	test_bad(ARGV("cm-runas", "65534"), NULL, NULL, NULL);
	test_bad(ARGV("cm-runas", "abc", "touch", marker), marker, NULL, NULL);
	test_bad(ARGV("cm-runas", "-1", "touch", marker), marker, NULL, NULL);
	test_bad(ARGV("cm-runas", "4294967295", "touch", marker), marker, NULL, NULL);
	test_bad(ARGV("cm-runas", "99999999999999999999", "touch", marker), marker, NULL, NULL);
	test_bad(ARGV("cm-runas", "", "touch", marker), marker, NULL, NULL);
	test_bad(ARGV("cm-runas", "0", ""), NULL, NULL, NULL);

	/* cm-in: CM_ROOT is a stand-in for /container */
	mkdir(tmp("croot"), 0755);
	mkdir(tmp("croot/a"), 0755);
	mkdir(tmp("croot/a/b"), 0755);
	mkdir(tmp("croot/notc"), 0755);
	mkdir(tmp("croot/d"), 0755);
	mkdir(tmp("croot/d/tasks"), 0755);
	mkdir(tmp("noroot"), 0755);
	setenv("CM_ROOT", tmp("croot"), 1);
	report(t_in_join("a", "croot/a/tasks"),
	       "cm-in a: writes its pid to a/tasks, and CMD runs with that pid");
	report(t_in_join("a/b/", "croot/a/b/tasks"),
	       "cm-in a/b/: a nested container, trailing slash allowed");
	report(t_in_status(), "cm-in passes on the command's exit status");
	report(t_in_noexec(), "cm-in with a missing command: exit 127, errno=ENOENT");
	report(t_in_cannot_join(marker), "cm-in where the tasks file cannot be written: exit 1, errno=EISDIR, CMD not run");
	in_reset();
	{
		static const char *const names[] = {
			"", "/", "/a", ".", "..", "../a", "a/..", "a/./b", "a//b",
			"nope", "a/nope", "notc", "-c",
		};
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			test_bad(ARGV("cm-in", names[i], "touch", marker), marker,
				 tmp("croot/a/tasks"), "");
	}
	test_bad(ARGV("cm-in"), NULL, NULL, NULL);
	test_bad(ARGV("cm-in", "a"), NULL, tmp("croot/a/tasks"), "");
	test_bad(ARGV("cm-in", "a", ""), NULL, tmp("croot/a/tasks"), "");
	setenv("CM_ROOT", tmp("noroot"), 1);	/* nothing mounted there */
	test_bad(ARGV("cm-in", "a", "touch", marker), marker, NULL, NULL);
	unsetenv("CM_ROOT");

	if (!nfailed) {
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "cm-test: could not remove %s\n", tmpdir);
		*strrchr(tmpdir, '/') = '\0';
		rmdir(tmpdir);		/* test-tmp, if no failed run is kept */
	}
	printf("1..%d\n", ntests);
	printf("# %d passed, %d failed, %.1f s\n", ntests - nfailed, nfailed,
	       (now_ms() - t0) / 1000.0);
	return nfailed ? 1 : 0;
}
