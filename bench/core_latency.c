/* core_latency.c - the round trip of one cache line between two threads
 * (a flag bounced back and forth), in ns: what handing a job to a second
 * thread and reading its results costs. On the 2-vCPU VMs this project
 * runs on it is 0.25-0.3 us when the vCPUs share a CCD and 0.5-2 us when
 * they do not, and the hypervisor moves them: two-thread figures are only
 * comparable with this number beside them (bench/bench_models.py records
 * it at the start and end of a run).
 *
 *   cc -O2 -pthread bench/core_latency.c -o core_latency && ./core_latency
 *
 * Prints `core_latency: round_trip_ns=N` (the median of 9 rounds). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BOUNCES 20000

static int64_t flag __attribute__((aligned(64)));

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The other side: answers each odd value with the next even one. */
static void *pong(void *arg) {
  const int64_t base = *(const int64_t *)arg;
  for (int64_t i = base + 1; i < base + 2 * BOUNCES; i += 2) {
    while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != i)
      ;
    __atomic_store_n(&flag, i + 1, __ATOMIC_RELEASE);
  }
  return NULL;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  double rounds[9];
  for (int r = 0; r < 9; ++r) {
    int64_t base = (int64_t)r * 2 * BOUNCES;
    __atomic_store_n(&flag, base, __ATOMIC_RELEASE);
    pthread_t t;
    if (pthread_create(&t, NULL, pong, &base) != 0) {
      fprintf(stderr, "core_latency: cannot start a thread\n");
      return 1;
    }
    const double t0 = now();
    for (int64_t i = base; i < base + 2 * BOUNCES; i += 2) {
      __atomic_store_n(&flag, i + 1, __ATOMIC_RELEASE);
      while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != i + 2)
        ;
    }
    rounds[r] = (now() - t0) / BOUNCES * 1e9;
    pthread_join(t, NULL);
  }
  qsort(rounds, 9, sizeof rounds[0], cmp);
  printf("core_latency: round_trip_ns=%.0f\n", rounds[4]);
  return 0;
}
