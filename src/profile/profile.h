// --profile: what is asked for, and what a profiled benchmark records. The folded stacks of each
// role (its own threads: reader, writer; the engine's: background), symbolized, as flamegraph.pl
// reads them: "outermost;...;innermost" and the number of samples that ended in that stack. Each
// sample stands for `period_ns` of one thread's CPU time (the software cpu-clock event), so a
// stack's CPU time is count x period_ns. The sampler is profile/profiler.h; docs/profile.md says
// how to read the result.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

// The default rate: 499 Hz of CPU time per thread (docs/profile.md measures its cost: a sample
// costs ~20 us on a KVM guest, so 1 kHz would cost ~2%).
constexpr int kDefaultProfileHz = 499;

struct ProfilePlan {
  bool enabled = false;        // --profile, and it could be opened (unavailable is "")
  bool requested = false;      // --profile was given
  int hz = kDefaultProfileHz;  // --profile_hz: samples per second of a thread's CPU time
  bool kernel = true;          // kernel frames sampled (root or perf_event_paranoid <= 1)
  std::string unavailable;     // why --profile runs unprofiled: "perf_event_paranoid=3 ..."

  uint64_t period_ns() const { return 1000000000ull / static_cast<uint64_t>(hz); }
  // "cpu-clock at 499 Hz of each thread's CPU time, frame-pointer stacks, ..." or why not.
  std::string Describe() const;
};

// Opens one sampling event (and its ring buffer) on the calling thread: whether this process may
// profile (permissions, seccomp, a kernel without perf events) and whether kernel frames can be
// had. Sets plan->enabled, plan->kernel and plan->unavailable. REQUIRES: plan->requested.
void ProbeProfiler(ProfilePlan* plan);

struct FoldedStack {
  std::string frames;  // "start_thread;...;kvbench::MemorySession::Get(...)"; kernel frames end
                       // in "_[k]"; a frame no symbol covers is "libfoo.so+0x1234"
  uint64_t count = 0;  // samples
};

struct RoleProfile {
  std::string role;  // "reader", "writer" or "background" (threads that are not kvbench's)
  int threads = 0;   // threads sampled
  uint64_t samples = 0, lost = 0;   // lost: samples the kernel dropped (ring buffer full)
  std::vector<FoldedStack> stacks;  // most samples first
};

struct ProfileResult {
  bool requested = false;
  std::string unavailable;  // why this benchmark was not profiled ("" = it was)
  uint64_t period_ns = 0;
  bool kernel = false;               // kernel frames included
  double seconds = 0;                // wall time sampled
  double collector_cpu_seconds = 0;  // the thread that drains the buffers and symbolizes: cost
  double symbolize_seconds = 0;      // after the measured loop: not in it
  std::vector<RoleProfile> roles;

  uint64_t samples() const {
    uint64_t n = 0;
    for (const auto& r : roles) n += r.samples;
    return n;
  }
};

}  // namespace kvbench
