/* What bench/mpi_exchange.c and bench/mpi_overlap.c share: the median of
 * their repeated timings. */
#ifndef TESSEL_BENCH_MPI_COMMON_H
#define TESSEL_BENCH_MPI_COMMON_H

#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
