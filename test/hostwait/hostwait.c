/*
 * hostwait.c: a periodic native tcs client that waits on the host, for
 * test/hostwait_test.go. In each of its first --activations activations
 * (activation 0 being its start-up, before its first idle) it reads
 * --reads blocks of 4 KiB from FILE with O_DIRECT, which bypasses the page
 * cache: every read waits for the disk in an uninterruptible sleep, as a
 * page fault reading code from disk does. Then it writes a zero torque on
 * channel 0 and idles until its next period. Build:
 *
 *	cc -O2 -Wall -std=gnu11 -I coordinator/native -o hostwait test/hostwait/hostwait.c
 *
 *	hostwait FILE [--activations N] [--reads N]
 *
 * Exits 0 when the simulation ends; it logs how long its reads took.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tcs_native.h"

enum { block = 4096 };

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* readDisk reads n blocks of fd, spread over its first size bytes. */
static int read_disk(int fd, void *buf, long n, off_t size)
{
	for (long i = 0; i < n; i++) {
		off_t at = (off_t)((i * 7919) % (size / block)) * block;
		if (pread(fd, buf, block, at) != block)
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long activations = 3, reads = 16;
	const char *path = NULL;
	struct tcs_client c;
	double obs[2], cmd[1] = {0};
	void *buf;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--activations") == 0 && i + 1 < argc)
			activations = atol(argv[++i]);
		else if (strcmp(argv[i], "--reads") == 0 && i + 1 < argc)
			reads = atol(argv[++i]);
		else if (!path)
			path = argv[i];
		else {
			fprintf(stderr, "usage: hostwait FILE [--activations N] [--reads N]\n");
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "usage: hostwait FILE [--activations N] [--reads N]\n");
		return 2;
	}
	int fd = open(path, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "hostwait: %s: %s\n", path, strerror(errno));
		return 1;
	}
	off_t size = lseek(fd, 0, SEEK_END);
	if (size < block || posix_memalign(&buf, block, block) != 0) {
		fprintf(stderr, "hostwait: %s: want at least %d bytes\n", path, block);
		return 1;
	}
	if (tcs_connect(&c) < 0) {
		fprintf(stderr, "hostwait: connect: %s\n", strerror(errno));
		return 1;
	}
	int64_t period = c.period > 0 ? c.period : 1000000;
	int64_t k = c.now / period;
	int n = tcs_read(&c, obs, 2, NULL);
	for (long a = 0; n >= 0; a++) {
		if (a < activations) {
			double t0 = wall_ms();
			if (read_disk(fd, buf, reads, size) < 0) {
				fprintf(stderr, "hostwait: read %s: %s\n", path, strerror(errno));
				return 1;
			}
			fprintf(stderr, "hostwait: activation %ld: %ld reads in %.3f ms of wall time\n",
				a, reads, wall_ms() - t0);
		}
		k++;
		if (tcs_write_idle(&c, 0, cmd, 1, k * period, NULL) < 0)
			break;
		n = tcs_obs_current(&c) ? tcs_obs(&c, obs, 2, NULL) : tcs_read(&c, obs, 2, NULL);
	}
	if (errno == ESHUTDOWN) {
		tcs_close(&c);
		return 0;
	}
	fprintf(stderr, "hostwait: %s (status %#x)\n", strerror(errno), c.status);
	tcs_close(&c);
	return 1;
}
