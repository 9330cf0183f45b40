/* fma_peak.c: measures this machine's fp32 FMA peak (GFLOP/s).
 *
 * Each thread runs a loop of independent FMAs of the widest vectors the
 * build targets: AVX-512 (24 accumulator zmm registers, 16 fp32 lanes) or,
 * on CPUs without it (AMD Zen 3, Intel client cores), AVX2 + FMA (12 ymm
 * accumulators, 8 lanes): more accumulators than latency x FMA ports, so
 * the FMA units never wait on a dependency; 2 flops per FMA lane.
 *
 *   cc -O3 -march=native -pthread fma_peak.c -o fma_peak
 *   ./fma_peak [THREADS] [SECONDS]
 *
 * Prints one line per thread count 1..THREADS:
 *   fma_peak: threads=N gflops=G per_thread_gflops=G/N
 * The best of several short trials is reported (another process on the
 * machine can only make a trial slower).
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
#define NACC 24
#define LANES 16
typedef __m512 vec;
#define VSET1 _mm512_set1_ps
#define VFMA _mm512_fmadd_ps
#define VADD _mm512_add_ps
#define VZERO _mm512_setzero_ps
static float vsum(vec v) { return _mm512_reduce_add_ps(v); }
#define FOR_ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) \
  X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
#elif defined(__AVX2__) && defined(__FMA__)
#define NACC 12
#define LANES 8
typedef __m256 vec;
#define VSET1 _mm256_set1_ps
#define VFMA _mm256_fmadd_ps
#define VADD _mm256_add_ps
#define VZERO _mm256_setzero_ps
static float vsum(vec v) {
  float f[8], s = 0;
  _mm256_storeu_ps(f, v);
  for (int i = 0; i < 8; ++i) s += f[i];
  return s;
}
#define FOR_ACC(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#else
#error "fma_peak.c needs AVX-512F or AVX2 + FMA (build with -march=native)"
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
  long iters;
  float sink;
} job_t;

#define ACC_DECL(i) vec a##i = VSET1(1.0f + i * 1e-3f);
#define ACC_FMA(i) a##i = VFMA(a##i, m, c);
#define ACC_SUM(i) s = VADD(s, a##i);

static void *worker(void *arg) {
  job_t *job = (job_t *)arg;
  /* NACC named accumulators (not an array, so they live in registers) */
  FOR_ACC(ACC_DECL)
  const vec m = VSET1(0.999999f), c = VSET1(1e-7f);
  for (long it = 0; it < job->iters; ++it) {
    FOR_ACC(ACC_FMA)
  }
  vec s = VZERO();
  FOR_ACC(ACC_SUM)
  job->sink = vsum(s);
  return NULL;
}

/* Runs `threads` workers for `iters` iterations each; returns GFLOP/s. */
static double trial(int threads, long iters) {
  pthread_t tid[64];
  job_t jobs[64];
  double t0 = now_s();
  for (int t = 0; t < threads; ++t) {
    jobs[t].iters = iters;
    pthread_create(&tid[t], NULL, worker, &jobs[t]);
  }
  for (int t = 0; t < threads; ++t) pthread_join(tid[t], NULL);
  double dt = now_s() - t0;
  volatile float sink = 0;
  for (int t = 0; t < threads; ++t) sink += jobs[t].sink;
  (void)sink;
  return (double)threads * iters * NACC * LANES * 2 / dt * 1e-9;
}

int main(int argc, char **argv) {
  int max_threads = argc > 1 ? atoi(argv[1]) : 1;
  double seconds = argc > 2 ? atof(argv[2]) : 0.2;
  if (max_threads < 1 || max_threads > 64) max_threads = 1;
  /* calibrate: iterations for about `seconds` on one thread */
  long iters = 1000000;
  double g = trial(1, iters);
  iters = (long)(seconds * g * 1e9 / (NACC * LANES * 2));
  if (iters < 1000) iters = 1000;
  for (int n = 1; n <= max_threads; ++n) {
    double best = 0;
    for (int r = 0; r < 5; ++r) {
      double v = trial(n, iters);
      if (v > best) best = v;
    }
    printf("fma_peak: threads=%d gflops=%.1f per_thread_gflops=%.1f\n", n, best, best / n);
  }
  return 0;
}
