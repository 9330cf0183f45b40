/* ThreadPool.c - see ThreadPool.h. */
#include "ThreadPool.h"

#include "tessel/Kernels/tessel_kernels.h"
#include "tessel/Runtime/tessel_abi.h"

#include <pthread.h>
#include <stddef.h>

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
}

int tk_num_threads(void) { return tk_threads; }

/* One job at a time: callers serialize on job_lock (two threads invoking the
 * same artifact concurrently share the workers, one job after the other). */
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int started;           /* worker threads running */
static pthread_t workers[TK_MAX_THREADS];
static int shutting_down;     /* set when the artifact is unloaded */
static uint64_t generation;   /* bumped per job (atomic reads while spinning) */
static int wanted;            /* workers that should join the current job */
static int busy;              /* workers still inside the current job */
static tk_task_fn job_fn;
static void *job_arg;
static int64_t job_tasks;
static int64_t job_next;      /* next task index (atomic) */

static void run_tasks(tk_task_fn fn, void *arg, int64_t ntasks) {
  for (;;) {
    int64_t t = __atomic_fetch_add(&job_next, 1, __ATOMIC_RELAXED);
    if (t >= ntasks)
      return;
    fn(arg, t);
  }
}

static void *worker(void *p) {
  int id = (int)(intptr_t)p; /* 1-based; the caller is thread 0 */
  uint64_t seen = 0;
  for (;;) {
    for (int spin = 0; spin < TK_SPIN &&
                       __atomic_load_n(&generation, __ATOMIC_ACQUIRE) == seen &&
                       !__atomic_load_n(&shutting_down, __ATOMIC_ACQUIRE);
         ++spin)
      tk_pause();
    pthread_mutex_lock(&lock);
    while (generation == seen && !shutting_down)
      pthread_cond_wait(&wake, &lock);
    if (shutting_down) {
      pthread_mutex_unlock(&lock);
      return NULL;
    }
    seen = generation;
    if (id > wanted) { /* not needed for this job */
      pthread_mutex_unlock(&lock);
      continue;
    }
    tk_task_fn fn = job_fn;
    void *arg = job_arg;
    int64_t ntasks = job_tasks;
    pthread_mutex_unlock(&lock);
    run_tasks(fn, arg, ntasks);
    pthread_mutex_lock(&lock);
    if (__atomic_sub_fetch(&busy, 1, __ATOMIC_RELEASE) == 0)
      pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
  }
}

/* The workers run code of this artifact: stop and join them before the
 * artifact is unloaded (dlclose) or the process exits, or they would run
 * into unmapped code. */
__attribute__((destructor)) static void tk_shutdown(void) {
  pthread_mutex_lock(&lock);
  int n = started;
  __atomic_store_n(&shutting_down, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
  for (int i = 0; i < n; ++i)
    pthread_join(workers[i], NULL);
}

void tk_parallel_for(int64_t ntasks, tk_task_fn fn, void *arg) {
  int threads = tk_threads;
  if (threads > ntasks)
    threads = (int)ntasks;
  if (threads <= 1) {
    for (int64_t t = 0; t < ntasks; ++t)
      fn(arg, t);
    return;
  }
  pthread_mutex_lock(&job_lock);
  pthread_mutex_lock(&lock);
  while (started < threads - 1) {
    if (pthread_create(&workers[started], NULL, worker,
                       (void *)(intptr_t)(started + 1)) != 0)
      break; /* run with the workers we have */
    ++started;
  }
  int helpers = threads - 1 < started ? threads - 1 : started;
  job_fn = fn;
  job_arg = arg;
  job_tasks = ntasks;
  __atomic_store_n(&job_next, 0, __ATOMIC_RELAXED);
  wanted = helpers;
  busy = helpers;
  __atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);

  run_tasks(fn, arg, ntasks);

  for (int spin = 0;
       spin < TK_SPIN && __atomic_load_n(&busy, __ATOMIC_ACQUIRE) > 0; ++spin)
    tk_pause();
  pthread_mutex_lock(&lock);
  while (busy > 0)
    pthread_cond_wait(&done, &lock);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&job_lock);
}

typedef struct {
  tk_task_fn fn;
  void *arg;
  int64_t n, runs;
} runs_job_t;

static void run_run(void *arg, int64_t run) {
  const runs_job_t *r = (const runs_job_t *)arg;
  const int64_t begin = run * r->n / r->runs, end = (run + 1) * r->n / r->runs;
  for (int64_t i = begin; i < end; ++i)
    r->fn(r->arg, i);
}

void tk_parallel_for_runs(int64_t n, tk_task_fn fn, void *arg) {
  /* One run per thread, its share of the rows in one piece: each thread
   * keeps reading the rows next to those it read (and its core's L2 the
   * neighbouring rows). Four runs per thread, dealt out as they came,
   * balanced border rows better but ran 4-5% slower at two threads on
   * depthwise-heavy nets (MobileNetV3-L 3.80-3.90 -> 3.58-3.73 ms,
   * MnasNet 4.29-4.33 -> 4.07-4.15 ms, EfficientNet-B1 unchanged). */
  const int64_t runs = (int64_t)tk_threads < n ? (int64_t)tk_threads : n;
  if (runs <= 1 || tk_threads <= 1) {
    for (int64_t i = 0; i < n; ++i)
      fn(arg, i);
    return;
  }
  runs_job_t r = {fn, arg, n, runs};
  tk_parallel_for(runs, run_run, &r);
}

void tessel_kernel_parallel_for(int64_t ntasks,
                                void (*fn)(void *arg, int64_t task),
                                void *arg) {
  tk_parallel_for(ntasks, fn, arg);
}
