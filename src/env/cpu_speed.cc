#include "env/cpu_speed.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <utility>

#include "common/cpu_affinity.h"

namespace kvbench {

namespace {

double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string Fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// Runs on the calling thread, already pinned.
void MeasureHere(int windows, uint64_t loops, CpuSpeed* out) {
  volatile uint64_t sink = 0;  // the loop's result is used: it cannot be left out
  std::vector<double> ns;
  ns.reserve(static_cast<size_t>(windows));
  double wall0 = 0, cpu0 = 0;
  for (int w = -1; w < windows; ++w) {  // window -1: discarded
    const double t0 = NowSeconds();
    if (w == 0) {
      wall0 = t0;
      cpu0 = ThreadCpuSeconds();
    }
    sink = sink + ReferenceLoop(loops, 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(w));
    const double t1 = NowSeconds();
    if (w >= 0) ns.push_back((t1 - t0) * 1e9 / static_cast<double>(loops));
  }
  const double wall = NowSeconds() - wall0, cpu = ThreadCpuSeconds() - cpu0;
  std::sort(ns.begin(), ns.end());
  out->windows = windows;
  out->loops_per_window = loops;
  out->ns_per_loop = ns.front();
  out->median_ns_per_loop = ns[ns.size() / 2];
  out->wall_ns_per_loop = wall * 1e9 / (static_cast<double>(loops) * windows);
  out->cpu_share = wall > 0 ? std::min(1.0, cpu / wall) : 0;
}

// The slower of two measurements of CPUs, as a ratio >= 1.
double Ratio(double a, double b) { return a > b ? a / b : b / a; }

bool Measured(const CpuSpeed& c) { return c.error.empty() && c.ns_per_loop > 0; }

// The slowest CPU of `speeds` by its best window, when it is slower than the fastest beyond the
// threshold and beyond its own windows' noise (their median over their best). Returns the CPU
// named, or -1.
int AssessBest(const std::vector<CpuSpeed>& speeds, const std::string& when,
               std::vector<std::string>* out) {
  const CpuSpeed* fast = nullptr;
  const CpuSpeed* slow = nullptr;
  for (const auto& c : speeds) {
    if (!Measured(c)) continue;
    if (fast == nullptr || c.ns_per_loop < fast->ns_per_loop) fast = &c;
    if (slow == nullptr || c.ns_per_loop > slow->ns_per_loop) slow = &c;
  }
  if (fast == nullptr || fast == slow) return -1;
  const double ratio = slow->ns_per_loop / fast->ns_per_loop;
  const double noise = slow->median_ns_per_loop / slow->ns_per_loop;
  if (ratio > 1 + kCpuSpeedShare && ratio > noise) {
    out->push_back("CPU " + std::to_string(slow->cpu) + " ran the reference loop " +
                   Fixed(ratio, 2) + "x slower than CPU " + std::to_string(fast->cpu) + " at the " +
                   when);
    return slow->cpu;
  }
  return -1;
}

// Each CPU of `speeds` that another thread shared (the loop's share of the wall time below
// kCpuShareLow) or that ran the loop slower than the fastest by the wall clock beyond the
// threshold: one sentence per CPU. A CPU AssessBest named (`slow_core`) is not named again for a
// wall time its slower core explains; measurements without a wall time are left out.
void AssessShares(const std::vector<CpuSpeed>& speeds, int slow_core, const std::string& when,
                  std::vector<std::string>* out) {
  const CpuSpeed* fast = nullptr;
  for (const auto& c : speeds) {
    if (!Measured(c) || c.wall_ns_per_loop <= 0) continue;
    if (fast == nullptr || c.wall_ns_per_loop < fast->wall_ns_per_loop) fast = &c;
  }
  for (const auto& c : speeds) {
    if (!Measured(c) || c.wall_ns_per_loop <= 0) continue;
    std::string s;
    if (c.cpu_share < kCpuShareLow) {
      // Rounded down: a share of 0.796 reads 79%, never "80% (below 80%)".
      s = "gave the reference loop " + Fixed(std::floor(100 * c.cpu_share + 1e-9), 0) +
          "% of its time (below " + Fixed(100 * kCpuShareLow, 0) + "%: another thread shared it)";
    }
    const double ratio = c.wall_ns_per_loop / fast->wall_ns_per_loop;
    if (&c != fast && c.cpu != slow_core && ratio > 1 + kCpuSpeedShare) {
      s += (s.empty() ? "ran the reference loop " : " and ran it ") + Fixed(ratio, 2) +
           "x slower than CPU " + std::to_string(fast->cpu) + " by the wall clock";
    }
    if (s.empty()) continue;
    std::string sentence = "CPU " + std::to_string(c.cpu) + " ";
    sentence += s;
    sentence += " at the ";
    sentence += when;
    out->push_back(std::move(sentence));
  }
}

}  // namespace

// Not inlined, and the seed comes from the caller: the compiler cannot fold the loop away or
// hoist it out of the timing.
__attribute__((noinline)) uint64_t ReferenceLoop(uint64_t loops, uint64_t x) {
  for (uint64_t i = 0; i < loops; ++i) {
    x = x * 0x2545f4914f6cdd1dull + i;
    x ^= x >> 29;
  }
  return x;
}

CpuSpeed MeasureCpuSpeed(int cpu, int windows, uint64_t loops_per_window) {
  CpuSpeed out;
  out.cpu = cpu;
  const double t0 = NowSeconds();
  std::thread t([&] {
    const Status s = PinThisThread(cpu);
    if (!s.ok()) {
      out.error = s.message();
      return;
    }
    MeasureHere(std::max(windows, 1), std::max<uint64_t>(loops_per_window, 1), &out);
  });
  t.join();
  out.seconds = NowSeconds() - t0;
  return out;
}

std::vector<CpuSpeed> MeasureCpuSpeeds(const std::vector<int>& cpus) {
  std::vector<CpuSpeed> speeds;
  speeds.reserve(cpus.size());
  for (int cpu : cpus) speeds.push_back(MeasureCpuSpeed(cpu, kAuditWindows, kAuditLoopsPerWindow));
  return speeds;
}

std::string AssessCpuSpeeds(const std::vector<CpuSpeed>& start, const std::vector<CpuSpeed>& end) {
  std::vector<std::string> found;
  for (const auto* when : {&start, &end}) {
    const std::string at = when == &start ? "start" : "end";
    AssessShares(*when, AssessBest(*when, at, &found), at, &found);
  }
  for (const auto& s : start) {
    for (const auto& e : end) {
      if (e.cpu != s.cpu || !Measured(s) || !Measured(e)) continue;
      const double ratio = Ratio(e.ns_per_loop, s.ns_per_loop);
      if (ratio > 1 + kCpuSpeedShare) {
        found.push_back("CPU " + std::to_string(s.cpu) + " " + Fixed(ratio, 2) + "x " +
                        (e.ns_per_loop > s.ns_per_loop ? "slower" : "faster") +
                        " at the end than at the start");
      }
    }
  }
  std::string out;
  for (const auto& f : found) out += (out.empty() ? "" : "; ") + f;
  return out;
}

std::string DescribeCpuSpeeds(const std::vector<CpuSpeed>& speeds) {
  std::string out;
  for (const auto& c : speeds) {
    if (!out.empty()) out += ", ";
    out += "CPU " + std::to_string(c.cpu) + " ";
    if (!c.error.empty()) {
      out += "not measured (" + c.error + ")";
      continue;
    }
    out += Fixed(c.ns_per_loop, 3) + " ns/loop";
    if (c.wall_ns_per_loop > 0) {
      out += " (wall " + Fixed(c.wall_ns_per_loop, 3) + ", share " + Fixed(c.cpu_share, 2) + ")";
    }
  }
  return out;
}

double SlowestOverFastest(const std::vector<CpuSpeed>& speeds, bool wall) {
  double fast = 0, slow = 0;
  int n = 0;
  for (const auto& c : speeds) {
    const double v = wall ? c.wall_ns_per_loop : c.ns_per_loop;
    if (!Measured(c) || v <= 0) continue;
    fast = n == 0 ? v : std::min(fast, v);
    slow = std::max(slow, v);
    ++n;
  }
  return n >= 2 ? slow / fast : 0;
}

}  // namespace kvbench
