// SPDX-License-Identifier: GPL-2.0
/*
 * cm-race - make new mms while their task changes container; see who pays.
 *
 *   cm-race fork|exec N PAGES DIR_A DIR_B [--hold]
 *
 * DIR_A and DIR_B are memory containers (with memory.usage, in pages, and
 * cgroup.procs).  A mover thread moves tasks between them, through
 * cgroup.procs, while new mms are made:
 *   fork: this process, put in A first, forks N children while the
 *         mover moves it A, B, A, B, ... as fast as it can;
 *   exec: N times, one at a time, a child put in A first execs this
 *         program again (/proc/self/exe, as "cm-race --touch ..."), and
 *         the mover moves it to B in the middle of its execve().
 * Each child then touches PAGES anonymous pages and waits.  The forking
 * parent moves itself to DIR_A/.. (the root in the labs); exec mode
 * needs /tmp for a moment.  --hold: print "cm-race: ready" and wait for
 * SIGUSR1 or SIGTERM.  Then each child is killed in turn, and where its
 * pages come back says who paid for them:
 *   cm-race: pid=<pid> in=a|b|- drop_a=<pages> drop_b=<pages> verdict=<v>
 * The container that paid for the child is the one that got (at least
 * PAGES - SLACK of) its PAGES back.  ok: that is the container the child
 * is in; wrong: it is the other one; unclear: neither or both paid, or
 * the child is in neither; gone: it had died already (counted as
 * unclear).  Last:
 *   cm-race: mode=fork|exec children=N wrong=M unclear=K
 * after a line "cm-race: moves=<moves the mover made>".
 * Exit 0 if M and K are 0, 1 otherwise or on an error, 2 on bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"

#define PROG		"cm-race"
#define USAGE		"cm-race fork|exec N PAGES DIR_A DIR_B [--hold]"
#define MAX_N		1000
#define MAX_PAGES	1048576
/*
 * A dead child gives back more than its PAGES, and not all to the same
 * container: its stack and data pages, and the first pages of an exec'd
 * image, were charged before a move that came late (legitimately) to
 * the container it left; after a fork, the old copies of the pages the
 * parent wrote next, which only the child still maps, were charged to
 * wherever the parent was.  A dozen or so pages each way.  PAGES, all
 * touched after the last move, stand out: the payer gets PAGES back,
 * give or take SLACK.
 */
#define SLACK		16

static const char *dir[2];
static int procs[2];			/* A's and B's cgroup.procs, open */
static unsigned long pages;
static pid_t kids[MAX_N], self;
static int nkids;
static cpu_set_t cpus;			/* the CPUs we were given */

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s (errno=%s)\n", PROG, what,
		strerror(errno), cm_errname(errno));
	while (getpid() == self && nkids)	/* leave no child behind */
		kill(kids[--nkids], SIGKILL);
	_exit(1);
}

static void put(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		die("pipe write");
}

static void get(int fd)
{
	char c;

	errno = EPIPE;			/* 0 bytes read: the writer died */
	if (read(fd, &c, 1) != 1)
		die("pipe read");
}

/* Write @pid to an open cgroup.procs: move its thread group there. */
static int move(int fd, pid_t pid)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", (int)pid);

	return write(fd, buf, len) == len ? 0 : -1;
}

/* Pin the calling thread to the @nth of our CPUs, if there is one. */
static void pin(int nth)
{
	cpu_set_t one;
	int cpu;

	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &cpus) && nth-- == 0) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			sched_setaffinity(0, sizeof(one), &one);
		}
	}
}

/* @cm-begin touch */
/* A child: touch PAGES new pages, say so on @up, wait to be killed. */
static void touch(int up)
{
	size_t page = cm_page_size();
	unsigned long i;
	char *mem;

	mem = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	for (i = 0; i < pages; i++)
		mem[i * page] = 1;
	put(up, 'd');
	for (;;)
		pause();
}
/* @cm-end touch */

/*
 * The mover is a thread, not a process: it shares our variables and
 * charges A and B nothing of its own.  It has a CPU to itself, the
 * parent and the children keep the other one, so that its moves land in
 * the middle of a fork or an exec.
 *
 * A move takes cgroup_threadgroup_rwsem for writing, which first waits
 * for an RCU grace period (its rcu_sync) unless another move has just
 * held it: milliseconds, longer than a whole fork or exec under TCG.
 * So the mover never pauses: in exec mode, until its one real move, it
 * moves the child to A, where it already is.
 */
static pthread_t mover_thread;
static atomic_int stop;
static atomic_ulong moves;
static pid_t target;			/* the task it moves */
static int watch = -1;			/* exec: the child's pipe */

static void moved(int fd)
{
	if (move(fd, target))
		die("move");
	moves++;
}

/* @cm-begin mover */
static void *mover(void *arg)
{
	struct pollfd p = { .fd = watch, .events = POLLIN };
	int to = 1;
	char c;

	pin(1);
	while (!atomic_load(&stop)) {
		if (watch < 0) {		/* fork: A, B, A, B, ... */
			moved(procs[to]);
			to = !to;
		} else if (poll(&p, 1, 0) == 1) {
			/* 'x': the child is in execve(); move it, once */
			if (read(watch, &c, 1) == 1)
				moved(procs[1]);
			break;
		} else {			/* exec: A, A, A, ... */
			moved(procs[0]);
		}
	}
	return arg;
}
/* @cm-end mover */

static void start_mover(pid_t pid, int fd)
{
	unsigned long made = moves;

	target = pid;
	watch = fd;
	atomic_store(&stop, 0);
	errno = pthread_create(&mover_thread, NULL, mover, NULL);
	if (errno)
		die("pthread_create");
	while (moves == made)		/* until moves are cheap */
		sched_yield();
}

static void stop_mover(void)
{
	atomic_store(&stop, 1);
	pthread_join(mover_thread, NULL);
}

/* @cm-begin fork */
/* fork: the mover moves us between A and B while we fork N children. */
static void fork_race(unsigned long n)
{
	char path[4096];
	int up[2], fd;
	pid_t pid;

	if (pipe(up) || move(procs[0], self))
		die("the move to DIR_A");
	start_mover(self, -1);
	while ((unsigned long)nkids < n) {
		pid = fork();
		if (pid == 0)
			touch(up[1]);
		if (pid < 0)
			die("fork");
		kids[nkids++] = pid;
	}
	close(up[1]);
	while (n--)
		get(up[0]);
	stop_mover();

	/* Out of A and B, so that what we touch next is not theirs. */
	snprintf(path, sizeof(path), "%s/../cgroup.procs", dir[0]);
	fd = open(path, O_WRONLY);
	if (fd < 0 || move(fd, self))
		die(path);
	close(fd);
}
/* @cm-end fork */

/* @cm-begin exec */
/*
 * exec: one move per child, from A to B while the child is in execve(),
 * between mm_alloc() and exec_mmap().  A second move, after exec_mmap(),
 * would re-point the new mm and hide a wrong birth; and the move must
 * be over before the child touches its pages, or it would rightly split
 * the charges.  So that the child is still in that window when the move
 * lands, it execs through LINKS symlinks, each 2000 "./" long: the path
 * walk in do_open_execat() then takes milliseconds under TCG.
 */
#define LINKS	16

static void exec_race(unsigned long n)
{
	char tmp[] = "/tmp/cm-race.XXXXXX", path[LINKS][64], body[4096];
	char walk[4001], arg[3][24];
	int up[2], down[2], i;
	pid_t pid;

	for (i = 0; i < 4000; i += 2)
		memcpy(walk + i, "./", 2);
	walk[4000] = '\0';
	if (!mkdtemp(tmp))
		die(tmp);
	for (i = 0; i < LINKS; i++) {	/* l0 -> /proc/self/exe, ln -> ln-1 */
		if (i)
			snprintf(body, sizeof(body), "%sl%d", walk, i - 1);
		else
			snprintf(body, sizeof(body), "/proc/self/%sexe", walk);
		snprintf(path[i], sizeof(path[i]), "%s/l%d", tmp, i);
		if (symlink(body, path[i]))
			die(path[i]);
	}
	while ((unsigned long)nkids < n) {
		if (pipe(up) || pipe(down))
			die("pipe");
		pid = fork();
		if (pid == 0) {
			close(up[0]);
			close(down[1]);
			get(down[0]);
			snprintf(arg[0], sizeof(arg[0]), "%lu", pages);
			snprintf(arg[1], sizeof(arg[1]), "%d", up[1]);
			snprintf(arg[2], sizeof(arg[2]), "%d", down[0]);
			put(up[1], 'x');
			execl(path[LINKS - 1], PROG, "--touch", arg[0], arg[1],
			      arg[2], (char *)NULL);
			die("exec");
		}
		if (pid < 0)
			die("fork");
		kids[nkids++] = pid;
		close(up[1]);
		close(down[0]);
		if (move(procs[0], pid))
			die("the move to DIR_A");
		start_mover(pid, up[0]);
		put(down[1], 'g');
		pthread_join(mover_thread, NULL);	/* it read 'x' and moved */
		get(up[0]);			/* 'e': the new image runs */
		put(down[1], 't');
		get(up[0]);			/* 'd': it touched its pages */
		close(up[0]);
		close(down[1]);
	}
	for (i = 0; i < LINKS; i++)
		unlink(path[i]);
	rmdir(tmp);
}
/* @cm-end exec */

/* The exec'd child: "cm-race --touch PAGES UP_FD DOWN_FD". */
static void touch_main(int argc, char **argv)
{
	unsigned long up, down;

	if (argc != 5 || cm_parse_ulong(argv[2], 1, MAX_PAGES, &pages) ||
	    cm_parse_ulong(argv[3], 0, 1023, &up) ||
	    cm_parse_ulong(argv[4], 0, 1023, &down))
		cm_usage_error(PROG, USAGE, "bad --touch arguments (internal)");
	put(up, 'e');
	get(down);
	touch(up);
}

/* Read DIR_A's or DIR_B's @file; is @pid in it, or (pid 0) its number. */
static long scan(int k, const char *file, pid_t pid)
{
	char path[4096];
	long v = -1, found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir[k], file);
	f = fopen(path, "r");
	if (!f)
		die(path);
	while (fscanf(f, "%ld", &v) == 1 && pid)
		found |= v == pid;
	fclose(f);
	return pid ? found : v;
}

/*
 * As lib.sh's drain_cpus: a page just faulted in waits in a per-CPU
 * batch that holds a reference, so a dead child's last pages may stay
 * charged.  A process that exits on a CPU drains that CPU's batches.
 */
static void settle(long use[2])
{
	long prev[2] = { -1, -1 };
	int tries, i;
	pid_t pid;

	for (tries = 0; tries < 10; tries++) {
		for (i = 0; i < CPU_COUNT(&cpus); i++) {
			pid = fork();
			if (pid == 0) {
				pin(i);
				_exit(0);
			}
			if (pid > 0)	/* not wait(): kids may be zombies */
				waitpid(pid, NULL, 0);
		}
		use[0] = scan(0, "memory.usage", 0);
		use[1] = scan(1, "memory.usage", 0);
		if (use[0] == prev[0] && use[1] == prev[1])
			break;
		prev[0] = use[0];
		prev[1] = use[1];
	}
}

/* @cm-begin judge */
/* Kill child @i and see where its pages come back. */
static const char *judge(int i)
{
	long before[2], after[2], drop_a, drop_b;
	const char *v = "unclear";
	pid_t pid = kids[i];
	int a, b, paid_a, paid_b;

	if (waitpid(pid, NULL, WNOHANG) == pid) {
		printf("%s: pid=%d in=- drop_a=0 drop_b=0 verdict=gone\n",
		       PROG, (int)pid);
		return "gone";
	}
	a = scan(0, "cgroup.procs", pid);
	b = scan(1, "cgroup.procs", pid);
	before[0] = scan(0, "memory.usage", 0);
	before[1] = scan(1, "memory.usage", 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	settle(after);
	drop_a = before[0] - after[0];
	drop_b = before[1] - after[1];
	paid_a = drop_a >= (long)pages - SLACK;
	paid_b = drop_b >= (long)pages - SLACK;
	if (a != b && paid_a != paid_b)	/* in one, paid by one */
		v = paid_a == a ? "ok" : "wrong";
	printf("%s: pid=%d in=%s drop_a=%ld drop_b=%ld verdict=%s\n", PROG,
	       (int)pid, a == b ? "-" : a ? "a" : "b", drop_a, drop_b, v);
	return v;
}
/* @cm-end judge */

int main(int argc, char **argv)
{
	unsigned long n, wrong = 0, unclear = 0;
	const char *pos[5] = { NULL }, *v;
	int npos = 0, hold = 0, k;
	char path[4096];

	self = getpid();
	if (argc > 1 && !strcmp(argv[1], "--touch"))
		touch_main(argc, argv);
	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--hold") && !hold)
			hold = 1;
		else if (!strncmp(argv[k], "--", 2))
			cm_usage_error(PROG, USAGE, "unknown or repeated option '%s'",
				       argv[k]);
		else if (npos < 5)
			pos[npos++] = argv[k];
		else
			cm_usage_error(PROG, USAGE, "unexpected argument '%s'",
				       argv[k]);
	}
	if (npos < 5)
		cm_usage_error(PROG, USAGE, "missing %s", (const char *[]){
			"fork|exec", "N", "PAGES", "DIR_A", "DIR_B" }[npos]);
	if (strcmp(pos[0], "fork") && strcmp(pos[0], "exec"))
		cm_usage_error(PROG, USAGE, "mode must be fork or exec, got '%s'",
			       pos[0]);
	if (cm_parse_ulong(pos[1], 1, MAX_N, &n))
		cm_usage_error(PROG, USAGE,
			       "N must be a decimal number from 1 to %d, got '%s'",
			       MAX_N, pos[1]);
	/* Below 2 * SLACK, both containers could seem to have paid. */
	if (cm_parse_ulong(pos[2], 2 * SLACK, MAX_PAGES, &pages))
		cm_usage_error(PROG, USAGE,
			       "PAGES must be a decimal number from %d to %d, got '%s'",
			       2 * SLACK, MAX_PAGES, pos[2]);
	dir[0] = pos[3];
	dir[1] = pos[4];
	if (!*dir[0] || !*dir[1] || !strcmp(dir[0], dir[1]))
		cm_usage_error(PROG, USAGE, "DIR_A and DIR_B must be two directories");

	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir[k]);
		procs[k] = open(path, O_WRONLY | O_CLOEXEC);
		if (procs[k] < 0)
			die(path);
	}
	sched_getaffinity(0, sizeof(cpus), &cpus);
	pin(0);
	fflush(stdout);			/* children must not inherit output */
	if (!strcmp(pos[0], "fork"))
		fork_race(n);
	else
		exec_race(n);
	printf("%s: moves=%lu\n", PROG, (unsigned long)moves);
	if (hold)
		cm_hold(PROG);

	for (k = 0; k < nkids; k++) {
		v = judge(k);
		fflush(stdout);
		wrong += !strcmp(v, "wrong");
		unclear += strcmp(v, "wrong") && strcmp(v, "ok");
	}
	printf("%s: mode=%s children=%lu wrong=%lu unclear=%lu\n", PROG,
	       pos[0], n, wrong, unclear);
	fflush(stdout);
	return wrong || unclear ? 1 : 0;
}
