// What a benchmark measured, per role; filled by the runner, formatted by the reporters (which
// include this, never the runner). The raw counters stay typed for the runner's own decisions;
// what is reported is each role's MetricList (role_metrics.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profile/profile.h"
#include "result/metric.h"
#include "stats/delivery.h"
#include "stats/disk_stats.h"
#include "stats/histogram.h"
#include "stats/interval_series.h"
#include "stats/perf_counters.h"
#include "stats/resource_usage.h"
#include "stats/summary.h"

namespace kvbench {

struct RoleResult {
  std::string role;  // "reader" or "writer"
  int threads = 0;
  bool background = false;  // the paced writer of a *whilewriting benchmark
  uint64_t ops = 0, bytes = 0, found = 0, not_found = 0, entries = 0;
  uint64_t first_not_found = UINT64_MAX;  // verifyacked: the first lost key of the lowest thread
                                          // that lost one
  double seconds = 0;  // from the start barrier to this role's last thread finishing
  Histogram latency;   // merged over the role's threads, ns
  IntervalSeries series;
  StallSummary stalls;  // from `series`, ops/s
  ResourceCost cost;    // process-wide counters over the benchmark, divided by this role's ops
  DeviceCost device;    // the --db device's reads over the benchmark, divided by this role's ops
  double thread_cpu_seconds = 0;    // CPU of this role's own threads only (no engine background)
  double cpu_wait_seconds = -1;     // its threads runnable but waiting for a CPU; -1 = unknown
  double target_bytes_per_sec = 0;  // paced writer: its target (0 = unpaced)
  StallSummary byte_stalls;         // paced writer: interval rates in bytes/s
  DeliveryVerdict delivery;         // paced writer: what it delivered from its first write
  bool sustained = false;           // paced writer: delivery.sustained (stats/delivery.h)
  // Paced writer that did not sustain its target: what held it back, by the evidence
  // (result/pacing.h): "cpu", "engine" or "" (no evidence says), and the sentence that says so.
  std::string held_back_by, pacing_note;
  PerfTotals counters;    // perf_event_open counters of this role's threads
  std::vector<int> cpus;  // --cpu_affinity: each thread's CPU; empty = not pinned
  MetricList metrics;     // what the reporters print, from the above (role_metrics.h)

  double thread_cpu_us_per_op() const { return ops ? thread_cpu_seconds * 1e6 / ops : 0; }
  double ops_per_sec() const { return seconds > 0 ? ops / seconds : 0; }
  double mb_per_sec() const { return seconds > 0 ? bytes / seconds / 1048576.0 : 0; }
};

struct BenchmarkResult {
  std::string name;
  int repeat = 1, repeats = 1;  // this run is repeat `repeat` of `repeats` measured runs
  bool warmup = false;          // a discarded warm-up run (printed, not recorded)
  std::string count_note;       // e.g. "1000000 reads total over 4 threads"
  double seconds = 0;
  std::vector<RoleResult> roles;
  uint64_t db_size_bytes = 0;
  uint64_t rss_bytes = 0, peak_rss_bytes = 0;
  double cpu_seconds = 0;
  // Engine-internal figures: cumulative ones as the change over this benchmark, others at its end.
  std::vector<std::pair<std::string, double>> engine_metrics;
  double write_amplification = -1;  // flush+compaction bytes / user bytes, where the engine says
  // Cumulative engine byte counts per op of the benchmark, KB: "block_written_kb_per_op"
  // (result/engine_cost.h).
  std::vector<std::pair<std::string, double>> engine_kb_per_op;
  std::vector<std::string> warnings;  // about this result, e.g. a read of an empty database
  ProfileResult profile;              // --profile: the measured loops' CPU profile per role
};

// The spread of one role's ops/s over the measured repeats of a benchmark.
struct RoleSummary {
  std::string benchmark, role;
  SampleSummary ops_per_sec;
};

}  // namespace kvbench
