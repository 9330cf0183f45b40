/* sparse_2of4_probe.c - a probe, not a Tessel kernel: how fast could a 2:4
 * f32 matmul run on this CPU? 2:4 along K (in every 4 consecutive inputs
 * of an output column, 2 nonzeros), vectorized over 16 output columns:
 * per row and group of 4 inputs, the 4 activations are broadcast to every
 * 128-bit lane and vpermilps picks each column's two (its 2-bit indices),
 * then 2 FMAs with the compressed values, where the dense kernel runs 4.
 * Register tiles of MR rows x 32 columns. Weights and indices are
 * synthetic (only the time is measured). Compare with the dense kernel's
 * time for 128 x 768 x 768 from bench/sparse_gemm.c in the same run.
 *
 * Intel Sapphire Rapids, one thread, 2026-11-27: 0.70-0.72 ms (MR = 6-10)
 * against the dense kernel's 0.80 ms: 1.11-1.15x. The permutes share
 * port 5 with the second FMA unit, so half the FMAs cost as much as the
 * dense ones; the 1.3x needs another way on Intel (or a CPU with
 * shuffles off the FMA ports).
 * AMD Zen 5 (family 26), one thread, 2026-12-02: 0.62-0.65 ms against
 * the dense kernel's 0.72-0.73 ms (bench/dense_gemm.c 128 768 768, same
 * run): 1.12-1.17x. There a loop of 12 independent FMAs and one of 12
 * vpermilps each took 1.69 ns, both interleaved 2.55-3.16 ns (they share
 * pipes too); with vpermps 2.65. The library's 2:4 kernel on such CPUs is
 * the lane order (lib/Kernels/SparseLanesF32.c, docs/sparsity.md).
 *
 * Build: clang-22 -O3 -march=native bench/sparse_2of4_probe.c && ./a.out */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <immintrin.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
#define M 128
#define K 768
#define N 768
#define G (K/4)
#define MR 8
int main(){
  float*a=aligned_alloc(64,M*K*4); for(int i=0;i<M*K;i++)a[i]=(i%13)*0.01f;
  /* per 32-column panel p, group g: v0[16x2], v1[16x2], i0[16x2], i1[16x2] */
  int P=N/32; float*v=aligned_alloc(64,(size_t)P*G*4*32*4); 
  for(long i=0;i<(long)P*G*4*32;i++){ int w=(i/32)%4; v[i]= w<2 ? 0.5f : *(float*)&(int){ (int)((i*7)%4) }; }
  float*c=aligned_alloc(64,M*N*4);
  double best=1e9;
  for(int rep=0;rep<30;rep++){ double t0=now();
  for(int p=0;p<P;p++) for(int m0=0;m0<M;m0+=MR){ int mr = M-m0<MR?M-m0:MR;
    __m512 acc[MR][2]; for(int r=0;r<MR;r++){acc[r][0]=_mm512_setzero_ps();acc[r][1]=_mm512_setzero_ps();}
    const float*vp=v+(long)p*G*128;
    for(int g=0;g<G;g++,vp+=128){
      __m512 w00=_mm512_load_ps(vp),w01=_mm512_load_ps(vp+16),w10=_mm512_load_ps(vp+32),w11=_mm512_load_ps(vp+48);
      __m512i i00=_mm512_load_si512(vp+64),i01=_mm512_load_si512(vp+80),i10=_mm512_load_si512(vp+96),i11=_mm512_load_si512(vp+112);
      for(int r=0;r<MR;r++){ __m512 b=_mm512_broadcast_f32x4(_mm_loadu_ps(a+(long)(m0+(r<mr?r:0))*K+4*g));
        acc[r][0]=_mm512_fmadd_ps(_mm512_permutevar_ps(b,i00),w00,acc[r][0]);
        acc[r][1]=_mm512_fmadd_ps(_mm512_permutevar_ps(b,i01),w01,acc[r][1]);
        acc[r][0]=_mm512_fmadd_ps(_mm512_permutevar_ps(b,i10),w10,acc[r][0]);
        acc[r][1]=_mm512_fmadd_ps(_mm512_permutevar_ps(b,i11),w11,acc[r][1]);}
    }
    for(int r=0;r<mr;r++){_mm512_storeu_ps(c+(m0+r)*N+p*32,acc[r][0]);_mm512_storeu_ps(c+(m0+r)*N+p*32+16,acc[r][1]);}
  }
  double t=now()-t0; if(t<best)best=t;}
  double cs=0; for(int i=0;i<M*N;i++)cs+=c[i];
  printf("cs %g 2:4 time %.3f ms (dense-equivalent GFLOP/s %.1f)\n",cs,best*1e3,2.0*M*N*K/best*1e-9);
}
