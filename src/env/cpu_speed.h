// The speed of each CPU this process may run on, measured by a short fixed reference loop pinned
// to it: on a VM a host neighbour can slow one vCPU 1.5-2x for minutes and then the other, and
// neither steal time nor the load average shows it (issue 36). The audit measures every allowed
// CPU at the start and the end of a run (noise.h's verdict says when they differ or changed);
// `kvbench --canary` and `kvbench_micro --canary` run the same loop once on one CPU, for the kvb
// tools to call each round (cli/canary.h).
//
// The loop is integer work on registers only (a multiply, an add, a shift and an xor per
// iteration, each depending on the one before): no memory, no branch to mispredict, the same
// instructions every time, so its time per iteration is the core's latency for that chain at the
// clock it ran at. Each measurement is the best (least) of several short windows: a window that
// was interrupted is slower, never faster, so the best is the CPU's own speed, and the median
// beside it says how noisy the windows were. The best cannot see another thread that shares the
// CPU (it runs between that thread's time slices), so each measurement also takes the wall time
// of all its windows and the share of it the loop ran (its thread's CPU time / wall time): a busy
// loop pinned to the same CPU halves the share and doubles the wall time per loop.
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

// The audit's: 1 + 48 windows of 2^17 iterations, about 10 ms of loop per CPU (1.6 ns a loop
// here), 40 ms a run on 2 CPUs (start and end), twice that on a CPU another thread shares. The
// span, not the best, decides the count: the scheduler gives a thread that starts on a busy CPU
// its first time slice (a few ms) before the other thread runs again, so 9 windows (2 ms) read a
// share of 1.00 beside a busy loop; 48 span several slices of each (docs/json.md has the figures).
constexpr int kAuditWindows = 48;
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
// noise) differ; a CPU whose time moved by more than it between the start and the end changed;
// CPUs whose wall times per loop differ by more than it differ by the wall clock.
constexpr double kCpuSpeedShare = 0.10;
// A CPU on which the reference loop ran less than this share of the wall time is shared with
// another thread (a quiet CPU gives it 0.97-1.00; half of it, beside one busy loop).
constexpr double kCpuShareLow = 0.80;

// What the start and end measurements say: "" when the CPUs agree and none changed, otherwise
// "; "-separated sentences naming each CPU: the slow one by its best ("CPU 1 ran the reference
// loop 1.62x slower than CPU 0 at the start"), one shared with another thread or slower by the
// wall clock ("CPU 1 gave the reference loop 48% of its time (below 80%: another thread shared
// it) and ran it 2.05x slower than CPU 0 by the wall clock at the start"), and each change
// ("CPU 0 1.55x slower at the end than at the start"). `end` may be empty.
std::string AssessCpuSpeeds(const std::vector<CpuSpeed>& start, const std::vector<CpuSpeed>& end);

// "CPU 0 1.920 ns/loop (wall 1.95, share 0.99), CPU 1 ...": each CPU's best, its wall time per
// loop and the loop's share of the wall time, for the console.
std::string DescribeCpuSpeeds(const std::vector<CpuSpeed>& speeds);

// The slowest over the fastest of the measured CPUs, by their best windows (`wall` false) or by
// their wall time per loop (`wall` true): a ratio >= 1; 0 with fewer than two measured.
double SlowestOverFastest(const std::vector<CpuSpeed>& speeds, bool wall);

}  // namespace kvbench
