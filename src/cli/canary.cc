#include "cli/canary.h"

#include <sched.h>

#include <cstdio>
#include <vector>

#include "common/cpu_affinity.h"
#include "env/cpu_speed.h"

namespace kvbench {

int RunCanary(const char* program, const std::string& cpu_affinity) {
  std::vector<int> cpus;
  const Status s = ParseCpuAffinity("cpu_affinity", cpu_affinity, &cpus);
  if (!s.ok() || cpus.size() > 1) {
    std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", program,
                 s.ok() ? ("--canary measures one CPU: --cpu_affinity=" + cpu_affinity + " names " +
                           std::to_string(cpus.size()))
                              .c_str()
                        : s.message().c_str(),
                 program);
    return 2;
  }
  const bool asked = !cpus.empty();
  const int cpu = asked ? cpus[0] : sched_getcpu();
  if (cpu < 0) {
    std::fprintf(stderr, "%s: error: --canary: cannot tell which CPU this is (sched_getcpu)\n",
                 program);
    return 1;
  }
  const CpuSpeed c = MeasureCpuSpeed(cpu, kCanaryWindows, kCanaryLoopsPerWindow);
  if (!c.error.empty()) {
    std::fprintf(stderr, "%s: error: --canary: %s\n", program, c.error.c_str());
    return 1;
  }
  std::printf(
      "{\"canary\": \"kvbench reference loop\", \"cpu\": %d, \"pinned_by\": \"%s\", "
      "\"ns_per_loop\": %.6g, \"median_ns_per_loop\": %.6g, \"wall_ns_per_loop\": %.6g, "
      "\"cpu_share\": %.4g, \"windows\": %d, \"loops_per_window\": %llu, \"seconds\": %.6g}\n",
      c.cpu, asked ? "--cpu_affinity" : "the CPU it started on", c.ns_per_loop,
      c.median_ns_per_loop, c.wall_ns_per_loop, c.cpu_share, c.windows,
      static_cast<unsigned long long>(c.loops_per_window), c.seconds);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace kvbench
