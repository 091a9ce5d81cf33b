// Workers as the runner makes them, minus timing and reporting: shared by the workload and
// Insert Benchmark tests.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "kv/engine.h"
#include "workload/workload.h"

namespace kvbench {
namespace test {

// `threads` workers on `engine`, each with its own session, seeded seed_base + index, sharing one
// key format, value source and stop flag. `options` must outlive the object.
class TestWorkers {
 public:
  TestWorkers(Engine* engine, const WorkloadOptions& options, int threads, uint64_t seed_base,
              uint64_t deadline_ticks = 0)
      : keys_(options.key_size),
        values_(options.seed, options.compression_ratio, options.value_size),
        sessions_(threads) {
    for (int i = 0; i < threads; ++i) {
      EXPECT_TRUE(engine->NewSession(&sessions_[i]).ok());
      workers_.push_back(std::make_unique<Worker>(i, threads, seed_base + i, sessions_[i].get(),
                                                  options, keys_, values_, &stop_, deadline_ticks,
                                                  nullptr));
    }
  }

  const std::vector<std::unique_ptr<Worker>>& workers() const { return workers_; }

  // Runs `fn(worker)` on a thread of its own for every worker and waits for them all.
  template <typename Fn>
  void Run(const Fn& fn) {
    std::vector<std::thread> ts;
    for (auto& w : workers_) ts.emplace_back([&w, &fn] { fn(*w); });
    for (auto& t : ts) t.join();
  }

 private:
  KeyFormat keys_;
  ValueSource values_;
  std::atomic<bool> stop_{false};
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace test
}  // namespace kvbench
