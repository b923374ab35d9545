/*
 * chaos.c: the C twin of test/chaos (a hostile tcs client, issue 19 part 3):
 * the same modes, flags and log lines as the Go program, whose package
 * doc describes them. test/chaos_test.go builds it with
 *
 *	cc -O2 -Wall -std=gnu11 -pthread -I coordinator/native -o chaos test/chaos/c/chaos.c
 *
 *	chaos spin
 *	chaos flood [--rate N] [--channel C] [--report N]
 *	chaos threads [--n N]
 *	chaos fork [--then stay|exit] [--life SECONDS] [--spin SECONDS] [--after K]
 *	chaos exit --way zero|code|segv|kill|exec --state startup|running|blocked|delivery [--after K] [--channel C]
 *	chaos garbage --what pipe|partial|shm [--after K] [--seed N]
 *	chaos deaf --what requests|idle [--after K]
 *	chaos escape
 *
 * Log lines go to stderr (the client's log), one write each:
 * "chaos: <event> key=value ...".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcs_native.h"

/* logf writes one log line in one write. */
static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	char b[1024];
	int n = snprintf(b, sizeof b, "chaos: ");
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(b + n, sizeof b - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof b - 2)
		n = (int)sizeof b - 2;
	b[n++] = '\n';
	if (write(2, b, (size_t)n) < 0)
		_exit(1);
}

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

static int64_t thread_cpu(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile double sink;

/* burn computes until this thread has used ns of CPU. */
static void burn(int64_t ns)
{
	int64_t end = thread_cpu() + ns;
	while (thread_cpu() < end)
		for (int i = 0; i < 1000; i++)
			sink = sink * 1.0000001 + 1;
}

static void spin(void)
{
	for (;;)
		for (int i = 0; i < 1 << 20; i++)
			sink = sink * 1.0000001 + 1;
}

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "ok";
	case EPERM:
		return "EPERM";
	case EINVAL:
		return "EINVAL";
	case EAGAIN:
		return "EAGAIN";
	case EPIPE:
		return "EPIPE";
	case ESRCH:
		return "ESRCH";
	case EPROTO:
		return "EPROTO";
	case ESHUTDOWN:
		return "ESHUTDOWN";
	}
	return strerror(e);
}

/* status_field copies field name of /proc/self/status into v ("" if absent). */
static void status_field(const char *name, char *v, size_t cap)
{
	char line[512];
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "r");

	v[0] = '\0';
	if (f == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, name, n) == 0 && line[n] == ':') {
			char *s = line + n + 1;
			while (*s == ' ' || *s == '\t')
				s++;
			s[strcspn(s, "\n")] = '\0';
			snprintf(v, cap, "%s", s);
			break;
		}
	}
	fclose(f);
}

/* policy formats the policy and priority of thread tid (0: this one). */
static void policy(pid_t tid, char *v, size_t cap)
{
	struct sched_param sp;
	int pol = sched_getscheduler(tid);
	if (pol < 0 || sched_getparam(tid, &sp) < 0) {
		snprintf(v, cap, "%s", errname(errno));
		return;
	}
	snprintf(v, cap, "%d/%d", pol, sp.sched_priority);
}

/* Flags: --name value pairs, looked up by flag(). */
static int g_argc;
static char **g_argv;

static const char *flag(const char *name, const char *def)
{
	for (int i = 0; i + 1 < g_argc; i++) {
		const char *a = g_argv[i];
		while (*a == '-')
			a++;
		if (g_argv[i][0] == '-' && strcmp(a, name) == 0)
			return g_argv[i + 1];
	}
	return def;
}

static long flag_long(const char *name, long def)
{
	const char *v = flag(name, NULL);
	char *end;
	long n;
	if (v == NULL)
		return def;
	n = strtol(v, &end, 10);
	if (*end != '\0') {
		fprintf(stderr, "chaos: --%s %s: not an integer\n", name, v);
		exit(2);
	}
	return n;
}

static double flag_double(const char *name, double def)
{
	const char *v = flag(name, NULL);
	char *end;
	double x;
	if (v == NULL)
		return def;
	x = strtod(v, &end);
	if (*end != '\0') {
		fprintf(stderr, "chaos: --%s %s: not a number\n", name, v);
		exit(2);
	}
	return x;
}

/* flag_seconds reads a duration in seconds: "30", "30s" or "500ms". */
static double flag_seconds(const char *name, double def)
{
	const char *v = flag(name, NULL);
	char *end;
	double x;
	if (v == NULL)
		return def;
	x = strtod(v, &end);
	if (strcmp(end, "ms") == 0)
		x /= 1000;
	else if (*end != '\0' && strcmp(end, "s") != 0) {
		fprintf(stderr, "chaos: --%s %s: not a duration (30, 30s, 500ms)\n", name, v);
		exit(2);
	}
	return x;
}

/* The native connection and the loop of a controller that does nothing. */
static struct tcs_client g_c;
static int64_t g_period, g_k;

static int finish(void)
{
	if (errno == ESHUTDOWN) {
		logf_("shutdown");
		return 0;
	}
	fprintf(stderr, "chaos: %s (status %#x)\n", strerror(errno), g_c.status);
	return 1;
}

static void connect_(void)
{
	if (tcs_connect(&g_c) < 0) {
		fprintf(stderr, "chaos: connect: %s\n", strerror(errno));
		exit(1);
	}
	logf_("hello pid=%d period_ns=%lld", (int)getpid(), (long long)g_c.period);
	g_period = g_c.period > 0 ? g_c.period : 10000000;
	g_k = g_c.now / g_period;
}

/* g_waiting is 1 while the protocol thread waits for its next period:
 * from just before its tcs_write_idle to its return (for the blocked
 * state's second thread, which can only run while this one does not). */
static int g_waiting;

/* activate ends the activation: a zero command, idle to the next period. */
static int activate(void)
{
	double zero[1] = {0};
	int r;
	g_k++;
	__atomic_store_n(&g_waiting, 1, __ATOMIC_SEQ_CST);
	r = tcs_write_idle(&g_c, 0, zero, 1, g_k * g_period, NULL);
	__atomic_store_n(&g_waiting, 0, __ATOMIC_SEQ_CST);
	return r;
}

/* run runs n activations (n < 0: to the end); -1 with errno on failure. */
static int run(long n)
{
	for (long i = 0; n < 0 || i < n; i++)
		if (activate() < 0)
			return -1;
	return 0;
}

static int forever(void)
{
	run(-1);
	return finish();
}

/* write_all writes n bytes of b to fd. */
static int write_all(int fd, const void *b, size_t n)
{
	const char *p = b;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int request(uint32_t op, uint32_t ch, int64_t arg)
{
	unsigned char b[TCS_RECORD_SIZE];
	tcs__put32(b, op);
	tcs__put32(b + 4, ch);
	tcs__put64(b + 8, (uint64_t)arg);
	return write_all(g_c.req_fd, b, sizeof b);
}

static void segv(void)
{
	volatile char *page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		fprintf(stderr, "chaos: mmap: %s\n", strerror(errno));
		exit(1);
	}
	page[0] = 1;
	fprintf(stderr, "chaos: survived a write to a PROT_NONE page\n");
	exit(1);
}

static void exec_sleep(void)
{
	execlp("sleep", "sleep", "30", (char *)NULL);
	fprintf(stderr, "chaos: exec sleep: %s\n", strerror(errno));
	exit(1);
}

/* ---- spin ---- */

static int mode_spin(void)
{
	connect_();
	logf_("spin pid=%d", (int)getpid());
	spin();
	return 0;
}

/* ---- flood ---- */

static int mode_flood(void)
{
	double rate = flag_double("rate", 100000);
	long ch = flag_long("channel", 1), every = flag_long("report", 10000);
	int64_t interval, next;
	double msg[3];

	if (rate <= 0 || ch < 1 || every < 1) {
		fprintf(stderr, "chaos flood: --rate must be > 0, --channel >= 1, --report >= 1\n");
		return 2;
	}
	connect_();
	interval = (int64_t)(1e9 / rate);
	logf_("flood rate=%g channel=%ld interval_ns=%lld", rate, ch, (long long)interval);
	next = thread_cpu();
	for (long long seq = 1;; seq++) {
		while (thread_cpu() < next)
			;
		next += interval;
		msg[0] = M_PI;
		msg[1] = (double)seq;
		msg[2] = (double)thread_cpu() / 1e9;
		if (tcs_write(&g_c, (uint32_t)ch, msg, 3) < 0) {
			logf_("flooded sent=%lld", seq - 1);
			return finish();
		}
		if (seq % every == 0)
			logf_("flooded sent=%lld cpu_s=%g", seq, msg[2]);
	}
}

/* ---- threads ---- */

static int g_block[2];

static void *blocked_thread(void *arg)
{
	char b;
	(void)arg;
	while (read(g_block[0], &b, 1) < 0 && errno == EINTR)
		;
	for (;;)
		pause();
	return NULL;
}

static int mode_threads(void)
{
	long n = flag_long("n", 1000);
	pthread_attr_t attr;
	char threads[32];

	connect_();
	if (pipe2(g_block, O_CLOEXEC) < 0) {
		fprintf(stderr, "chaos: pipe: %s\n", strerror(errno));
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++) {
		pthread_t t;
		int e = pthread_create(&t, &attr, blocked_thread, NULL);
		if (e != 0) {
			logf_("threads-error started=%ld err=%s", i, errname(e));
			return 1;
		}
	}
	usleep(50000);
	status_field("Threads", threads, sizeof threads);
	logf_("threads started=%ld threads=%s", n, threads);
	return forever();
}

/* ---- fork ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* child_log is a child of chaos fork: it logs itself, computes for spin s
 * of wall time and sleeps life s. */
static void child_log(const char *kind, double life, double spin_for)
{
	char pol[32], cpus[64];
	pid_t pid = getpid();

	policy(0, pol, sizeof pol);
	status_field("Cpus_allowed_list", cpus, sizeof cpus);
	logf_("child kind=%s pid=%d ppid=%d pgid=%d sid=%d policy=%s cpus=%s", kind, (int)pid, (int)getppid(),
	      (int)getpgid(0), (int)getsid(0), pol, cpus);
	for (double end = now_s() + spin_for; now_s() < end;)
		for (int i = 0; i < 1000; i++)
			sink = sink * 1.0000001 + 1;
	struct timespec ts = {(time_t)life, (long)((life - (double)(time_t)life) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	_exit(0);
}

static int mode_fork(void)
{
	const char *then = flag("then", "stay");
	double life = flag_seconds("life", 30), spin_for = flag_seconds("spin", 0);
	long after = flag_long("after", 3);
	pid_t pid;
	char pol[32];

	if (strcmp(then, "stay") != 0 && strcmp(then, "exit") != 0) {
		fprintf(stderr, "chaos fork: --then must be stay or exit\n");
		return 2;
	}
	connect_();
	if (run(after) < 0)
		return finish();
	/* A child that stays in this process group. */
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "chaos: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		child_log("group", life, spin_for);
	policy(pid, pol, sizeof pol);
	logf_("forked kind=group pid=%d pgid=%d policy=%s", (int)pid, (int)getpgid(pid), pol);
	/* A double fork: the child makes a session (and process group) of
	 * its own, forks the grandchild and exits, so the grandchild is
	 * nobody's child in the run. Not waited for: once it runs is up to
	 * tcs (the zombie goes with this process). */
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "chaos: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		setsid();
		if (fork() == 0)
			child_log("session", life, spin_for);
		_exit(0);
	}
	policy(pid, pol, sizeof pol);
	logf_("forked kind=leader pid=%d policy=%s", (int)pid, pol);
	if (strcmp(then, "exit") == 0) {
		logf_("exit code=0");
		return 0;
	}
	return forever();
}

/* ---- exit ---- */

static const char *g_way, *g_state;

static void act(void (*hold)(void))
{
	logf_("act way=%s state=%s pid=%d tid=%d", g_way, g_state, (int)getpid(), (int)gettid_());
	if (strcmp(g_way, "zero") == 0)
		exit(0);
	if (strcmp(g_way, "code") == 0)
		exit(7);
	if (strcmp(g_way, "segv") == 0)
		segv();
	if (strcmp(g_way, "exec") == 0)
		exec_sleep();
	logf_("hold state=%s pid=%d tid=%d", g_state, (int)getpid(), (int)gettid_());
	hold();
}

static void hold_forever(void)
{
	for (;;)
		pause();
}

/* blocked_actor acts while the protocol thread waits for its next period;
 * it looks every 100 us of wall time (a watchdog or logging thread of a
 * real controller). */
static void *blocked_actor(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&g_waiting, __ATOMIC_SEQ_CST)) {
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	act(hold_forever);
	return NULL;
}

static int one_of(const char *s, const char *const *set)
{
	for (; s != NULL && *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

static int mode_exit(void)
{
	static const char *const ways[] = {"zero", "code", "segv", "kill", "exec", NULL};
	static const char *const states[] = {"startup", "running", "blocked", "delivery", NULL};
	long after = flag_long("after", 3), ch = flag_long("channel", 1);

	g_way = flag("way", NULL);
	g_state = flag("state", NULL);
	if (!one_of(g_way, ways) || !one_of(g_state, states) || after < 0) {
		fprintf(stderr, "chaos exit: --way must be zero, code, segv, kill or exec; --state startup, running, "
				"blocked or delivery; --after >= 0\n");
		return 2;
	}
	if (strcmp(g_state, "startup") == 0) {
		act(spin); /* computing its start-up, before its hello */
		return 0;
	}
	connect_();
	if (strcmp(g_state, "running") == 0) {
		if (run(after) < 0)
			return finish();
		burn(200000); /* mid-computation */
		act(spin);
		return 0;
	}
	if (strcmp(g_state, "blocked") == 0) {
		pthread_t t;
		if (run(after) < 0)
			return finish();
		if (strcmp(g_way, "kill") == 0) {
			/* The test's SIGKILL comes once this thread has said it
			 * idles and waits for its next period (tcs has lowered
			 * it, which the test sees in /proc). */
			logf_("act way=%s state=%s pid=%d tid=%d", g_way, g_state, (int)getpid(), (int)gettid_());
			logf_("hold state=%s pid=%d tid=%d", g_state, (int)getpid(), (int)gettid_());
			return forever();
		}
		if (pthread_create(&t, NULL, blocked_actor, NULL) != 0) {
			fprintf(stderr, "chaos: pthread_create failed\n");
			return 1;
		}
		return forever();
	}
	/* delivery */
	for (long got = 0;;) {
		double msg[TCS_MAX_VALUES];
		int n;
		if (activate() < 0)
			return finish();
		n = tcs_in(&g_c, msg, TCS_MAX_VALUES, NULL);
		if (n == 0)
			n = tcs_recv(&g_c, (uint32_t)ch, msg, TCS_MAX_VALUES, NULL);
		if (n < 0)
			return finish();
		if (n == 0)
			continue;
		if (++got > after) {
			logf_("delivery values=%d first=%g", n, msg[0]);
			burn(100000); /* handling it */
			act(spin);
		}
	}
}

/* ---- escape ---- */

static int mode_escape(void)
{
	struct sched_param sp = {.sched_priority = 99};
	char before[32], after[32], cpus_before[256], cpus_after[256];
	cpu_set_t all;
	int fifo, aff;

	connect_();
	if (run(1) < 0)
		return finish();
	policy(0, before, sizeof before);
	status_field("Cpus_allowed_list", cpus_before, sizeof cpus_before);
	fifo = sched_setscheduler(0, SCHED_FIFO, &sp) < 0 ? errno : 0;
	/* Every CPU the set can name: the kernel keeps those that exist. */
	CPU_ZERO(&all);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		CPU_SET(cpu, &all);
	aff = sched_setaffinity(0, sizeof all, &all) < 0 ? errno : 0;
	policy(0, after, sizeof after);
	status_field("Cpus_allowed_list", cpus_after, sizeof cpus_after);
	logf_("escape pid=%d tid=%d setscheduler_fifo_99=%s setaffinity_all=%s policy_before=%s policy_after=%s "
	      "cpus_before=%s cpus_after=%s",
	      (int)getpid(), (int)gettid_(), errname(fifo), errname(aff), before, after, cpus_before, cpus_after);
	return forever();
}

/* ---- deaf ---- */

static int mode_deaf(void)
{
	const char *what = flag("what", "requests");
	long after = flag_long("after", 3);
	int requests = strcmp(what, "requests") == 0;

	if (!requests && strcmp(what, "idle") != 0) {
		fprintf(stderr, "chaos deaf: --what must be requests or idle\n");
		return 2;
	}
	connect_();
	if (run(after) < 0)
		return finish();
	logf_("deaf what=%s pid=%d", what, (int)getpid());
	for (long long n = 1;; n++) {
		int r;
		if (requests) {
			r = request(TCS_OP_RECV, 1, 0);
		} else {
			burn(200000);
			r = request(TCS_OP_WRITE_IDLE, 0, (g_k + n) * g_period);
		}
		if (r < 0) {
			logf_("deaf-error sent=%lld err=%s", n - 1, errname(errno));
			return 1;
		}
		if (n % 1000 == 0)
			logf_("deaf-sent sent=%lld", n);
	}
}

/* ---- garbage ---- */

static uint64_t g_rng;

static uint32_t rnd(void)
{
	/* xorshift64* */
	g_rng ^= g_rng >> 12;
	g_rng ^= g_rng << 25;
	g_rng ^= g_rng >> 27;
	return (uint32_t)((g_rng * 2685821657736338717ULL) >> 32);
}

static int mode_garbage(void)
{
	const char *what = flag("what", "pipe");
	long after = flag_long("after", 3);
	long seed = flag_long("seed", 1);

	if (strcmp(what, "pipe") != 0 && strcmp(what, "partial") != 0 && strcmp(what, "shm") != 0) {
		fprintf(stderr, "chaos garbage: --what must be pipe, partial or shm\n");
		return 2;
	}
	g_rng = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 19;
	connect_();
	if (run(after) < 0)
		return finish();
	if (strcmp(what, "pipe") == 0) {
		/* Records of every op with bad arguments, then random bytes (an
		 * odd count: the last record is cut). */
		static const struct {
			uint32_t op, ch;
			int64_t arg;
		} bad[] = {
			{0, 0, 0},
			{99, 1, -1},
			{TCS_OP_HELLO, 0, 12345},
			{TCS_OP_WRITE, 0, (int64_t)1 << 40},
			{TCS_OP_WRITE, 7, -5},
			{TCS_OP_IDLE, 0, -1},
			{TCS_OP_IDLE, 0, INT64_MIN},
			{TCS_OP_RECV, UINT32_MAX, 0},
			{TCS_OP_WRITE_IDLE, UINT32_MAX, -3},
			{UINT32_MAX, UINT32_MAX, INT64_MAX},
		};
		unsigned char b[sizeof bad / sizeof bad[0] * TCS_RECORD_SIZE + 4093];
		size_t n = 0;
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++, n += TCS_RECORD_SIZE) {
			tcs__put32(b + n, bad[i].op);
			tcs__put32(b + n + 4, bad[i].ch);
			tcs__put64(b + n + 8, (uint64_t)bad[i].arg);
		}
		while (n < sizeof b)
			b[n++] = (unsigned char)rnd();
		logf_("garbage what=pipe bytes=%zu seed=%ld", n, seed);
		if (write_all(g_c.req_fd, b, n) < 0) {
			logf_("garbage-error err=%s", errname(errno));
			return 1;
		}
		return forever();
	}
	if (strcmp(what, "partial") == 0) {
		static const unsigned char part[7] = {6};
		unsigned char b[TCS_RECORD_SIZE];
		ssize_t n;
		logf_("garbage what=partial bytes=7");
		if (write_all(g_c.req_fd, part, sizeof part) < 0) {
			logf_("garbage-error err=%s", errname(errno));
			return 1;
		}
		/* The coordinator never gets a whole record: wait for a
		 * reply to it forever. */
		n = read(g_c.rep_fd, b, sizeof b);
		logf_("garbage-reply n=%zd err=%s", n, errname(n < 0 ? errno : 0));
		return 1;
	}
	logf_("garbage what=shm bytes=%zu seed=%ld", sizeof *g_c.shm, seed);
	for (long refused = 0;;) {
		unsigned char *m = (unsigned char *)g_c.shm;
		int64_t now;
		for (size_t i = 0; i < sizeof *g_c.shm; i++)
			m[i] = (unsigned char)rnd();
		/* A raw request: tcs_write_idle would set out_len itself. A
		 * refusal (out_len is garbage) is logged once; the client
		 * carries on. */
		g_k++;
		if (tcs__call(&g_c, TCS_OP_WRITE_IDLE, 0, g_k * g_period, &now) < 0) {
			if (errno != EPROTO)
				return finish();
			if (refused++ == 0)
				logf_("garbage-refused status=%#x", g_c.status);
		}
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(void);
	} modes[] = {
		{"spin", mode_spin},       {"flood", mode_flood}, {"threads", mode_threads},
		{"fork", mode_fork},       {"exit", mode_exit},   {"garbage", mode_garbage},
		{"deaf", mode_deaf},       {"escape", mode_escape},
	};

	if (argc < 2) {
		fprintf(stderr, "usage: chaos MODE [flags]\nmodes: spin, flood, threads, fork, exit, garbage, deaf, escape\n");
		return 2;
	}
	g_argc = argc - 2;
	g_argv = argv + 2;
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			return modes[i].run();
	fprintf(stderr, "chaos: unknown mode %s\n", argv[1]);
	return 2;
}
