// Micro-benchmark: a context switch between two threads of one process
// and between two processes, on CPU 1: a round trip over two pipes
// (2 switches, 4 system calls), 100,000 times; argv[1] MiB touched by
// each process first (0 by default).
// Build: gcc -O2 -pthread -o switch_cost switch_cost.c
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <string.h>
#include <sys/mman.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int a[2],b[2]; int N=100000;
void *peer(void*x){char c;for(int i=0;i<N;i++){read(a[0],&c,1);write(b[1],&c,1);}return 0;}
int main(int argc,char**argv){
 cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 size_t touch = argc>1? atol(argv[1])<<20:0;
 pipe(a);pipe(b);char c=0;
 pthread_t t;pthread_create(&t,0,peer,0);
 double t0=now();for(int i=0;i<N;i++){write(a[1],&c,1);read(b[0],&c,1);}double t1=now();
 pthread_join(t,0);
 printf("threads: %.2f us per round trip (2 switches)\n",(t1-t0)/N/1000);
 pid_t p=fork(); if(!p){ if(touch){char*m=malloc(touch);memset(m,1,touch);} peer(0);_exit(0);} 
 if(touch){char*m=malloc(touch);memset(m,1,touch);}
 t0=now();for(int i=0;i<N;i++){write(a[1],&c,1);read(b[0],&c,1);}t1=now();waitpid(p,0,0);
 printf("processes (%zu MiB touched): %.2f us per round trip (2 switches)\n",touch>>20,(t1-t0)/N/1000);
}
