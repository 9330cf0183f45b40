/* The exchanges of an expert-parallel route, timed alone: MPI_Alltoallv of
 * equal blocks and MPI_Allgather, for per-process message sizes from 1 KiB
 * to 32 MiB, on the processes mpirun starts. Calibrates the exchange term
 * of docs/scale-out.md's cost model (latency and bandwidth per message).
 *
 *   mpicc -O2 bench/mpi_exchange.c -o /tmp/mpi_exchange
 *   mpirun -np 2 /tmp/mpi_exchange [repeats]
 *
 * Prints, for each size, the median over `repeats` (default 20) of the
 * slowest process's time of one all-to-all-v (each process sends `bytes`
 * to every other process) and one all-gather (each contributes `bytes`).
 */
#include "mpi_common.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int repeats = argc > 1 ? atoi(argv[1]) : 20;
  if (repeats < 1)
    repeats = 1;
  int *counts = malloc(4 * sizeof(int) * (size_t)size);
  double *a2a = malloc(sizeof(double) * (size_t)repeats);
  double *gather = malloc(sizeof(double) * (size_t)repeats);
  if (rank == 0)
    printf("processes %d\nbytes_per_peer alltoallv_ms allgather_ms "
           "alltoallv_GBps\n",
           size);
  for (long bytes = 1024; bytes <= (32L << 20); bytes *= 4) {
    char *send = malloc((size_t)bytes * (size_t)size);
    char *recv = malloc((size_t)bytes * (size_t)size);
    memset(send, rank, (size_t)bytes * (size_t)size);
    for (int q = 0; q < size; ++q) {
      counts[q] = (int)bytes;              /* send counts */
      counts[size + q] = (int)(q * bytes); /* displacements */
    }
    for (int r = -2; r < repeats; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      MPI_Alltoallv(send, counts, counts + size, MPI_BYTE, recv, counts,
                    counts + size, MPI_BYTE, MPI_COMM_WORLD);
      double t1 = MPI_Wtime() - t0, worst;
      MPI_Allreduce(&t1, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                    MPI_COMM_WORLD);
      double t2 = MPI_Wtime() - t0, worst2;
      MPI_Allreduce(&t2, &worst2, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) {
        a2a[r] = worst * 1e3;
        gather[r] = worst2 * 1e3;
      }
    }
    double ma = median(a2a, repeats), mg = median(gather, repeats);
    if (rank == 0)
      printf("%ld %.4f %.4f %.2f\n", bytes, ma, mg,
             (double)bytes * (size - 1) / (ma * 1e-3) / 1e9);
    free(send);
    free(recv);
  }
  free(counts);
  free(a2a);
  free(gather);
  MPI_Finalize();
  return 0;
}
