// The dispatch cycle of coordinator/driver's Mechanism.Run, in C, for
// `tcs bench dispatch`: same priorities, pinning, spinning block detector
// (a thread of this process, as tcs's is), eventfd and epoll; the same
// system calls per cycle.
//
// usage: dispatch CPU OTHERCPU BASE NCLIENTS DURATION_MS
// prints: clients=N n=SAMPLES med=NS p99=NS max=NS
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXC 64
#define MAXS (1 << 21)

struct shm {
	_Atomic uint64_t gen;
	char pad1[56];
	_Atomic uint64_t ack;
};

static int64_t mono(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t cpuclock(clockid_t clk) {
	struct timespec ts;
	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void setprio(pid_t tid, int prio) {
	struct sched_param sp = {.sched_priority = prio};
	if (sched_setparam(tid, &sp) != 0) {
		perror("sched_setparam");
		exit(1);
	}
}

// The block detector's loop: spin on the generation, report each new one
// through the eventfd; end when told to.
static struct shm *dshm;
static int defd;
static atomic_int dquit;

static void *detect(void *arg) {
	(void)arg;
	uint64_t last = 0, one = 1; // gen was 0 when it was created
	while (!atomic_load(&dquit)) {
		uint64_t g = atomic_load_explicit(&dshm->gen, memory_order_acquire);
		if (g != last) {
			last = g;
			atomic_store(&dshm->ack, g);
			if (write(defd, &one, 8) < 0) exit(1);
		}
	}
	return NULL;
}

static int cmp(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t samples[MAXS];

int main(int argc, char **argv) {
	if (argc != 6) {
		fprintf(stderr, "usage: dispatch CPU OTHERCPU BASE NCLIENTS DURATION_MS\n");
		return 2;
	}
	int cpu = atoi(argv[1]), other = atoi(argv[2]), base = atoi(argv[3]), n = atoi(argv[4]);
	int64_t dur = atoll(argv[5]) * 1000000LL;
	if (n < 1 || n > MAXC) return 2;
	alarm(30 + dur / 1000000000LL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);

	struct shm *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (shm == MAP_FAILED || efd < 0 || tfd < 0 || ep < 0) {
		perror("setup");
		return 1;
	}
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.u64 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	// The detector's eventfd edge-triggered and never read, as tcs's: the
	// shared ack says which dispatch a report is for.
	ev.events = EPOLLIN | EPOLLET;
	ev.data.u64 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev);

	// This thread: simulation CPU, ℓ0. Children inherit both; the parent
	// lowers each right after fork, before it can run.
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	struct sched_param sp = {.sched_priority = base};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0 || sched_setaffinity(0, sizeof set, &set) != 0) {
		perror("sched_setscheduler/affinity");
		return 1;
	}
	(void)other;

	pid_t parent = getpid();
	// The detector thread inherits this thread's CPU and priority; it
	// runs only once lowered to base - 2 and this thread waits.
	dshm = shm;
	defd = efd;
	pthread_t det;
	if (pthread_create(&det, NULL, detect, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	struct sched_param dsp = {.sched_priority = base - 2};
	if (pthread_setschedparam(det, SCHED_FIFO, &dsp) != 0) {
		perror("pthread_setschedparam");
		return 1;
	}

	pid_t pids[MAXC];
	int taskfd[MAXC];
	clockid_t clk[MAXC];
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			// Runs only once dispatched: if the parent died first, leave.
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent) _exit(0);
			for (;;) pause();
		}
		setprio(pids[i], base - 3);
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/task", pids[i]);
		taskfd[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		clk[i] = (clockid_t)((~pids[i]) << 3 | 2);
	}

	struct epoll_event evs[32];
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	struct stat st;
	int cur = -1;
	int64_t count = 0, start = mono(), warm = 4 * n;
	for (int64_t i = 0;; i++) {
		int p = i % n;
		int64_t t0 = mono();
		if (p != cur) {
			if (cur >= 0) {
				setprio(pids[cur], base - 3);
				fstat(taskfd[cur], &st);
			}
			setprio(pids[p], base - 1);
			fstat(taskfd[p], &st);
			cur = p;
		}
		int64_t c0 = cpuclock(clk[p]);
		int64_t exp = mono() + 1000000000LL;
		its.it_value.tv_sec = exp / 1000000000LL;
		its.it_value.tv_nsec = exp % 1000000000LL;
		timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
		uint64_t gen = atomic_fetch_add(&shm->gen, 1) + 1;
		int blocked = 0;
		while (!blocked) {
			int k = epoll_wait(ep, evs, 32, -1);
			(void)mono();
			for (int j = 0; j < k; j++) {
				if (evs[j].data.u64 == 1) {
					uint64_t v;
					if (read(tfd, &v, 8) < 0) {}
					fprintf(stderr, "timer fired: a client did not block\n");
					return 1;
				}
				if (evs[j].data.u64 == 2) {
					if (atomic_load(&shm->ack) == gen) blocked = 1;
				}
			}
		}
		int64_t c1 = cpuclock(clk[p]);
		(void)c0, (void)c1;
		int64_t t1 = mono();
		if (i >= warm && count < MAXS) samples[count++] = t1 - t0;
		if (t1 - start > dur || count >= MAXS) break;
	}
	for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
	atomic_store(&dquit, 1);
	pthread_join(det, NULL); // it runs, and ends, while this thread waits
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
	for (int i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
	qsort(samples, count, sizeof samples[0], cmp);
	if (count == 0) return 1;
	printf("clients=%d n=%lld med=%lld p99=%lld max=%lld\n", n, (long long)count,
	       (long long)samples[count / 2], (long long)samples[count * 99 / 100], (long long)samples[count - 1]);
	return 0;
}
