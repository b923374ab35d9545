// The dispatch cycle of coordinator/driver's Mechanism.Run, in C, for
// `tcs bench dispatch`: same priorities, pinning, spinning block detector
// (a thread of this process, as tcs's is), eventfd and epoll; the same
// system calls per cycle.
//
// usage: dispatch CPU OTHERCPU BASE NCLIENTS DURATION_MS
// prints: clients=N n=SAMPLES med=NS p99=NS max=NS
//
// usage: dispatch CPU OTHERCPU BASE 1 DURATION_MS slice
// The slice of a client that computes (a planner), ended by the timer, as
// the coordinator gives it with a private clock: at each expiry read the
// client's CPU clock, send a 12-byte clock frame over loopback TCP to a
// reader thread of the client (woken by it, as a ROS node's receive thread
// is), requeue the client's main thread behind that reader (two priority
// changes), arm the timer for the next 1 ms.
// prints: slice n=SLICES cpu=NS send=NS swap=NS arm=NS: medians of the
// coordinator thread's CPU per slice and of the wall time of three parts.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include <sys/socket.h>
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

// The slice mode's client: a reader thread blocked on its socket, and a
// main thread that computes.
struct sliceshm {
	_Atomic int rtid;
};

static int rsock;
static struct sliceshm *sshm;

static void *reader(void *arg) {
	(void)arg;
	char buf[256];
	atomic_store(&sshm->rtid, (int)syscall(SYS_gettid));
	for (;;) {
		if (read(rsock, buf, sizeof buf) <= 0) _exit(0);
	}
	return NULL;
}

static int cmp(const void *a, const void *b);

#define MAXSL (1 << 16)
static int64_t scpu[MAXSL], ssend[MAXSL], sswap[MAXSL], sarm[MAXSL];

static int64_t median(int64_t *v, int64_t n) {
	qsort(v, n, sizeof v[0], cmp);
	return v[n / 2];
}

static int sliceMode(int base, int64_t dur) {
	const int64_t budget = 1000000; // 1 ms slices
	sshm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int cs = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t alen = sizeof a;
	int one = 1;
	if (sshm == MAP_FAILED || tfd < 0 || ep < 0 || ls < 0 || cs < 0 ||
	    bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) != 0 || connect(cs, (struct sockaddr *)&a, sizeof a) != 0 ||
	    setsockopt(cs, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
		perror("slice setup");
		return 1;
	}
	rsock = accept(ls, NULL, NULL);
	if (rsock < 0) {
		perror("accept");
		return 1;
	}
	struct epoll_event ev = {.events = EPOLLIN};
	ev.data.u64 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);

	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) _exit(0);
		pthread_t r;
		if (pthread_create(&r, NULL, reader, NULL) != 0) _exit(1);
		for (volatile uint64_t k = 0;; k++) {
		}
	}
	setprio(pid, base - 3);
	clockid_t clk = (clockid_t)((~pid) << 3 | 2);
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	struct epoll_event evs[8];
	// Raised, with its main thread requeued at each slice until its reader
	// has started.
	setprio(pid, base - 1);
	int rtid = 0;
	int64_t n = 0, prev = -1, arm = 0, start = 0;
	unsigned char frame[12] = {8, 0, 0, 0};
	for (int64_t i = 0;; i++) {
		int64_t t2 = mono();
		int64_t exp = t2 + budget;
		its.it_value.tv_sec = exp / 1000000000LL;
		its.it_value.tv_nsec = exp % 1000000000LL;
		timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
		arm = mono() - t2;
		if (epoll_wait(ep, evs, 8, -1) < 0) continue;
		// The thread's CPU from one wake to the next: a whole cycle, its
		// switches in and out included (one clock read per cycle).
		int64_t c = cpuclock(CLOCK_THREAD_CPUTIME_ID);
		uint64_t v;
		if (read(tfd, &v, 8) < 0) {}
		if (rtid == 0) {
			rtid = atomic_load(&sshm->rtid);
			setprio(pid, base - 3);
			setprio(pid, base - 1);
			if (i > 1000) {
				fprintf(stderr, "the slice client's reader never started\n");
				return 1;
			}
			continue;
		}
		if (start == 0 && i > 20) start = mono();
		int64_t pc = cpuclock(clk);
		memcpy(frame + 4, &pc, 8);
		int64_t t0 = mono();
		if (send(cs, frame, sizeof frame, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof frame) {
			perror("send");
			return 1;
		}
		int64_t t1 = mono();
		setprio(pid, base - 3);
		setprio(pid, base - 1);
		int64_t t4 = mono();
		if (start != 0) {
			if (prev >= 0 && n < MAXSL) {
				scpu[n] = c - prev;
				ssend[n] = t1 - t0;
				sswap[n] = t4 - t1;
				sarm[n] = arm;
				n++;
			}
			prev = c;
			if (t4 - start > dur || n >= MAXSL) break;
		}
	}
	kill(pid, SIGKILL);
	struct sched_param sp = {.sched_priority = 0};
	sched_setscheduler(0, SCHED_OTHER, &sp);
	waitpid(pid, NULL, 0);
	if (n == 0) return 1;
	printf("slice n=%lld cpu=%lld send=%lld swap=%lld arm=%lld\n", (long long)n, (long long)median(scpu, n),
	       (long long)median(ssend, n), (long long)median(sswap, n), (long long)median(sarm, n));
	return 0;
}

static int cmp(const void *a, const void *b) {
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int64_t samples[MAXS];

int main(int argc, char **argv) {
	int slice = argc == 7 && strcmp(argv[6], "slice") == 0;
	if (argc != 6 && !slice) {
		fprintf(stderr, "usage: dispatch CPU OTHERCPU BASE NCLIENTS DURATION_MS [slice]\n");
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
	if (slice) return sliceMode(base, dur);

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
