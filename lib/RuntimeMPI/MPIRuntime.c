/*===- MPIRuntime.c - the MPI part of expert-parallel artifacts ------------===*
 *
 * Linked into an artifact compiled with --expert-parallel=N (as the kernel
 * library is into every CPU artifact), together with the system's libmpi.
 * Two kinds of functions:
 *
 *  - the collectives the compiled code calls (tessel-mpi-to-calls lowers
 *    tessel.all_to_all_v and tessel.all_gather to them), on the
 *    communicator upstream's mpi.comm_world lowered to;
 *  - __tessel_mpi_*, which the runtime (lib/Runtime) finds with dlsym when
 *    the manifest has a `ranks` record: start MPI and check the process
 *    count at load, broadcast the inputs from rank 0, take the slowest
 *    rank's time. So the runtime itself never links MPI, and single-process
 *    users and builds without MPI are unaffected.
 *
 * MPI's default error handler (MPI_ERRORS_ARE_FATAL) aborts every process
 * of the job with MPI's message on a failed call, so the collectives return
 * nothing.
 *
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <mpi.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The communicator as upstream's MPI-to-LLVM lowering passes it: Open MPI's
 * handles are pointers (ptrtoint of &ompi_mpi_comm_world), MPICH's ints. */
static MPI_Comm commOf(int64_t handle) {
#ifdef OPEN_MPI
  return (MPI_Comm)(intptr_t)handle;
#else
  return (MPI_Comm)handle;
#endif
}

/* A contiguous datatype of `bytes` bytes: counts stay row counts, so a
 * large buffer's byte count never overflows MPI's int counts. */
static MPI_Datatype rowType(int64_t bytes) {
  MPI_Datatype t;
  if (bytes > INT_MAX) {
    fprintf(stderr, "tessel: a row of %lld bytes is too large for MPI\n",
            (long long)bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Type_contiguous((int)bytes, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

void tessel_mpi_all_to_all_v(int64_t comm, const void *send,
                             const int32_t *sendRows, void *recv,
                             const int32_t *recvRows, int64_t rowBytes) {
  MPI_Comm c = commOf(comm);
  int n = 0;
  MPI_Comm_size(c, &n);
  int *counts = malloc(4 * sizeof(int) * (size_t)n);
  int *sendCounts = counts, *sendDispls = counts + n;
  int *recvCounts = counts + 2 * n, *recvDispls = counts + 3 * n;
  int sendAt = 0, recvAt = 0;
  for (int q = 0; q < n; ++q) {
    sendCounts[q] = sendRows[q];
    sendDispls[q] = sendAt;
    sendAt += sendRows[q];
    recvCounts[q] = recvRows[q];
    recvDispls[q] = recvAt;
    recvAt += recvRows[q];
  }
  if (rowBytes > 0) {
    MPI_Datatype row = rowType(rowBytes);
    MPI_Alltoallv(send, sendCounts, sendDispls, row, recv, recvCounts,
                  recvDispls, row, c);
    MPI_Type_free(&row);
  }
  free(counts);
}

void tessel_mpi_all_gather(int64_t comm, const void *send, void *recv,
                           int64_t bytes) {
  if (bytes <= 0)
    return;
  MPI_Datatype block = rowType(bytes);
  MPI_Allgather(send, 1, block, recv, 1, block, commOf(comm));
  MPI_Type_free(&block);
}

/*===- For the runtime
 * -----------------------------------------------------===*/

static void finalizeAtExit(void) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

/* Starts MPI (once per process; the artifact is linked -z nodelete, so the
 * exit handler runs at exit, not when the artifact is closed: MPI cannot
 * start twice) and checks that the job has `ranks` processes. */
int32_t __tessel_mpi_init(int32_t ranks, char *message, int64_t capacity) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) {
    snprintf(message, (size_t)capacity,
             "MPI was already finalized in this process");
    return 1;
  }
  if (!initialized) {
    /* libmpi came in as the artifact's dependency, loaded RTLD_LOCAL; Open
     * MPI's plugins resolve its symbols globally, so promote it first. */
    Dl_info info;
    if (dladdr((void *)&MPI_Init_thread, &info) && info.dli_fname)
      dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS) {
      snprintf(message, (size_t)capacity, "MPI_Init_thread failed");
      return 1;
    }
    atexit(finalizeAtExit);
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != ranks) {
    snprintf(message, (size_t)capacity,
             "it was compiled for %d MPI processes (--expert-parallel=%d) "
             "but this job has %d: run it with mpirun -np %d",
             ranks, ranks, size, ranks);
    return 1;
  }
  return 0;
}

int32_t __tessel_mpi_rank(void) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

/* Rank 0's `bytes` at `data` to every process. */
void __tessel_mpi_bcast(void *data, int64_t bytes) {
  char *p = data;
  while (bytes > 0) {
    int chunk = bytes > (1 << 30) ? (1 << 30) : (int)bytes;
    MPI_Bcast(p, chunk, MPI_BYTE, 0, MPI_COMM_WORLD);
    p += chunk;
    bytes -= chunk;
  }
}

/* The largest `value` over the processes, on every process. */
double __tessel_mpi_max(double value) {
  double max = value;
  MPI_Allreduce(&value, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

/* Ends every process of the job: one that fails must not leave the others
 * waiting in a collective. */
void __tessel_mpi_abort(int32_t code) { MPI_Abort(MPI_COMM_WORLD, code); }
