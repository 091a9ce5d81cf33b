// The CPU profile of one benchmark run, per role. One sampling event per thread
// (ThreadSampler), not one for the process: the kernel cannot give an inherited per-task event a
// ring buffer, a system-wide per-CPU event needs CAP_PERFMON and samples every process, and a
// per-thread event names its role by construction. kvbench's workers open their own before the
// start barrier and turn it on and off around their measured loop; every other thread of the
// process that is running (the engine's flush, compaction, eviction and checkpoint threads) is
// found in /proc/self/task by the collector, a thread of the profiler's own that drains the
// buffers every 20 ms, and sampled as "background". The runner's thread and the collector are
// not sampled. Stacks are kept as raw addresses until Finish, which symbolizes them after the
// measured loop. docs/profile.md.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "profile/profile.h"
#include "profile/thread_sampler.h"

namespace kvbench {

class Profiler {
 public:
  // `workers`: how many threads will call Attach. REQUIRES: plan.enabled.
  Profiler(const ProfilePlan& plan, int workers);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // On a worker thread, before its measured loop: opens its sampler (disabled), counted as
  // `role`. nullptr if it could not be opened (the reason goes into the result). Thread-safe.
  ThreadSampler* Attach(const std::string& role);
  // Starts the collector; it samples the background threads once every worker has attached.
  void Start();
  // Stops sampling and the collector, and drains what is left. Cheap: call it when the loops end.
  void Stop();
  // Symbolizes what was sampled: the profile, roles in the order they attached, "background"
  // last. Reads files and allocates: call it outside what is measured. REQUIRES: Stop() called.
  ProfileResult Result();
  // Why some worker's sampler could not be opened ("reader: ... (EMFILE)"); "" when all were.
  // When none could, Result() says so as `unavailable` instead.
  std::string missed() const { return unavailable_; }

 private:
  struct Role {
    std::string name;
    int threads = 0;
    uint64_t samples = 0;
    std::unordered_map<std::string, uint64_t> stacks;  // raw addresses (bytes) -> samples
  };
  struct Sampled {
    std::unique_ptr<ThreadSampler> sampler;
    size_t role;
  };

  void Collect();
  void FindBackgroundThreads();
  void DrainAll();
  size_t RoleIndex(const std::string& name);  // REQUIRES: mu_ held

  const ProfilePlan plan_;
  const int workers_;
  std::mutex mu_;  // guards everything below but the collector's own state
  std::condition_variable cv_;
  std::vector<Sampled> sampled_;
  std::vector<Role> roles_;
  std::string unavailable_;        // a thread's sampler that could not be opened
  int attached_ = 0, opened_ = 0;  // workers that attached; those whose sampler opened
  bool stopping_ = false;
  std::thread collector_;
  pid_t collector_tid_ = 0;
  std::set<pid_t> refused_;  // the collector's: threads that could not be opened (exited)
  double collector_cpu_seconds_ = 0;
  uint64_t start_ns_ = 0, stop_ns_ = 0;
};

}  // namespace kvbench
