#include "profile/profile.h"

#include "profile/thread_sampler.h"

namespace kvbench {

std::string ProfilePlan::Describe() const {
  if (!requested) return "off (--profile)";
  if (!enabled) return "unavailable: " + unavailable + "; running unprofiled";
  return "cpu-clock at " + std::to_string(hz) +
         " Hz of each thread's CPU time, frame-pointer stacks, per role (reader/writer/"
         "background), " +
         (kernel ? "kernel frames included" : "user frames only (kernel not permitted)");
}

void ProbeProfiler(ProfilePlan* plan) {
  std::string why;
  plan->kernel = true;
  if (ThreadSampler::Open(0, plan->period_ns(), true, &why) != nullptr) {
    plan->enabled = true;
    return;
  }
  // perf_event_paranoid 2 lets an unprivileged user sample its own user-space code only.
  std::string why_user;
  if (ThreadSampler::Open(0, plan->period_ns(), false, &why_user) != nullptr) {
    plan->enabled = true;
    plan->kernel = false;
    return;
  }
  plan->enabled = false;
  plan->unavailable = why;
}

}  // namespace kvbench
