/*
 * planner.c: a best-effort native tcs client in C that never sleeps, the
 * twin of `tcs client planner`: it computes for --chunk seconds of its own
 * CPU time, writes a plan [target angle, its CPU time so far in s,
 * sequence number] on channel --channel, and repeats. Under a controller
 * of higher priority on the same robot it gets the CPU only while the
 * controller is idle, as on the robot. Build:
 *
 *	gcc -O2 -std=c11 -I coordinator/native -o planner controllers/c/planner.c
 *
 * Flags: --chunk S (default 1), --target RAD (default pi), --channel N
 * (default 1, at least 1). Exits 0 when the simulation ends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tcs_native.h"

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* burn_result keeps burn's work observable, so the compiler keeps it. */
volatile double burn_result;

/* burn computes until the thread's CPU time reaches until (ns) and
 * returns the CPU time then: chains of dependent floating-point
 * operations, the clock read between chains. */
static int64_t burn(int64_t until)
{
	double x = 1.0;
	int64_t now;

	while ((now = thread_cpu_ns()) < until) {
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1e-9;
	}
	burn_result = x;
	return now;
}

static int usage(void)
{
	fprintf(stderr, "usage: planner [--chunk S] [--target RAD] [--channel N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	double chunk = 1.0, target = M_PI, channel = 1, plan[3];
	struct {
		const char *name;
		double *v;
	} flags[] = {{"--chunk", &chunk}, {"--target", &target}, {"--channel", &channel}};
	struct tcs_client c;

	for (int i = 1; i < argc; i++) {
		size_t j, nflags = sizeof flags / sizeof flags[0];
		char *end;
		for (j = 0; j < nflags; j++)
			if (strcmp(argv[i], flags[j].name) == 0)
				break;
		if (j == nflags || i + 1 >= argc)
			return usage();
		*flags[j].v = strtod(argv[++i], &end);
		if (*end != '\0')
			return usage();
	}
	if (!(chunk > 0) || channel < 1 || channel != floor(channel)) {
		fprintf(stderr, "planner: --chunk must be > 0 and --channel a whole number >= 1\n");
		return 2;
	}

	if (tcs_connect(&c) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "planner: not running under tcs: TCS_NATIVE is not set\n");
		else
			fprintf(stderr, "planner: connect: %s\n", strerror(errno));
		return 1;
	}
	int64_t start = thread_cpu_ns(), step = (int64_t)(chunk * 1e9), next = start;
	for (int64_t seq = 1;; seq++) {
		next += step;
		int64_t used = burn(next) - start;
		plan[0] = target;
		plan[1] = (double)used / 1e9;
		plan[2] = (double)seq;
		if (tcs_write(&c, (uint32_t)channel, plan, 3) < 0)
			break;
	}
	if (errno == ESHUTDOWN) {
		tcs_close(&c);
		return 0;
	}
	fprintf(stderr, "planner: %s (status %#x)\n", strerror(errno), c.status);
	tcs_close(&c);
	return 1;
}
