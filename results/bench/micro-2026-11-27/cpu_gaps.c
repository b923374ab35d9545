// Micro-benchmark: what a SCHED_FIFO 80 busy loop on CPU 1 loses to
// everything else (interrupts, the host): it reads the monotonic clock for
// 2 s and counts the gaps over 1.5 µs between two reads, with a histogram
// in powers of two of µs. argv[1]: a periodic timerfd of that many Hz armed
// on CPU 1 first (0: none). Bounded by alarm(10).
// Build: gcc -O2 -o cpu_gaps cpu_gaps.c
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/timerfd.h>
static int64_t mono(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
int main(int argc,char**argv){
 int hz=argc>1?atoi(argv[1]):0; alarm(10);
 cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 int tfd=-1;
 if(hz>0){ tfd=timerfd_create(CLOCK_MONOTONIC,0); struct itimerspec its={{0,1000000000/hz},{0,1000000000/hz}}; timerfd_settime(tfd,0,&its,0); }
 struct sched_param sp={80}; sched_setscheduler(0,SCHED_FIFO,&sp);
 int64_t end=mono()+2000000000LL, last=mono(), lost=0; long gaps=0; long h[8]={0};
 while(1){ int64_t t=mono(); if(t>end) break; int64_t d=t-last; last=t; if(d>1500){ gaps++; lost+=d; int k=0; for(int64_t us=d/1000; us>=2 && k<7; us>>=1) k++; h[k]++; } }
 printf("timer %d Hz: %ld gaps > 1.5 us in 2 s, %.1f us lost per gap, %.2f %% of the CPU; hist(1-2,2-4,4-8,8-16,16-32,32-64,64-128,more us): ",hz,gaps,gaps?lost/(double)gaps/1e3:0,lost/2e7); for(int i=0;i<8;i++) printf("%ld ",h[i]); printf("\n");
 return 0; }
