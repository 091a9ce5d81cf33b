#include "result/pacing.h"

#include <algorithm>
#include <cstdio>

namespace kvbench {

namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// The change of engine figure `name` over the benchmark; -1 if the engine has none.
double Figure(const BenchmarkResult& r, const char* name) {
  for (const auto& [n, v] : r.engine_metrics) {
    if (n == name) return v;
  }
  return -1;
}

std::string Explain(const std::string& engine, const BenchmarkResult& r, RoleResult* w) {
  const DeliveryVerdict& d = w->delivery;
  if (!d.judged) {
    w->held_back_by = "";
    return "the benchmark ended before its first write";
  }
  const double lost =
      std::max(0.0, d.due_bytes - static_cast<double>(d.delivered_bytes)) / w->target_bytes_per_sec;
  const double write_bytes = w->ops > 0 ? static_cast<double>(w->bytes) / w->ops : 0;
  const double overrun = WriteOverrunSeconds(*w, write_bytes / w->target_bytes_per_sec);
  const double stall_us = Figure(r, "write_stall_us");
  const double stalled = stall_us > 0 ? stall_us / 1e6 : 0;
  const double engine_part = std::max(overrun, stalled);
  const double cpu_part = std::max(0.0, w->cpu_wait_seconds);
  std::string s = Fixed(lost, 2) + " s of writing lost";
  std::string engine_evidence = "its writes took " + Fixed(overrun, 2) +
                                " s beyond their pace (p99.9 " +
                                Fixed(w->latency.Percentile(99.9) / 1e6, 2) + " ms)";
  if (stall_us >= 0)
    engine_evidence += ", " + engine + " stalled writes for " + Fixed(stalled, 2) + " s";
  const std::string cpu_evidence =
      w->cpu_wait_seconds < 0
          ? std::string("its wait for a CPU is unknown (no /proc/thread-self/schedstat)")
          : "it waited " + Fixed(cpu_part, 2) + " s of " + Fixed(w->seconds, 2) + " s for a CPU";
  const double threshold = kPacingCauseShare * lost;
  if (cpu_part >= engine_part && cpu_part >= threshold && cpu_part > 0) {
    w->held_back_by = "cpu";
    return s + "; " + cpu_evidence + ": the machine was busy";
  }
  if (engine_part > cpu_part && engine_part >= threshold && engine_part > 0) {
    w->held_back_by = "engine";
    return s + "; " + engine_evidence + ": " + engine + " held it back";
  }
  w->held_back_by = "";
  return s + "; neither accounts for it: " + cpu_evidence + ", " + engine_evidence;
}

}  // namespace

double WriteOverrunSeconds(const RoleResult& role, double gap_seconds) {
  const uint64_t timed = role.latency.count();
  if (timed == 0) return 0;
  const double gap_ns = gap_seconds * 1e9;
  double over_ns = 0;
  role.latency.ForEachBucket([&](uint64_t low, uint64_t high, uint64_t n) {
    const double v = role.latency.BucketValue(low, high);
    if (v > gap_ns) over_ns += static_cast<double>(n) * (v - gap_ns);
  });
  return over_ns / 1e9 * static_cast<double>(role.ops) / static_cast<double>(timed);
}

void ExplainPacing(const std::string& engine, BenchmarkResult* r) {
  for (auto& role : r->roles) {
    if (!role.background || role.target_bytes_per_sec <= 0 || role.sustained) continue;
    role.pacing_note = Explain(engine, *r, &role);
  }
}

}  // namespace kvbench
