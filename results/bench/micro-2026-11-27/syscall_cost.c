// Micro-benchmark: what one system call costs on this guest, on CPU 1
// (SCHED_OTHER, no contention): getppid, a process CPU clock read, an
// eventfd write and read, a poll of one fd, 200,000 of each.
// Build: gcc -O2 -o syscall_cost syscall_cost.c
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <stdint.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(){int N=200000;double t0=now();for(int i=0;i<N;i++)syscall(SYS_getppid);double t1=now();
printf("getppid %.2f us\n",(t1-t0)/N/1000);
struct timespec ts;t0=now();for(int i=0;i<N;i++)clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&ts);t1=now();printf("proc cpu clock %.2f us\n",(t1-t0)/N/1000);
int e=eventfd(0,EFD_NONBLOCK);uint64_t one=1,v;t0=now();for(int i=0;i<N;i++){write(e,&one,8);}t1=now();printf("eventfd write %.2f us\n",(t1-t0)/N/1000);
t0=now();for(int i=0;i<N;i++){read(e,&v,8);}t1=now();printf("eventfd read(EAGAIN mostly) %.2f us\n",(t1-t0)/N/1000);
struct pollfd p={e,POLLIN,0};t0=now();for(int i=0;i<N;i++){poll(&p,1,0);}t1=now();printf("poll %.2f us\n",(t1-t0)/N/1000);
}
