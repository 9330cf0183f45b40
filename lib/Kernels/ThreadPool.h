/* ThreadPool.h - the kernel library's own thread pool.
 *
 * One pool per artifact (kernels are linked statically into each artifact),
 * started on the first multi-threaded call and kept for later calls so no
 * inference pays for thread creation. The calling thread takes part in the
 * work. */
#ifndef TESSEL_KERNELS_THREADPOOL_H
#define TESSEL_KERNELS_THREADPOOL_H

#include <stdint.h>

typedef void (*tk_task_fn)(void *arg, int64_t task);

/* Threads to use for the current call (set by tessel_kernel_set_context). */
int tk_num_threads(void);

/* Runs fn(arg, t) for t in [0, ntasks) on up to tk_num_threads() threads and
 * returns when all are done. Tasks are handed out in increasing order. */
void tk_parallel_for(int64_t ntasks, tk_task_fn fn, void *arg);

#endif
