#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <x86intrin.h>
// One-way stamp exchange (docs/load.md, "On the Zen 4 machine"; gcc -O2 -pthread one-way-line.c) between CPU 0 and CPU 1: the sender stores its rdtsc in a
// shared line, the receiver (spinning on it) reads its own; min over many samples of
// (receiver - sender) in each direction. offset = (d01 - d10) / 2, transfer = (d01 + d10) / 2.
static volatile uint64_t line[8] __attribute__((aligned(64)));
static volatile uint64_t ack[8] __attribute__((aligned(64)));
#define N 200000
static uint64_t d[2][N];
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void *side(void *arg){
  int me=(int)(intptr_t)arg; pin(me);
  for(int i=0;i<2*N;i++){
    int sender = (i&1)==me; // alternate directions
    uint64_t seq=i+1;
    if(sender){
      while(ack[0]!=seq-1 && i>0) ;
      for (volatile int k=0;k<200;k++);
      uint64_t t=__rdtsc(); line[1]=t; __atomic_store_n(&line[0],seq,__ATOMIC_RELEASE);
    } else {
      while(__atomic_load_n(&line[0],__ATOMIC_ACQUIRE)!=seq) ;
      uint64_t t=__rdtsc(); d[(i&1)][i/2]= t-line[1]; ack[0]=seq;
    }
  }
  return 0;
}
static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}
int main(){
  pthread_t a,b; pthread_create(&a,0,side,(void*)0); pthread_create(&b,0,side,(void*)1);
  pthread_join(a,0); pthread_join(b,0);
  // d[0]: forward, CPU 0 to CPU 1 (i even: CPU 0 sends); d[1]: back.
  for(int k=0;k<2;k++){ qsort(d[k],N,8,cmp); printf("%s ticks: min %lu, median %lu\n", k==0?"forward (CPU 0 to CPU 1)":"back (CPU 1 to CPU 0)", d[k][0], d[k][N/2]); }
  double ghz=2.596;
  double m01=d[0][N/2]/ghz, m10=d[1][N/2]/ghz;
  printf("median ns: forward %.1f, back %.1f, offset %.1f, transfer %.1f\n", m01, m10, (m01-m10)/2, (m01+m10)/2);
  return 0;
}
