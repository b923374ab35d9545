// Micro-benchmark (results/bench/dispatch-path-2026-11-28.md): what one
// pread of a sleeping thread's /proc/self/task/<tid>/{stat,wchan,
// schedstat,syscall} costs. Build: gcc -O2 -pthread; run: taskset -c 1 ./a.out.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/epoll.h>
static volatile int tid;
static void *sleeper(void *a) { (void)a; tid = syscall(SYS_gettid); int ep = epoll_create1(0); struct epoll_event e; epoll_wait(ep, &e, 1, -1); return 0; }
static double ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
  pthread_t t; pthread_create(&t, 0, sleeper, 0);
  while (!tid) usleep(1000);
  usleep(10000);
  const char *files[] = {"stat", "wchan", "schedstat", "syscall"};
  for (int round = 0; round < 2; round++)
  for (int f = 0; f < 4; f++) {
    char path[100]; snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, files[f]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char b[512]; int n = 20000; ssize_t r = 0;
    double t0 = ns();
    for (int i = 0; i < n; i++) r = pread(fd, b, sizeof b - 1, 0);
    double t1 = ns();
    b[r > 0 ? r : 0] = 0; if (r > 60) b[60] = 0;
    printf("%-10s %.2f µs  [%s]\n", files[f], (t1 - t0) / 1e3 / n, strtok(b, "\n"));
    close(fd);
  }
  return 0;
}
