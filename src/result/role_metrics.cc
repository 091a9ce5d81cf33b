// A new harness metric is one line here (and, if it needs a new counter, that counter where it is
// measured). Order is report order: the JSON keys of each group and the console items.
#include "result/role_metrics.h"

namespace kvbench {

namespace {

using B = Better;

// Where the role's ops and latency are on the db_bench line already.
void AddThroughput(const RoleResult& r, MetricList* m) {
  m->Add(kRoleGroup, "ops", "ops", B::kHigher, r.ops).Integer().Shown(Show::kNever);
  m->Add(kRoleGroup, "bytes", "bytes", B::kHigher, r.bytes).Integer().Shown(Show::kNever);
  m->Add(kRoleGroup, "seconds", "s", B::kLower, r.seconds).Shown(Show::kNever);
  m->Add(kRoleGroup, "ops_per_sec", "ops/s", B::kHigher, r.ops_per_sec()).Shown(Show::kNever);
  m->Add(kRoleGroup, "mb_per_sec", "MB/s", B::kHigher, r.mb_per_sec()).Shown(Show::kNever);
  m->Add(kRoleGroup, "found", "keys", B::kHigher, r.found).Integer().Shown(Show::kNever);
  m->Add(kRoleGroup, "not_found", "keys", B::kLower, r.not_found).Integer().Shown(Show::kNever);
  m->Add(kRoleGroup, "entries", "entries", B::kHigher, r.entries).Integer().Shown(Show::kNever);
}

void AddLatency(const Histogram& h, MetricList* m) {
  struct Percentile {
    const char* name;
    double p;
    Show show;
  };
  static const Percentile kPercentiles[] = {
      {"p50", 50, Show::kAlways},          {"p75", 75, Show::kHistogram},
      {"p90", 90, Show::kHistogram},       {"p95", 95, Show::kHistogram},
      {"p99", 99, Show::kAlways},          {"p99_9", 99.9, Show::kAlways},
      {"p99_99", 99.99, Show::kHistogram},
  };
  const auto g = kLatencyGroup;
  m->Add(g, "count", "ops", B::kHigher, h.count()).Integer().Shown(Show::kNever);
  m->Add(g, "mean", "ns", B::kLower, h.mean()).Shown(Show::kNever);
  m->Add(g, "min", "ns", B::kLower, h.min()).Integer().Shown(Show::kNever);
  for (const auto& p : kPercentiles) {
    m->Add(g, p.name, "ns", B::kLower, h.Percentile(p.p)).Label(p.name).Shown(p.show);
  }
  m->Add(g, "max", "ns", B::kLower, h.max()).Integer().Label("max");
}

void AddCost(const RoleResult& r, MetricList* m) {
  const ResourceCost& c = r.cost;
  // Every cost is per op, lower is better, and on the console under its label.
  const auto add = [m](const char* name, const char* unit, double v, const char* label) {
    m->Add(kCostGroup, name, unit, B::kLower, v).Label(label);
  };
  if (r.background) {
    // The paced writer's CPU is its own thread's: the process's (the readers' and the engine's
    // threads, over the writer's few ops) comes after it, labelled as what it is.
    add("thread_cpu_us_per_op", "us/op", r.thread_cpu_us_per_op(), "own thread");
    add("cpu_user_us_per_op", "us/op", c.cpu_user_us_per_op, "process user");
    add("cpu_sys_us_per_op", "us/op", c.cpu_sys_us_per_op, "process sys");
  } else {
    add("cpu_user_us_per_op", "us/op", c.cpu_user_us_per_op, "cpu user");
    add("cpu_sys_us_per_op", "us/op", c.cpu_sys_us_per_op, "cpu sys");
    add("thread_cpu_us_per_op", "us/op", r.thread_cpu_us_per_op(), "own threads");
  }
  if (c.have_io) {  // /proc/self/io was readable
    add("storage_read_kb_per_op", "KB/op", c.storage_read_kb_per_op, "storage read");
    add("storage_write_kb_per_op", "KB/op", c.storage_write_kb_per_op, "storage written");
    add("syscall_read_kb_per_op", "KB/op", c.syscall_read_kb_per_op, "syscall read");
    add("syscall_write_kb_per_op", "KB/op", c.syscall_write_kb_per_op, "syscall written");
  }
  add("voluntary_cs_per_op", "switches/op", c.voluntary_cs_per_op, "voluntary cs");
  add("involuntary_cs_per_op", "switches/op", c.involuntary_cs_per_op, "involuntary cs");
}

void AddIntervals(const StallSummary& s, MetricList* m) {
  // Without complete intervals there is nothing to show on the console, only zeros to record.
  const Show show = s.intervals > 0 ? Show::kAlways : Show::kNever;
  const auto g = kIntervalsGroup;
  m->Add(g, "count", "intervals", B::kHigher, s.intervals).Integer().Shown(show);
  m->Add(g, "median_ops_per_sec", "ops/s", B::kHigher, s.median_ops_per_sec)
      .Label("median")
      .Shown(show);
  m->Add(g, "p95_exceeded_ops_per_sec", "ops/s", B::kHigher, s.p95_exceeded)
      .Label("95% exceed")
      .Shown(show);
  m->Add(g, "p99_exceeded_ops_per_sec", "ops/s", B::kHigher, s.p99_exceeded)
      .Label("99% exceed")
      .Shown(show);
  m->Add(g, "min_ops_per_sec", "ops/s", B::kHigher, s.min_ops_per_sec).Label("slowest").Shown(show);
  m->Add(g, "below_half_median", "intervals", B::kLower, s.below_half_median)
      .Integer()
      .Label("below half the median")
      .Shown(show);
}

// The block device holding --db (/proc/diskstats): device-wide, unlike the process's own counters.
void AddDevice(const DeviceCost& d, MetricList* m) {
  if (!d.valid) return;
  const auto g = kCostGroup;
  m->Add(g, "storage_reads_per_op", "reads/op", B::kLower, d.reads_per_op).Label("device reads");
  m->Add(g, "device_read_kb_per_op", "KB/op", B::kLower, d.read_kb_per_op).Label("device read");
}

// The paced writer's; its verdict is on the db_bench line.
void AddPacing(const RoleResult& r, MetricList* m) {
  const auto g = kPacingGroup;
  m->Add(g, "achieved_bytes_per_sec", "bytes/s", B::kHigher, r.mb_per_sec() * 1048576.0)
      .Shown(Show::kNever);
  m->Add(g, "p99_exceeded_bytes_per_sec", "bytes/s", B::kHigher, r.byte_stalls.p99_exceeded)
      .Shown(Show::kNever);
  // The verdict's figures (stats/delivery.h): from the writer's first write, in 1 s windows.
  const DeliveryVerdict& d = r.delivery;
  m->Add(g, "delivered_share", "share", B::kHigher, d.delivered_share).Shown(Show::kNever);
  m->Add(g, "slowest_window_share", "share", B::kHigher, d.slowest_window_share)
      .Shown(Show::kNever);
  m->Add(g, "first_write_delay_seconds", "s", B::kLower, d.start_delay_seconds).Shown(Show::kNever);
  // Runnable but not running: a writer that misses its target while it waited for a CPU was
  // starved by the machine, not slowed by the engine.
  if (r.cpu_wait_seconds >= 0) {
    m->Add(g, "cpu_wait_seconds", "s", B::kLower, r.cpu_wait_seconds).Shown(Show::kNever);
  }
}

// perf_event_open's, per op; what was not counted is left out (the JSON says why).
void AddCounters(const RoleResult& r, MetricList* m) {
  const PerfTotals& c = r.counters;
  const auto g = kCountersGroup;
  for (int e = 0; e < kPerfEventCount; ++e) {
    const PerfEvent& ev = PerfEvents()[e];
    const double per_op = c.PerOp(e, r.ops);
    if (per_op < 0) continue;
    m->Add(g, ev.metric, ev.unit, B::kLower, per_op).Label(ev.label);
    if (std::string_view(ev.name) == "cycles") {
      const double instructions = c.PerOp(FindPerfEvent("instructions"), r.ops);
      if (instructions >= 0 && per_op > 0) {
        m->Add(g, "ipc", "instructions/cycle", B::kHigher, instructions / per_op).Label("IPC");
      }
    }
  }
}

}  // namespace

void AddRoleMetrics(RoleResult* role) {
  MetricList m;
  AddThroughput(*role, &m);
  AddLatency(role->latency, &m);
  AddCost(*role, &m);
  AddDevice(role->device, &m);
  AddIntervals(role->stalls, &m);
  if (role->background) AddPacing(*role, &m);
  AddCounters(*role, &m);
  role->metrics = std::move(m);
}

}  // namespace kvbench
