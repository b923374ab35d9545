// Micro-benchmark: a loopback TCP send against a pipe write, on CPU 1:
// the sender writes 40 bytes, the child reads them and answers one byte
// on a pipe; wall time per round and the sender's thread CPU per round,
// 50,000 rounds each.
// Build: gcc -O2 -o tcp_send_cost tcp_send_cost.c
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static double cpu(){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec*1e9+t.tv_nsec;}
int N=50000;
int main(){
 cpu_set_t s;CPU_ZERO(&s);CPU_SET(1,&s);sched_setaffinity(0,sizeof s,&s);
 int l=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in a={.sin_family=AF_INET,.sin_addr.s_addr=htonl(INADDR_LOOPBACK)};
 bind(l,(void*)&a,sizeof a);listen(l,4);socklen_t al=sizeof a;getsockname(l,(void*)&a,&al);
 int c=socket(AF_INET,SOCK_STREAM,0);connect(c,(void*)&a,sizeof a);int sv=accept(l,0,0);
 int one=1;setsockopt(c,IPPROTO_TCP,TCP_NODELAY,&one,4);setsockopt(sv,IPPROTO_TCP,TCP_NODELAY,&one,4);
 int p[2];pipe(p);int q[2];pipe(q);
 char buf[64]={0};
 pid_t k=fork();
 if(!k){ // child: reads from sv (tcp) then replies on pipe q
   for(int i=0;i<N;i++){recv(sv,buf,64,0);write(q[1],buf,1);} 
   for(int i=0;i<N;i++){read(p[0],buf,40);write(q[1],buf,1);} _exit(0);}
 double c0=cpu(),t0=now();
 for(int i=0;i<N;i++){send(c,buf,40,0);read(q[0],buf,1);} 
 double c1=cpu(),t1=now();
 for(int i=0;i<N;i++){write(p[1],buf,40);read(q[0],buf,1);} 
 double c2=cpu(),t2=now();
 printf("tcp send + pipe reply: wall %.2f us, sender cpu %.2f us\n",(t1-t0)/N/1e3,(c1-c0)/N/1e3);
 printf("pipe write + pipe reply: wall %.2f us, sender cpu %.2f us\n",(t2-t1)/N/1e3,(c2-c1)/N/1e3);
 waitpid(k,0,0);
}
