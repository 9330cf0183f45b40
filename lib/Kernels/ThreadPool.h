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

/* Threads to use for the current call (set by tessel_kernel_set_context);
 * 1 inside a job's task, where a kernel runs on the task's thread. */
int tk_num_threads(void);

/* Runs fn(arg, t) for t in [0, ntasks) on up to tk_num_threads() threads and
 * returns when all are done. Each thread starts at the front of its band
 * of the tasks (tk_parallel_for_bands with one task a unit), so that
 * consecutive tasks, which usually write neighbouring memory, stay on one
 * core. */
void tk_parallel_for(int64_t ntasks, tk_task_fn fn, void *arg);

/* Handing a job to another core and waiting for it costs a few cache
 * lines crossing between cores: about 0.25 us between the two cores of a
 * Zen 4 VM, 0.5-2 us between two Zen 5 cores on different CCDs. So a job
 * gets one thread per "minimum thread work" of multiply-adds at most. The
 * pool measures the handoff once per process, on the first call with more
 * than one thread, and takes TK_MACS_PER_HANDOFF_NS multiply-adds per ns
 * of it (each thread's share then takes a few handoffs' time), within
 * [TK_MIN_THREAD_WORK_LOW, TK_MIN_THREAD_WORK_HIGH]; TK_MIN_THREAD_WORK
 * until then. Fixed at 131072, the best value on the Zen 5 (MobileNetV3-S
 * at two threads: 131072 1.26-1.31 ms, 262144 1.34, 1M 1.49-1.51, 4M
 * 1.62-1.68; MnasNet flat up to 256K, slower above), a GRU's 1 x 256 x 768
 * step stayed on one thread on the Zen 4, where two ran the model 1.6x
 * faster. */
#define TK_MIN_THREAD_WORK 131072
#define TK_MACS_PER_HANDOFF_NS 128
#define TK_MIN_THREAD_WORK_LOW 16384
#define TK_MIN_THREAD_WORK_HIGH (1 << 21)
/* The work per thread in use: TESSEL_KERNELS_MIN_THREAD_WORK=N where set
 * (the kernel tests set 1, so that their small shapes run on every
 * thread), else the measured value, else TK_MIN_THREAD_WORK. */
int64_t tk_min_thread_work(void);
/* Threads worth using for a job of `work` multiply-adds (or as many simple
 * element operations): at most tk_num_threads(), at least 1. */
int tk_threads_for(int64_t work);
/* tk_parallel_for on at most `threads` threads (tk_threads_for's answer). */
void tk_parallel_for_on(int threads, int64_t ntasks, tk_task_fn fn,
                        void *arg);

/* Banded: fn(arg, t) for the `units * tasks_per_unit` tasks, thread b of
 * T taking band b, tasks [b units / T, (b + 1) units / T) * tasks_per_unit,
 * from its front, then helping the others. Thread 0 is the caller, so a
 * thread keeps the same band of every kernel's rows: the rows it wrote
 * are in its core's cache when the next kernel reads them. Handed out
 * one by one, a depthwise convolution's input rows were read by both
 * threads of two (MobileNetV2 1.36x faster on two threads, not 1.7x),
 * and between two Zen 5 cores on different CCDs every row crossed. */
void tk_parallel_for_bands(int threads, int64_t units, int64_t tasks_per_unit,
                           tk_task_fn fn, void *arg);

#endif
