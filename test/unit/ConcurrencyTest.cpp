//===- ConcurrencyTest.cpp - one artifact from many threads, lifetimes ----===//
//
// The runtime's objects are shared across threads the way servers use
// them: one loaded function invoked from many threads at once, compositions
// loaded and unloaded in a loop while others run, and a component swapped
// (a new composition with another provider) while the old one is in use.
// Run under ThreadSanitizer by `TESSEL_SANITIZE=thread
// scripts/test_sanitizers.sh` and under ASan/LSan in every CI run.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <atomic>
#include <thread>
#include <vector>

using namespace tessel;
using namespace tessel::test;
using rt::Artifact;
using rt::Composition;
using rt::Tensor;

namespace {



TEST(Concurrency, OneArtifactFromManyThreads) {
  Artifact a = Artifact::load(FAKE_SINGLE);
  rt::Function f = a.function("main");
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<Tensor> in;
        in.push_back(f32({2, 3}, {float(t), 1, 2, 3, 4, float(i)}));
        in.push_back(f32({2, 3}, {1, 1, 1, 1, 1, 1}));
        std::vector<Tensor> out = f.invoke(in);
        const float *sum = out.at(0).data<float>();
        if (sum[0] != float(t) + 1 || sum[5] != float(i) + 1)
          ++wrong;
      }
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, CompositionsLoadedAndUnloadedInALoop) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        bool alt = (t + i) % 2;
        Composition c = Composition::link(
            {LINKED_IMPORTER, alt ? LINKED_PROVIDER_ALT : LINKED_PROVIDER});
        std::vector<float> y = runTwice(c.function("twice"), 1);
        float k = alt ? 3 : 2;
        if (y != std::vector<float>{k * 1 + 1, k * 2 + 1, k * 3 + 1})
          ++wrong;
      }
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Concurrency, HotSwapWhileAnotherThreadRuns) {
  // A server keeps serving the old composition while a new one with the
  // retrained provider is linked; then it switches. Each keeps its own
  // import table, so neither sees the other's provider.
  auto current = std::make_shared<Composition>(
      Composition::link({LINKED_IMPORTER, LINKED_PROVIDER}));
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0}, calls{0};
  std::thread server([&] {
    std::shared_ptr<Composition> mine = std::atomic_load(&current);
    while (!stop.load()) {
      std::vector<float> y = runTwice(mine->function("twice"), 1);
      if (y != std::vector<float>{3, 5, 7})
        ++wrong;
      ++calls;
    }
  });
  for (int i = 0; i < 20; ++i) {
    Composition swapped = Composition::link({LINKED_IMPORTER, LINKED_PROVIDER_ALT});
    EXPECT_EQ(runTwice(swapped.function("twice"), 1),
              (std::vector<float>{4, 7, 10}));
  }
  while (calls.load() < 50)
    std::this_thread::yield();
  stop = true;
  server.join();
  EXPECT_EQ(wrong.load(), 0);
}

} // namespace
