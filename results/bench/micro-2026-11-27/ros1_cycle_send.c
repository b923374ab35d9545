#define _GNU_SOURCE
// Micro-benchmark: tcs's ROS 1 cycle in C, to see what a TCPROS send costs
// right after a block. A coordinator thread (SCHED_FIFO 80) and a detector
// thread (78, spinning on a generation word) in one process; a client
// process (raised to 79 while dispatched, 77 otherwise) waits in epoll on
// a loopback TCP socket, reads, computes a little and blocks. Each cycle
// the coordinator raises the client, sends it 40 bytes and waits for the
// detector's report; it prints the send's wall time (average, histogram
// in powers of two of µs). argv[1]: MiB each side touches per cycle (one
// byte per page); argv[2]: cycles (20,000). CPU 1; bounded by alarm().
// Build: gcc -O2 -pthread -o ros1_cycle_send ros1_cycle_send.c
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <string.h>
static int64_t mono(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
struct shm { _Atomic uint64_t gen, ack; };
static struct shm *sh; static int efd;
static void *det(void*x){ struct sched_param sp={78}; pthread_setschedparam(pthread_self(),SCHED_FIFO,&sp);
  uint64_t last=0,one=1; for(;;){ uint64_t g=atomic_load(&sh->gen); if(g!=last){ last=g; atomic_store(&sh->ack,g); write(efd,&one,8);} } return 0; }
int main(int argc,char**argv){
 int N=argc>2?atoi(argv[2]):20000; size_t touch = argc>1? (size_t)atol(argv[1])<<20 : 0; alarm(60);
 cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 sh=mmap(0,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);
 int l=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in a={.sin_family=AF_INET,.sin_addr.s_addr=htonl(INADDR_LOOPBACK)};
 bind(l,(void*)&a,sizeof a);listen(l,4);socklen_t al=sizeof a;getsockname(l,(void*)&a,&al);
 int c=socket(AF_INET,SOCK_STREAM,0);connect(c,(void*)&a,sizeof a);int sv=accept(l,0,0);
 int one=1;setsockopt(c,IPPROTO_TCP,TCP_NODELAY,&one,4);
 struct sched_param sp={77}; sched_setscheduler(0,SCHED_FIFO,&sp);
 pid_t k=fork();
 if(!k){ close(c); close(l); char buf[64]; char *m=touch?malloc(touch):0; if(m) memset(m,1,touch);
   int ep=epoll_create1(0); struct epoll_event ev={.events=EPOLLIN}; epoll_ctl(ep,EPOLL_CTL_ADD,sv,&ev);
   alarm(70); for(;;){ struct epoll_event e; epoll_wait(ep,&e,1,-1); if(recv(sv,buf,64,0)<=0) _exit(0); volatile double x=1; for(int i=0;i<2000;i++) x=x*1.0000001; if(m) for(size_t o=0;o<touch;o+=4096) m[o]++; } }
 efd=eventfd(0,EFD_NONBLOCK); int ep=epoll_create1(0); struct epoll_event ev={.events=EPOLLIN|EPOLLET}; epoll_ctl(ep,EPOLL_CTL_ADD,efd,&ev);
 char *mine=touch?malloc(touch):0; if(mine) memset(mine,1,touch);
 pthread_t t; pthread_create(&t,0,det,0);
 sp.sched_priority=80; sched_setscheduler(0,SCHED_FIFO,&sp);
 usleep(1000);
 long hist[12]={0}; int64_t tot=0; char buf[64]={0};
 for(int i=0;i<N;i++){
   struct sched_param p1={79}; sched_setparam(k,&p1);
   uint64_t g=atomic_fetch_add(&sh->gen,1)+1;
   int64_t t0=mono(); send(c,buf,40,0); int64_t d=mono()-t0; tot+=d;
   int kk=0; for(int64_t us=d/1000; us>=1 && kk<11; us>>=1) kk++; hist[kk]++;
   for(int w=0;;w++){ struct epoll_event e; int r=epoll_wait(ep,&e,1,100); if(atomic_load(&sh->ack)==g) break; if(r==0){fprintf(stderr,"i=%d timeout gen=%lu ack=%lu\n",i,(unsigned long)g,(unsigned long)atomic_load(&sh->ack)); if(w>3) return 1;} }
   struct sched_param p3={77}; sched_setparam(k,&p3);
   if(mine) for(size_t o=0;o<touch;o+=4096) mine[o]++;
 }
 printf("touch %zu MiB: send avg %.2f us, hist(<1,2,4,8,16,32,64..) ",touch>>20,tot/(double)N/1e3); for(int i=0;i<12;i++) printf("%ld ",hist[i]); printf("\n");
 fflush(stdout); _exit(0); }
