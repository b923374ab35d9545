// Micro-benchmark: the block detector as a separate process or as a
// thread of the coordinator's process. Everything on CPU 1, SCHED_FIFO,
// bounded by alarm(). coord (80) wakes node (79) through a pipe and waits
// on an eventfd; node computes ~work µs and blocks on its pipe; the
// detector (78), spinning on a generation word, writes the eventfd.
#define _GNU_SOURCE
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <signal.h>

static volatile uint64_t *gen, *ack;
static int efd;

static void fifo(int prio) {
	struct sched_param sp = {.sched_priority = prio};
	cpu_set_t s; CPU_ZERO(&s); CPU_SET(1, &s);
	sched_setaffinity(0, sizeof s, &s);
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) { perror("fifo"); exit(1); }
}
static int64_t ns(clockid_t c) { struct timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }

static void *detect(void *arg) {
	(void)arg;
	fifo(78);
	gen[19] = 1;
	uint64_t last = *gen, one = 1;
	for (;;) {
		uint64_t g = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
		if (g == UINT64_MAX) return 0;
		if (g != last) { last = g; *ack = g; if (write(efd, &one, 8) < 0) {} }
	}
}

int main(int argc, char **argv) {
	int thread = argc > 1 && !strcmp(argv[1], "thread");
	long touch = argc > 2 ? atol(argv[2]) : 0; // MiB the node touches
	int n = 20000, work = 20;
	alarm(20);
	uint64_t *shm = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gen = shm; ack = shm + 8; *gen = 0;
	efd = eventfd(0, 0);
	int p[2]; if (pipe(p)) return 1;
	pid_t node = fork();
	if (!node) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fifo(79); shm[18] = 1;
		char *mem = 0;
		if (touch) { mem = malloc(touch << 20); memset(mem, 1, touch << 20); }
		char b;
		volatile double x = 0;
		for (;;) {
			if (read(p[0], &b, 1) != 1) { fprintf(stderr, "node read end\n"); _exit(0); }
			int64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);
			while (ns(CLOCK_THREAD_CPUTIME_ID) - t0 < work * 1000) x += 1;
			if (mem) for (long i = 0; i < touch << 20; i += 1 << 16) mem[i]++;
			shm[16] = ns(CLOCK_PROCESS_CPUTIME_ID); shm[17]++;
		}
	}
	pid_t det = 0; pthread_t dt;
	if (thread) pthread_create(&dt, 0, detect, 0);
	else if (!(det = fork())) { prctl(PR_SET_PDEATHSIG, SIGKILL); long dm = getenv("DETMEM") ? atol(getenv("DETMEM")) : 0; if (dm) { char *m = malloc(dm << 20); memset(m, 1, dm << 20); } detect(0); _exit(0); }
	while (!shm[18] || !shm[19]) usleep(1000);
	fifo(80);
	usleep(100000);
	int64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID), p0 = ns(CLOCK_PROCESS_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC);
	uint64_t v;
	for (int i = 0; i < n; i++) {
		__atomic_store_n(gen, *gen + 1, __ATOMIC_RELEASE);
		if (write(p[1], "x", 1) != 1) return 1;
		if (read(efd, &v, 8) != 8) return 1;
	}
	int64_t c1 = ns(CLOCK_THREAD_CPUTIME_ID), p1 = ns(CLOCK_PROCESS_CPUTIME_ID), w1 = ns(CLOCK_MONOTONIC);
	__atomic_store_n(gen, UINT64_MAX, __ATOMIC_RELEASE);
	close(p[1]);
	struct sched_param sp = {0}; sched_setscheduler(0, SCHED_OTHER, &sp);
	if (thread) pthread_join(dt, 0);
	kill(node, SIGKILL); if (det) kill(det, SIGKILL);
	while (wait(0) > 0) {}
	printf("node cycles %lu cpu %.1f µs each; ", shm[17], shm[16]/1e3/shm[17]);
	printf("%s node %ldMiB: coord thread %.2f µs/cycle, wall %.2f µs/cycle (node works %d)%s\n",
	       thread ? "thread " : "process", touch, (c1 - c0) / 1e3 / n, (w1 - w0) / 1e3 / n, work,
	       thread ? "" : "");
	(void)p0; (void)p1;
	return 0;
}
