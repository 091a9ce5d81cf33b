// What else the machine did during a run: CPU time stolen by the hypervisor and CPU time used by
// other processes, from /proc/stat deltas minus the process's own CPU time (getrusage), and the
// load average at the start and the end, and the speed of each allowed CPU at the start and the end
// (cpu_speed.h). A run is "noisy" when either share of the machine's CPU capacity (wall time x
// online CPUs) exceeds its threshold, or when the CPUs' speeds differ or changed beyond
// kCpuSpeedShare (docs/json.md, docs/metrics.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "env/cpu_speed.h"

namespace kvbench {

// A run is noisy when the hypervisor stole more than this share of the CPU capacity...
constexpr double kNoisyStealShare = 0.02;
// ...or other processes used more than this share of it.
constexpr double kNoisyForeignShare = 0.10;

// The machine-wide "cpu" line of /proc/stat, in clock ticks.
struct CpuTicks {
  uint64_t busy = 0;   // user + nice + system + irq + softirq (guest time is inside user)
  uint64_t steal = 0;  // time the hypervisor ran someone else while this VM wanted to run
  uint64_t total = 0;  // every field but guest/guest_nice (already counted in user/nice)
};

// Parses /proc/stat text. False when it has no aggregate "cpu " line of at least 8 fields.
bool ParseProcStat(const std::string& text, CpuTicks* out);

struct NoiseSnapshot {
  bool ok = false;
  std::string error;  // why not ok
  CpuTicks ticks;
  double own_cpu_seconds = 0;  // this process, user + system (getrusage RUSAGE_SELF)
  double wall_seconds = 0;     // CLOCK_MONOTONIC
  double load1 = 0;            // /proc/loadavg, one-minute average
  // Each allowed CPU's speed (MeasureCpuSpeeds); filled by the runner, not by TakeNoiseSnapshot
  // (kvbench --version collects the environment too, and measures nothing).
  std::vector<CpuSpeed> cpu_speeds;
};

// Reads /proc/stat, /proc/loadavg and the process's own CPU time now.
NoiseSnapshot TakeNoiseSnapshot();

struct NoiseReport {
  bool measured = false;
  std::string unknown;  // why not measured
  double wall_seconds = 0;
  double capacity_cpu_seconds = 0;  // wall_seconds x cpus
  double own_cpu_seconds = 0;
  double steal_cpu_seconds = 0;
  double foreign_cpu_seconds = 0;  // busy time of the whole machine minus this process's
  double steal_share = 0;          // of capacity
  double foreign_share = 0;        // of capacity
  double load_start = 0, load_end = 0;
  std::vector<CpuSpeed> cpu_speed_start, cpu_speed_end;  // the snapshots' cpu_speeds
  std::string cpu_speed_finding;  // AssessCpuSpeeds: "" when the CPUs agree and none changed
  bool noisy = false;
  std::string reason;  // why noisy, "" otherwise
};

// The noise between two snapshots on a machine of `cpus` online CPUs whose /proc/stat counts
// `ticks_per_second`.
NoiseReport AssessNoise(const NoiseSnapshot& start, const NoiseSnapshot& end, int cpus,
                        double ticks_per_second);

// One line for the console: "steal 0.0%, other processes 38% of 2 CPUs, load 4.1 -> 4.6" plus
// "; NOISY: <reason>" when it is.
std::string DescribeNoise(const NoiseReport& r);

}  // namespace kvbench
