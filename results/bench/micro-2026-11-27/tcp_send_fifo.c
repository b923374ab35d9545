// Micro-benchmark: the sender's CPU for one 40-byte loopback TCP send on
// CPU 1, the receiver a child process that reads each message (after
// epoll_wait when argv[2] is 1) and answers on a pipe. argv[1] 1: sender
// SCHED_FIFO 80, receiver 77 (tcs's ℓ0 and ℓ3). The cost of the two
// thread CPU clock reads around each send is measured and subtracted.
// Bounded by alarm(60). Build: gcc -O2 -o tcp_send_fifo tcp_send_fifo.c
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <string.h>
static long long tcpu(){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
int N=20000;
int main(int argc,char**argv){
 int rt=argc>1&&argv[1][0]=='1'; int useep=argc>2&&argv[2][0]=='1';
 alarm(60);
 cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 int l=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in a={.sin_family=AF_INET,.sin_addr.s_addr=htonl(INADDR_LOOPBACK)};
 bind(l,(void*)&a,sizeof a);listen(l,4);socklen_t al=sizeof a;getsockname(l,(void*)&a,&al);
 int c=socket(AF_INET,SOCK_STREAM,0);connect(c,(void*)&a,sizeof a);int sv=accept(l,0,0);
 int one=1;setsockopt(c,IPPROTO_TCP,TCP_NODELAY,&one,4);setsockopt(sv,IPPROTO_TCP,TCP_NODELAY,&one,4);
 int q[2];pipe(q);
 char buf[64]={0};
 pid_t k=fork();
 if(!k){ struct sched_param sp={77}; if(rt) sched_setscheduler(0,SCHED_FIFO,&sp);
   int ep=epoll_create1(0); struct epoll_event ev={.events=EPOLLIN}; epoll_ctl(ep,EPOLL_CTL_ADD,sv,&ev);
   for(int i=0;i<N;i++){ if(useep){struct epoll_event e; epoll_wait(ep,&e,1,-1);} recv(sv,buf,64,0);write(q[1],buf,1);} _exit(0);}
 struct sched_param sp={80}; if(rt) sched_setscheduler(0,SCHED_FIFO,&sp);
 long long base=0,snd=0;
 for(int i=0;i<N;i++){ long long t0=tcpu(); long long t1=tcpu(); send(c,buf,40,0); long long t2=tcpu(); base+=t1-t0; snd+=t2-t1; read(q[0],buf,1);} 
 printf("rt=%d epoll=%d: send %.2f us of sender CPU (clock read %.2f us subtracted)\n",rt,useep,(snd-base)/(double)N/1e3,base/(double)N/1e3);
 waitpid(k,0,0);
}
