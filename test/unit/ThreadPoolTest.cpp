//===- ThreadPoolTest.cpp - the kernel pool's measured work per thread ----===//
//
// The pool measures once per process what handing a job to another thread
// costs, and sizes the smallest job worth a second thread from it
// (ThreadPool.h); and it runs every task of a job once. Each case is its
// own process (ctest runs the filters separately), since the value is per
// process.
//
//===----------------------------------------------------------------------===//
#include "tessel/Runtime/tessel_abi.h"

extern "C" {
#include "ThreadPool.h"
void tessel_kernel_set_context(const void *invoke_context);
}

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <vector>

namespace {

void call(uint32_t threads) {
  tessel_invoke_context_t ctx{sizeof(tessel_invoke_context_t), threads};
  tessel_kernel_set_context(&ctx);
}

void noop(void *, int64_t) {}

// What a model's calls do between two entries: jobs on every thread.
void runJobs() {
  for (int i = 0; i < 200; ++i)
    tk_parallel_for(64, noop, nullptr);
}

TEST(ThreadPool, OneThreadCallsKeepTheDefault) {
  for (int i = 0; i < 10; ++i)
    call(1);
  EXPECT_EQ(tk_min_thread_work(), TK_MIN_THREAD_WORK);
  EXPECT_EQ(tk_threads_for(int64_t(1) << 40), 1);
}

TEST(ThreadPool, MeasuredOnTheThirdMultiThreadCall) {
  call(2);
  runJobs();
  call(2);
  runJobs();
  // Not yet: a process that runs a model once or twice pays nothing.
  EXPECT_EQ(tk_min_thread_work(), TK_MIN_THREAD_WORK);
  for (int i = 0; i < 8; ++i) {
    call(2);
    runJobs();
  }
  int64_t w = tk_min_thread_work();
  std::printf("measured work per thread: %lld multiply-adds\n", (long long)w);
  EXPECT_GE(w, TK_MIN_THREAD_WORK_LOW);
  EXPECT_LE(w, TK_MIN_THREAD_WORK_HIGH);
  call(2);
  EXPECT_EQ(tk_threads_for(w - 1), 1);
  EXPECT_EQ(tk_threads_for(2 * w), 2);
  EXPECT_EQ(tk_threads_for(int64_t(1) << 40), 2);
}

TEST(ThreadPool, EnvironmentOverridesTheMeasurement) {
  ASSERT_EQ(setenv("TESSEL_KERNELS_MIN_THREAD_WORK", "5000", 1), 0);
  for (int i = 0; i < 6; ++i) {
    call(2);
    runJobs();
  }
  EXPECT_EQ(tk_min_thread_work(), 5000);
  EXPECT_EQ(tk_threads_for(9999), 1);
  EXPECT_EQ(tk_threads_for(10000), 2);
}

// Each thread takes a band of the tasks from its front, then helps the
// others: every task runs exactly once, whatever the count against the
// threads (fewer tasks than threads, uneven bands, many tasks).
std::vector<std::atomic<int>> *ran;
void count(void *, int64_t t) { (*ran)[t].fetch_add(1); }

TEST(ThreadPool, EveryTaskOnceInBands) {
  for (uint32_t threads : {2u, 3u, 5u})
    for (int64_t ntasks : {1, 2, 3, 7, 64, 1001}) {
      call(threads);
      std::vector<std::atomic<int>> counts(ntasks);
      ran = &counts;
      tk_parallel_for_on(int(threads), ntasks, count, nullptr);
      for (int64_t t = 0; t < ntasks; ++t)
        ASSERT_EQ(counts[t].load(), 1)
            << "task " << t << " of " << ntasks << " on " << threads;
      call(1);
    }
}

// A kernel called from a task (Winograd's bands run the GEMM driver) runs
// on the task's thread: one thread inside, and a nested job neither waits
// on the caller's lock nor loses a task.
std::atomic<int> nestedThreads{0}, nestedMissed{0};
void countInto(void *arg, int64_t t) {
  (*static_cast<std::vector<std::atomic<int>> *>(arg))[t].fetch_add(1);
}
void nested(void *, int64_t) {
  nestedThreads.fetch_add(tk_num_threads());
  std::vector<std::atomic<int>> counts(10);
  tk_parallel_for_on(2, 10, countInto, &counts);
  for (auto &c : counts)
    if (c.load() != 1)
      nestedMissed.fetch_add(1);
}

TEST(ThreadPool, NestedJobsRunOnTheTasksThread) {
  call(2);
  EXPECT_EQ(tk_num_threads(), 2);
  tk_parallel_for_on(2, 4, nested, nullptr);
  EXPECT_EQ(nestedThreads.load(), 4); // 4 tasks, each saw one thread
  EXPECT_EQ(nestedMissed.load(), 0);
  call(1);
}

} // namespace
