/* conv_stem.c: tessel_kernel_conv2d_nhwc_f32 on stem shapes, one thread.
 *   cc -O2 -I build/include bench/conv_stem.c build/lib/libtessel_kernels_x86-64-v4.a -lpthread -lm -o /tmp/conv_stem
 *   TESSEL_NUM_THREADS=1 /tmp/conv_stem [H C F K stride]
 * TESSEL_KERNELS_NO_STEM=1 times the GEMM tiles instead of ConvStemF32.c. */
#include "tessel/Kernels/tessel_kernels.h"
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define NR TESSEL_KERNEL_NR
static void run(int H,int C,int F,int KH,int S){
  int W=H, pad=KH/2; int OH=(H+2*pad-KH)/S+1,OW=OH;
  float*in=malloc(4L*H*W*C),*out=malloc(4L*OH*OW*F),*bias=malloc(4L*F);
  int P=(F+NR-1)/NR; float*wp=calloc((size_t)P*KH*KH*C*NR,4);
  for(long i=0;i<(long)H*W*C;++i)in[i]=rand()/(float)RAND_MAX;
  for(long i=0;i<(long)P*KH*KH*C*NR;++i)wp[i]=rand()/(float)RAND_MAX-0.5f;
  for(int f=0;f<F;++f)bias[f]=0.1f;
  double fl=2.0*OH*OW*F*C*KH*KH, best=1e9; int reps=(int)(2e8/fl)+1;
  for(int t=0;t<7;++t){double t0=now();
    for(int r=0;r<reps;++r) tessel_kernel_conv2d_nhwc_f32(1,OH,OW,F,KH,KH,C,H,W,pad,pad,in,(long)H*W*C,(long)W*C,C,1,S,S,1,1,wp,0,out,(long)OH*OW*F,(long)OW*F,F,1,bias,0.0f,INFINITY,0);
    double d=(now()-t0)/reps; if(d<best)best=d;}
  printf("H=%d C=%d F=%d K=%dx%d s%d: %.2f us %.1f GFLOP/s\n",H,C,F,KH,KH,S,best*1e6,fl/best*1e-9);
}
int main(int argc,char**argv){
  if(argc==6){run(atoi(argv[1]),atoi(argv[2]),atoi(argv[3]),atoi(argv[4]),atoi(argv[5]));return 0;}
  run(224,3,24,3,2); run(28,24,24,1,1); run(56,24,24,1,1); run(14,48,48,1,1); run(7,96,96,1,1); run(28,64,64,1,1); run(7,192,1024,1,1); return 0;}
