// The speed of each CPU this process may run on, measured by a short fixed reference loop pinned
// to it: on a VM a host neighbour can slow one vCPU 1.5-2x for minutes and then the other, and
// neither steal time nor the load average shows it (issue 36). The audit measures every allowed
// CPU at the start and the end of a run (noise.h's verdict says when they differ or changed);
// `kvbench --canary` runs the same loop once on one CPU, for the kvb tools to call each round.
//
// The loop is integer work on registers only (a multiply, an add, a shift and an xor per
// iteration, each depending on the one before): no memory, no branch to mispredict, the same
// instructions every time, so its time per iteration is the core's latency for that chain at the
// clock it ran at. Each measurement is the best (least) of several short windows: a window that
// was interrupted is slower, never faster, so the best is the CPU's own speed, and the median
// beside it says how noisy the windows were.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {

struct CpuSpeed {
  int cpu = -1;
  double ns_per_loop = 0;         // the best window's ns per iteration of the reference loop
  double median_ns_per_loop = 0;  // the windows' median
  int windows = 0;                // measured, after one discarded
  uint64_t loops_per_window = 0;
  // Over the measured windows: wall time per loop, and the share of that wall time the thread
  // ran (its CPU time / wall time). The best window is the core's speed when the thread had it;
  // these say how much of the CPU the thread got: another thread on the same CPU (a busy loop
  // pinned there) leaves the best window as it was and halves the share.
  double wall_ns_per_loop = 0;
  double cpu_share = 0;
  double seconds = 0;  // wall time the measurement took, the discarded window and the thread's
                       // start included
  std::string error;   // why not measured (the kernel refused the pinning); "" when measured
};

// The audit's: 1 + 9 windows of 2^17 iterations, about 2 ms per CPU (1.6 ns a loop here).
constexpr int kAuditWindows = 9;
constexpr uint64_t kAuditLoopsPerWindow = 1ull << 17;
// The canary's: about 50 ms of loops (1.6 ns a loop here).
constexpr int kCanaryWindows = 240;
constexpr uint64_t kCanaryLoopsPerWindow = 1ull << 17;

// The reference loop, `loops` iterations from `seed`; the result depends on every iteration.
uint64_t ReferenceLoop(uint64_t loops, uint64_t seed);

// Measures `cpu` on a thread of its own pinned to it: one window discarded (the thread's first
// touch of the CPU), then `windows` windows of `loops_per_window` iterations.
CpuSpeed MeasureCpuSpeed(int cpu, int windows, uint64_t loops_per_window);

// The audit's measurement of each CPU of `cpus` in turn.
std::vector<CpuSpeed> MeasureCpuSpeeds(const std::vector<int>& cpus);

// CPUs whose best times differ by more than this share (and by more than their windows' own
// noise) differ; a CPU whose time moved by more than it between the start and the end changed.
constexpr double kCpuSpeedShare = 0.10;

// What the start and end measurements say: "" when the CPUs agree and none changed, otherwise
// one sentence naming the slow CPU ("CPU 1 ran the reference loop 1.62x slower than CPU 0 at the
// start") and each change ("CPU 0 1.55x slower at the end than at the start"). `end` may be empty.
std::string AssessCpuSpeeds(const std::vector<CpuSpeed>& start, const std::vector<CpuSpeed>& end);

// "CPU 0 1.92 ns/loop, CPU 1 3.10 ns/loop": each CPU's best, for the console.
std::string DescribeCpuSpeeds(const std::vector<CpuSpeed>& speeds);

}  // namespace kvbench
