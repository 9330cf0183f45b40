/* Can an expert-parallel route hide its exchange behind the expert GEMMs?
 * Times, on the processes mpirun starts, an all-to-all-v of `mib` MiB per
 * process (the route's dispatch) and `ms` milliseconds of arithmetic (the
 * expert work of one chunk) three ways:
 *
 *   serial:     MPI_Alltoallv, then the arithmetic (what the route does);
 *   overlapped: MPI_Ialltoallv, the arithmetic, MPI_Wait (a chunked route's
 *               best case: the next chunk's exchange in flight);
 *   polled:     as overlapped, with MPI_Test every 1/16 of the arithmetic
 *               (progress for transports that only move data inside MPI
 *               calls).
 *
 *   mpicc -O2 bench/mpi_overlap.c -o /tmp/mpi_overlap
 *   mpirun -np 2 /tmp/mpi_overlap [mib=4] [ms=20] [repeats=10]
 *
 * Prints the medians of the slowest process's times and how much of the
 * exchange each overlapped form hid (docs/scale-out.md).
 */
#include "mpi_common.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* About `ms` milliseconds of dependent floating-point work, in `parts`
 * slices, calling `between` after each (MPI_Test, or nothing). */
static volatile double sink;
static double spin_rate; /* iterations per ms, measured once */

static void work(double ms, int parts, MPI_Request *poll) {
  long n = (long)(ms * spin_rate / parts);
  double a = 1.0;
  for (int p = 0; p < parts; ++p) {
    for (long i = 0; i < n; ++i)
      a = a * 1.0000001 + 1e-9;
    if (poll) {
      int done;
      MPI_Test(poll, &done, MPI_STATUS_IGNORE);
    }
  }
  sink = a;
}

static double slowest(double t) {
  double worst;
  MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst * 1e3;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double mib = argc > 1 ? atof(argv[1]) : 4.0;
  double ms = argc > 2 ? atof(argv[2]) : 20.0;
  int repeats = argc > 3 ? atoi(argv[3]) : 10;
  if (repeats < 1)
    repeats = 1;
  {
    long n = 10000000;
    double a = 1.0, t0 = MPI_Wtime();
    for (long i = 0; i < n; ++i)
      a = a * 1.0000001 + 1e-9;
    sink = a;
    spin_rate = n / ((MPI_Wtime() - t0) * 1e3);
  }
  int block = (int)(mib * (1 << 20) / size);
  char *send = malloc((size_t)block * (size_t)size);
  char *recv = malloc((size_t)block * (size_t)size);
  memset(send, rank + 1, (size_t)block * (size_t)size);
  int *counts = malloc(2 * sizeof(int) * (size_t)size);
  for (int q = 0; q < size; ++q) {
    counts[q] = block;
    counts[size + q] = q * block;
  }
  double *t[4];
  for (int k = 0; k < 4; ++k)
    t[k] = malloc(sizeof(double) * (size_t)repeats);
  for (int r = -1; r < repeats; ++r) {
    double t0;
    /* the exchange alone */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Alltoallv(send, counts, counts + size, MPI_BYTE, recv, counts,
                  counts + size, MPI_BYTE, MPI_COMM_WORLD);
    double alone = slowest(MPI_Wtime() - t0);
    /* serial */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Alltoallv(send, counts, counts + size, MPI_BYTE, recv, counts,
                  counts + size, MPI_BYTE, MPI_COMM_WORLD);
    work(ms, 1, NULL);
    double serial = slowest(MPI_Wtime() - t0);
    /* overlapped */
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Ialltoallv(send, counts, counts + size, MPI_BYTE, recv, counts,
                   counts + size, MPI_BYTE, MPI_COMM_WORLD, &req);
    work(ms, 1, NULL);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    double overlapped = slowest(MPI_Wtime() - t0);
    /* polled */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Ialltoallv(send, counts, counts + size, MPI_BYTE, recv, counts,
                   counts + size, MPI_BYTE, MPI_COMM_WORLD, &req);
    work(ms, 16, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    double polled = slowest(MPI_Wtime() - t0);
    if (r >= 0) {
      t[0][r] = alone;
      t[1][r] = serial;
      t[2][r] = overlapped;
      t[3][r] = polled;
    }
  }
  double alone = median(t[0], repeats), serial = median(t[1], repeats);
  double overlapped = median(t[2], repeats), polled = median(t[3], repeats);
  if (rank == 0) {
    printf("processes %d, %.1f MiB a process, %.1f ms of work\n", size, mib,
           ms);
    printf("exchange alone %.3f ms; serial %.3f ms; overlapped %.3f ms "
           "(hid %.0f%% of the exchange); polled %.3f ms (hid %.0f%%)\n",
           alone, serial, overlapped, 100.0 * (serial - overlapped) / alone,
           polled, 100.0 * (serial - polled) / alone);
  }
  MPI_Finalize();
  return 0;
}
