// Micro-benchmark (results/bench/dispatch-path-2026-11-28.md): how the
// coordinator learns that the dispatched client blocked. Everything on
// CPU 1, SCHED_FIFO, bounded by alarm(). The coordinator (80) wakes the
// client (79) through a pipe; the client computes ~work µs and blocks on
// its pipe again. Build: gcc -O2 -pthread; run: ./a.out epoll|self [work].
// Modes:
//   epoll: a detector thread (78) spinning on a generation word writes an
//          eventfd, which the coordinator waits for in epoll_wait (tcs's
//          way: the wait set also holds the sockets and the timer);
//   self:  no detector: the coordinator lowers itself to 78 (the client
//          preempts it inside that call), runs again only once the client
//          blocked, and raises itself back to 80.
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
#include <sys/epoll.h>
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
static void prio(int p) {
	struct sched_param sp = {.sched_priority = p};
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) { perror("prio"); exit(1); }
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
	int self = argc > 1 && !strcmp(argv[1], "self");
	int n = 20000, work = argc > 2 ? atoi(argv[2]) : 20;
	alarm(20);
	uint64_t *shm = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	gen = shm; ack = shm + 8; *gen = 0;
	efd = eventfd(0, EFD_NONBLOCK);
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 1};
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);
	int p[2]; if (pipe(p)) return 1;
	pid_t node = fork();
	if (!node) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fifo(79); shm[18] = 1;
		char b;
		volatile double x = 0;
		for (;;) {
			if (read(p[0], &b, 1) != 1) _exit(0);
			int64_t t0 = ns(CLOCK_THREAD_CPUTIME_ID);
			while (ns(CLOCK_THREAD_CPUTIME_ID) - t0 < work * 1000) x += 1;
			shm[16] = ns(CLOCK_PROCESS_CPUTIME_ID); shm[17]++;
		}
	}
	pthread_t dt;
	if (!self) pthread_create(&dt, 0, detect, 0);
	else shm[19] = 1;
	while (!shm[18] || !shm[19]) usleep(1000);
	fifo(80);
	usleep(100000);
	int64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID), w0 = ns(CLOCK_MONOTONIC), n0 = shm[16];
	uint64_t v;
	struct epoll_event evs[8];
	for (int i = 0; i < n; i++) {
		if (self) {
			if (write(p[1], "x", 1) != 1) return 1;
			prio(78); // the client runs now; back here once it blocked
			prio(80);
		} else {
			__atomic_store_n(gen, *gen + 1, __ATOMIC_RELEASE);
			if (write(p[1], "x", 1) != 1) return 1;
			for (;;) {
				int k = epoll_wait(ep, evs, 8, -1);
				if (k > 0) { if (read(efd, &v, 8) != 8) {} break; }
			}
		}
	}
	int64_t c1 = ns(CLOCK_THREAD_CPUTIME_ID), w1 = ns(CLOCK_MONOTONIC), n1 = shm[16];
	__atomic_store_n(gen, UINT64_MAX, __ATOMIC_RELEASE);
	close(p[1]);
	struct sched_param sp = {0}; sched_setscheduler(0, SCHED_OTHER, &sp);
	if (!self) pthread_join(dt, 0);
	kill(node, SIGKILL);
	while (wait(0) > 0) {}
	double clientus = (n1 - n0) / 1e3 / n, wall = (w1 - w0) / 1e3 / n;
	printf("%-5s work %d: coordinator thread %.2f µs/cycle, client %.2f, wall %.2f, overhead (wall - client) %.2f µs/cycle\n",
	       self ? "self" : "epoll", work, (c1 - c0) / 1e3 / n, clientus, wall, wall - clientus);
	return 0;
}
