// The threads of one benchmark run: the --threads workers of its main role and, for
// *whilewriting, the paced writer. Three steps, one function each: start the roles behind a start
// barrier, sample their counters once per interval until the main role is done, then merge each
// role's per-thread counters into its RoleResult. Prints nothing: progress goes to a callback.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kv/engine.h"
#include "profile/profiler.h"
#include "report/reporter.h"
#include "result/result.h"
#include "stats/perf_counters.h"
#include "workload/benchmark.h"

namespace kvbench {

// How the runner stops a benchmark: `stop` ends every worker's loop; `cv` (with `mu`) wakes the
// sampler when a main worker finishes or a signal arrives.
struct StopSignal {
  std::atomic<bool> stop{false};
  std::atomic<int> signal{0};  // the first SIGINT/SIGTERM received; 0 = none
  std::mutex mu;
  std::condition_variable cv;
};

class BenchmarkThreads {
 public:
  BenchmarkThreads(const WorkloadOptions& options, const KeyFormat& keys, const ValueSource& values,
                   StopSignal* stop)
      : options_(options), keys_(keys), values_(values), stop_(stop) {}
  ~BenchmarkThreads();

  // Opens a session and makes a worker for every thread of every role of `spec`, and adds an
  // empty RoleResult per role to `result`. `seed_stream` makes the seeds unique per run;
  // `ack_log` is the fill's or verifyacked's --ack_file (nullptr without one).
  Status Prepare(const BenchmarkSpec& spec, int seed_stream, Engine* engine, AckLog* ack_log,
                 BenchmarkResult* result);
  // Pins the threads to `cpus` (empty = not pinned) and counts `counters` in each; before Prepare.
  // The main role's threads take the CPUs round-robin; the paced writer the next one, which is
  // its own when the list has more CPUs than --threads.
  // `profile`: --profile's plan; when enabled, each role's threads are sampled during their loop.
  void Configure(const std::vector<int>& cpus, const PerfPlan& counters,
                 const ProfilePlan& profile) {
    cpus_ = cpus;
    perf_ = counters;
    profile_ = profile;
  }
  // Starts every thread; they begin their loops together, when the clock and the deadline
  // (--duration) are set.
  void Start();
  // Samples each role's counters into its interval series every `interval` seconds (0 = never)
  // until the main role's threads are done or a signal arrives, reporting progress.
  // `main_total`: the main role's op count, for "% of ops" (0 when --duration decides).
  void Sample(double interval, uint64_t main_total, const std::string& benchmark,
              const std::function<void(const ProgressUpdate&)>& progress, BenchmarkResult* result);
  // Stops and joins every thread, and merges each role's threads into its RoleResult. The first
  // worker error, if any.
  Status Finish(double interval, BenchmarkResult* result);
  // --profile: the stopped profiler, to symbolize once the run's costs are measured; nullptr when
  // not profiling. After Finish.
  std::unique_ptr<Profiler> TakeProfiler() { return std::move(profiler_); }

 private:
  struct RoleThreads {
    std::string name;  // "reader", "writer"
    bool background;
    WorkFn fn;
    std::vector<std::unique_ptr<Worker>> workers;
    std::vector<uint64_t> end_ticks;
    std::vector<uint64_t> cpu_ns;   // each thread's own CPU time over its loop
    std::vector<int64_t> wait_ns;   // each thread's wait for a CPU over its loop; -1 = unknown
    std::vector<int> cpu;           // each thread's --cpu_affinity CPU; -1 = not pinned
    std::vector<PerfReading> perf;  // each thread's counters over its loop
    uint64_t last_ops = 0, last_bytes = 0;
    std::unique_ptr<RateLimiter> limiter;
  };

  void RunWorker(RoleThreads* role, size_t i);
  void SampleOnce(uint64_t now_ns, uint64_t main_total, ProgressUpdate* progress,
                  BenchmarkResult* result);
  Status MergeRole(const RoleThreads& role, double interval, uint64_t* main_end,
                   RoleResult* out) const;

  std::vector<int> cpus_;
  PerfPlan perf_;
  ProfilePlan profile_;
  std::unique_ptr<Profiler> profiler_;  // --profile, from Start to Finish
  const WorkloadOptions& options_;
  const KeyFormat& keys_;
  const ValueSource& values_;
  StopSignal* const stop_;
  std::vector<RoleThreads> roles_;
  double writer_target_ = 0;         // the paced writer's bytes/s (0 = unpaced)
  std::shared_ptr<StepState> step_;  // spec.setup's, shared by the workers; may be null
  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::thread> threads_;
  // The start barrier: threads wait until every thread exists and the clock has started.
  std::mutex start_mu_;
  std::condition_variable start_cv_;
  bool started_ = false;
  int main_done_ = 0;  // main-role threads finished; guarded by stop_->mu
  uint64_t start_ticks_ = 0, start_ns_ = 0, last_sample_ns_ = 0;
};

}  // namespace kvbench
