/* ThreadPool.c - see ThreadPool.h. */
/* clock_gettime under -std=c11. */
#define _POSIX_C_SOURCE 199309L

#include "ThreadPool.h"

#include "tessel/Kernels/tessel_kernels.h"
#include "tessel/Runtime/tessel_abi.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#define TK_MAX_THREADS 64
/* Between kernel calls of one inference, workers (and the caller waiting
 * for them) spin this many pause iterations (tens of microseconds) before
 * sleeping: a model makes dozens of parallel calls per inference, and a
 * futex wake-up per call would cost more than the work it parallelizes. */
#define TK_SPIN 20000

static inline void tk_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static _Thread_local int tk_threads = 1;
/* Set while this thread runs a job's tasks: a kernel called from a task
 * runs on this thread alone (the caller holds job_lock, so a nested job
 * would wait on itself), and must not start the calibration, which
 * dispatches a job itself. */
static _Thread_local int tk_in_job;

static void maybe_calibrate(void);

void tessel_kernel_set_context(const void *invoke_context) {
  const tessel_invoke_context_t *ctx =
      (const tessel_invoke_context_t *)invoke_context;
  int n = 1;
  if (ctx && ctx->struct_size >= offsetof(tessel_invoke_context_t,
                                          num_threads) +
                                     sizeof(ctx->num_threads) &&
      ctx->num_threads > 0)
    n = ctx->num_threads > TK_MAX_THREADS ? TK_MAX_THREADS
                                          : (int)ctx->num_threads;
  tk_threads = n;
  if (n > 1 && !tk_in_job)
    maybe_calibrate();
}

int tk_num_threads(void) { return tk_in_job ? 1 : tk_threads; }

/* One job at a time: callers serialize on job_lock (two threads invoking the
 * same artifact concurrently share the workers, one job after the other).
 *
 * Handing out a job and waiting for it take no lock while the threads
 * spin: the caller publishes the job and bumps `generation`; a worker
 * that sees it claims one of the job's `seats`, takes tasks from `next`
 * and counts itself in `finished`. Each sits on its own cache line, so a
 * job costs a few cache-line transfers between cores. (A mutex and
 * condition variables per job, as before, cost about 3 us a call between
 * two Zen 5 cores.) When the caller has run out of tasks it takes back
 * the seats nobody claimed, so it never waits for a worker that was
 * asleep and only wakes up after the work is done (tens of microseconds
 * in a VM). The mutex and the condition variables are only for threads
 * that stopped spinning and sleep. */
#define TK_LINE 64
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int started;           /* worker threads running (under job_lock) */
static pthread_t workers[TK_MAX_THREADS];
static int shutting_down;     /* set when the artifact is unloaded */
/* The job, written by the caller before it opens the seats (release),
 * read by a worker after it claims one (acquire). */
static struct {
  uint64_t generation;
  tk_task_fn fn;
  void *arg;
  int64_t ntasks;
  int nbands; /* 0: tasks from `next` in order; else from `band` */
} job __attribute__((aligned(TK_LINE)));
/* Banded jobs: band b's tasks are [band[b].next, band[b].end); seat b
 * takes them from the front, then helps the other bands. */
static struct {
  int64_t next, end;
} band[TK_MAX_THREADS] __attribute__((aligned(TK_LINE)));
/* The job's generation (high 32 bits) and its unclaimed seats. */
static uint64_t seats __attribute__((aligned(TK_LINE)));
static int64_t next __attribute__((aligned(TK_LINE))); /* next task index */
static int finished __attribute__((aligned(TK_LINE))); /* workers done */
/* Sleeping threads, counted under `lock`: the other side only locks and
 * signals when there are any. */
static int sleeping_workers __attribute__((aligned(TK_LINE)));
static int caller_sleeping;

static void run_band(tk_task_fn fn, void *arg, int b) {
  for (;;) {
    int64_t t = __atomic_fetch_add(&band[b].next, 1, __ATOMIC_RELAXED);
    if (t >= band[b].end)
      return;
    fn(arg, t);
  }
}

/* The tasks of the job, as the thread in `seat` (the caller is 0). */
static void run_tasks(tk_task_fn fn, void *arg, int64_t ntasks, int nbands,
                      int seat) {
  if (nbands) {
    for (int i = 0; i < nbands; ++i)
      run_band(fn, arg, (seat + i) % nbands);
    return;
  }
  for (;;) {
    int64_t t = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
    if (t >= ntasks)
      return;
    fn(arg, t);
  }
}

/* Takes one seat of job `gen`: its number (1 ... the job's helpers), or 0
 * when they are gone (or the job is). */
static int claim_seat(uint64_t gen) {
  uint64_t s = __atomic_load_n(&seats, __ATOMIC_ACQUIRE);
  while ((s >> 32) == (gen & 0xffffffffu) && (s & 0xffffffffu) > 0)
    if (__atomic_compare_exchange_n(&seats, &s, s - 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      return (int)(s & 0xffffffffu);
  return 0;
}

static void *worker(void *p) {
  (void)p;
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = seen;
    for (int spin = 0; spin < TK_SPIN && gen == seen &&
                       !__atomic_load_n(&shutting_down, __ATOMIC_ACQUIRE);
         ++spin) {
      tk_pause();
      gen = __atomic_load_n(&job.generation, __ATOMIC_ACQUIRE);
    }
    if (gen == seen) {
      /* Sleep. The count and the caller's bump are both sequentially
       * consistent: either the caller sees this thread counted (and
       * signals under the lock) or this thread sees the new generation. */
      pthread_mutex_lock(&lock);
      __atomic_add_fetch(&sleeping_workers, 1, __ATOMIC_SEQ_CST);
      while ((gen = __atomic_load_n(&job.generation, __ATOMIC_SEQ_CST)) ==
                 seen &&
             !__atomic_load_n(&shutting_down, __ATOMIC_SEQ_CST))
        pthread_cond_wait(&wake, &lock);
      __atomic_sub_fetch(&sleeping_workers, 1, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&lock);
    }
    if (__atomic_load_n(&shutting_down, __ATOMIC_ACQUIRE))
      return NULL;
    seen = gen;
    const int seat = claim_seat(gen);
    if (!seat)
      continue; /* not needed, or too late: the caller did the work */
    tk_in_job = 1;
    run_tasks(job.fn, job.arg, job.ntasks, job.nbands, seat);
    tk_in_job = 0;
    __atomic_add_fetch(&finished, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&caller_sleeping, __ATOMIC_SEQ_CST)) {
      pthread_mutex_lock(&lock);
      pthread_cond_signal(&done);
      pthread_mutex_unlock(&lock);
    }
  }
}

/* The workers run code of this artifact: stop and join them before the
 * artifact is unloaded (dlclose) or the process exits, or they would run
 * into unmapped code. */
__attribute__((destructor)) static void tk_shutdown(void) {
  pthread_mutex_lock(&lock);
  int n = started;
  __atomic_store_n(&shutting_down, 1, __ATOMIC_SEQ_CST);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n; ++i)
    pthread_join(workers[i], NULL);
}

/* The work per thread measured by calibrate_min_thread_work (0: not yet,
 * TK_MIN_THREAD_WORK meanwhile). */
static int64_t measured_work;

/* TESSEL_KERNELS_MIN_THREAD_WORK=N, or 0 where it is not set. */
static int64_t min_thread_work_override(void) {
  static int64_t v = -1;
  int64_t w = __atomic_load_n(&v, __ATOMIC_RELAXED);
  if (w < 0) {
    const char *e = getenv("TESSEL_KERNELS_MIN_THREAD_WORK");
    w = e && atoll(e) > 0 ? atoll(e) : 0;
    __atomic_store_n(&v, w, __ATOMIC_RELAXED);
  }
  return w;
}

int64_t tk_min_thread_work(void) {
  int64_t w = min_thread_work_override();
  if (w > 0)
    return w;
  w = __atomic_load_n(&measured_work, __ATOMIC_RELAXED);
  return w > 0 ? w : TK_MIN_THREAD_WORK;
}

int tk_threads_for(int64_t work) {
  const int64_t fit = work / tk_min_thread_work();
  const int n = tk_num_threads();
  return fit < 1 ? 1 : fit < n ? (int)fit : n;
}

void tk_parallel_for(int64_t ntasks, tk_task_fn fn, void *arg) {
  tk_parallel_for_on(tk_num_threads(), ntasks, fn, arg);
}

/* Runs the job on `threads` (2 or more) threads; with `units`, in bands
 * of units * tasks_per_unit tasks, one per thread. */
static void dispatch(int threads, int64_t ntasks, tk_task_fn fn, void *arg,
                     int64_t units, int64_t tasks_per_unit) {
  pthread_mutex_lock(&job_lock);
  while (started < threads - 1) {
    if (pthread_create(&workers[started], NULL, worker, NULL) != 0)
      break; /* run with the workers we have */
    ++started;
  }
  int helpers = threads - 1 < started ? threads - 1 : started;
  /* Every worker of the previous job has finished, and none reads these
   * fields before it claims a seat of this one. */
  const uint64_t gen = job.generation + 1;
  job.fn = fn;
  job.arg = arg;
  job.ntasks = ntasks;
  /* Bands for the threads that run (a worker whose pool could not grow
   * leaves its band to the others). */
  job.nbands = units ? helpers + 1 : 0;
  for (int b = 0; b < job.nbands; ++b) {
    __atomic_store_n(&band[b].next, b * units / job.nbands * tasks_per_unit,
                     __ATOMIC_RELAXED);
    band[b].end = (b + 1) * units / job.nbands * tasks_per_unit;
  }
  __atomic_store_n(&next, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&finished, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&seats, (gen << 32) | (uint64_t)helpers, __ATOMIC_RELEASE);
  __atomic_store_n(&job.generation, gen, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&sleeping_workers, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&lock);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&lock);
  }

  tk_in_job = 1;
  run_tasks(fn, arg, ntasks, job.nbands, 0);
  tk_in_job = 0;

  /* Take back the seats nobody claimed; wait for those who did. */
  uint64_t s = __atomic_load_n(&seats, __ATOMIC_ACQUIRE);
  while (!__atomic_compare_exchange_n(&seats, &s, s & ~0xffffffffull, 0,
                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
  const int claimed = helpers - (int)(s & 0xffffffffu);
  for (int spin = 0; spin < TK_SPIN &&
                     __atomic_load_n(&finished, __ATOMIC_ACQUIRE) < claimed;
       ++spin)
    tk_pause();
  if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < claimed) {
    pthread_mutex_lock(&lock);
    __atomic_store_n(&caller_sleeping, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&finished, __ATOMIC_SEQ_CST) < claimed)
      pthread_cond_wait(&done, &lock);
    __atomic_store_n(&caller_sleeping, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&lock);
  }
  pthread_mutex_unlock(&job_lock);
}

void tk_parallel_for_on(int threads, int64_t ntasks, tk_task_fn fn,
                        void *arg) {
  if (threads > tk_num_threads())
    threads = tk_num_threads();
  if (threads > ntasks)
    threads = (int)ntasks;
  if (threads <= 1) {
    for (int64_t t = 0; t < ntasks; ++t)
      fn(arg, t);
    return;
  }
  /* In bands too, each thread from the front of its own: in the order of
   * one shared counter, the tasks of neighbouring rows alternated between
   * the threads, and whatever read them next (the thread's band of the
   * next kernel) found half of them in the other core's cache. */
  dispatch(threads, ntasks, fn, arg, ntasks, 1);
}

void tk_parallel_for_bands(int threads, int64_t units, int64_t tasks_per_unit,
                           tk_task_fn fn, void *arg) {
  if (threads > tk_num_threads())
    threads = tk_num_threads();
  if (threads > units)
    threads = (int)units;
  const int64_t ntasks = units * tasks_per_unit;
  if (threads <= 1) {
    for (int64_t t = 0; t < ntasks; ++t)
      fn(arg, t);
    return;
  }
  dispatch(threads, ntasks, fn, arg, units, tasks_per_unit);
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#define TK_CALIBRATION_TASK_NS 2000
#define TK_CALIBRATION_JOBS 32
#define TK_CALIBRATION_BUDGET_NS 10000000
#define TK_CALIBRATION_TRIES 3
#define TK_CALIBRATION_CALL 3

/* A calibration task: busy for TK_CALIBRATION_TASK_NS. */
static void busy_task(void *arg, int64_t t) {
  (void)arg;
  (void)t;
  const int64_t end = now_ns() + TK_CALIBRATION_TASK_NS;
  while (now_ns() < end)
    tk_pause();
}

static int compare_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* The time a job of one busy task per thread takes beyond one task's:
 * handing out the tasks and waiting for them (a whole task's time, or
 * more, when the workers come too late and the caller runs them all). */
static int64_t job_overhead(int threads) {
  const int64_t t0 = now_ns();
  dispatch(threads, threads, busy_task, NULL, 0, 0);
  const int64_t spent = now_ns() - t0 - TK_CALIBRATION_TASK_NS;
  return spent > 0 ? spent : 0;
}

/* Measures the handoff: the median overhead of TK_CALIBRATION_JOBS jobs
 * in a row in which the workers joined every job. A new worker may first
 * share the caller's core until the scheduler moves it (milliseconds in a
 * VM): the pool tries for up to TK_CALIBRATION_BUDGET_NS, and where the
 * workers never settle keeps TK_MIN_THREAD_WORK and tries again on a later
 * call, TK_CALIBRATION_TRIES times at most. About 0.1 ms once the workers
 * run. */
static void calibrate_min_thread_work(void) {
  const int threads = tk_threads;
  const int64_t give_up = now_ns() + TK_CALIBRATION_BUDGET_NS;
  int64_t overhead[TK_CALIBRATION_JOBS];
  int n = 0;
  while (n < TK_CALIBRATION_JOBS) {
    if (now_ns() > give_up)
      return;
    const int64_t o = job_overhead(threads);
    /* A job the caller ran alone starts the row again. */
    if (o > TK_CALIBRATION_TASK_NS / 2) {
      n = 0;
      continue;
    }
    overhead[n++] = o;
  }
  qsort(overhead, TK_CALIBRATION_JOBS, sizeof overhead[0], compare_i64);
  int64_t w = overhead[TK_CALIBRATION_JOBS / 2] * TK_MACS_PER_HANDOFF_NS;
  w = w < TK_MIN_THREAD_WORK_LOW ? TK_MIN_THREAD_WORK_LOW
      : w > TK_MIN_THREAD_WORK_HIGH ? TK_MIN_THREAD_WORK_HIGH
                                    : w;
  __atomic_store_n(&measured_work, w, __ATOMIC_RELAXED);
}

/* On the TK_CALIBRATION_CALL-th call with more than one thread and after,
 * until it has measured: by then the workers have run the earlier calls'
 * jobs and settled on their cores, and a process that runs a model once
 * pays nothing. Calls of several threads at once take turns (the first
 * one measures). */
static void maybe_calibrate(void) {
  static pthread_mutex_t calibration_lock = PTHREAD_MUTEX_INITIALIZER;
  static int tries, calls;
  if (__atomic_load_n(&measured_work, __ATOMIC_RELAXED) > 0 ||
      __atomic_load_n(&tries, __ATOMIC_RELAXED) >= TK_CALIBRATION_TRIES ||
      min_thread_work_override() > 0 ||
      __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) < TK_CALIBRATION_CALL)
    return;
  pthread_mutex_lock(&calibration_lock);
  if (__atomic_load_n(&measured_work, __ATOMIC_RELAXED) == 0 &&
      tries < TK_CALIBRATION_TRIES) {
    __atomic_store_n(&tries, tries + 1, __ATOMIC_RELAXED);
    calibrate_min_thread_work();
  }
  pthread_mutex_unlock(&calibration_lock);
}

/* Outlined loop nests: chunks of their first parallel dimension, which
 * stay on the thread whose band of a kernel's rows they continue. */
void tessel_kernel_parallel_for(int64_t ntasks,
                                void (*fn)(void *arg, int64_t task),
                                void *arg) {
  tk_parallel_for_bands(tk_threads, ntasks, 1, fn, arg);
}
