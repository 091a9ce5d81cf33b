#include "report/console_reporter.h"

#include <algorithm>
#include <string_view>

#include "common/build_info.h"
#include "common/cpu_affinity.h"
#include "profile/frame_name.h"
#include "report/format.h"

namespace kvbench {

namespace {

// How a metric group reads on the console.
struct GroupStyle {
  std::string_view group, title, separator;
  bool compact = false;  // label and value only: "instr 12.3K, IPC 1.26"
};
constexpr GroupStyle kGroupStyles[] = {
    {kLatencyGroup, "latency", "  "},
    {kCostGroup, "cost/op", ", "},
    {kIntervalsGroup, "intervals", ", "},
    {kCountersGroup, "counters/op", ", ", true},
};

GroupStyle StyleOf(std::string_view group) {
  for (const auto& s : kGroupStyles) {
    if (s.group == group) return s;
  }
  return {group, group, ", "};
}

// "task-clock 1.23us", "instr 12.3K", "IPC 1.26".
std::string FormatCompactItem(const Metric& m) {
  const std::string value = m.unit == "ns/op" ? FormatNs(m.value) : FormatCount(m.value);
  return std::string(m.label) + " " + value;
}

// "p99 42.62us", "cpu user 4.46 us", "median 63490 ops/s". A unit the title already says is
// left out: "cost/op: ... us", "intervals: 5".
std::string FormatItem(const Metric& m, std::string_view title) {
  std::string value;
  std::string_view unit = m.unit;
  if (unit == "ns") {
    value = FormatNs(m.value);
    unit = "";
  } else {
    const int precision = m.integer || unit == "ops/s" ? 0 : unit == "us/op" ? 2 : 3;
    value = FormatDouble(m.value, precision);
  }
  constexpr std::string_view kPerOp = "/op";
  const bool per_op_title =
      title.size() >= kPerOp.size() && title.substr(title.size() - kPerOp.size()) == kPerOp;
  if (per_op_title && unit.size() > kPerOp.size() &&
      unit.substr(unit.size() - kPerOp.size()) == kPerOp) {
    unit.remove_suffix(kPerOp.size());
  }
  if (m.label.empty() && unit == title) unit = "";  // "intervals: 5", not "5 intervals"
  std::string item(m.label);
  if (!item.empty()) item += " ";
  item += value;
  if (!unit.empty()) item += " " + std::string(unit);
  return item;
}

// A paced writer's verdict, with what it rests on: the share of the bytes due since its first
// write, and its slowest 1 s window (stats/delivery.h); when missed, why (result/pacing.h).
std::string PacingVerdict(const RoleResult& role) {
  const DeliveryVerdict& d = role.delivery;
  std::string s = role.sustained ? "sustained" : "NOT sustained";
  if (d.judged) {
    s +=
        "; " + FormatDouble(100 * d.delivered_share, 1) + "% of the bytes due from its first write";
    if (d.windows > 1) {
      s += ", the slowest of its " + std::to_string(d.windows) + " 1-s windows " +
           FormatDouble(100 * d.slowest_window_share, 1) + "%";
    }
  }
  if (!role.pacing_note.empty()) s += "; " + role.pacing_note;
  return s;
}

}  // namespace

void ConsoleReporter::Begin(const RunContext& c) {
  reference_engine_ = c.reference_engine;
  noise_ = c.noise;
  profile_unavailable_ = c.config->profile.unavailable;
  const Environment& env = *c.env;
  const RunConfig& config = *c.config;
  const BuildInfo& b = GetBuildInfo();
  const WorkloadOptions& w = config.workload;
  std::fprintf(out_, "kvbench:    %s (git %s), preset %s, %s %s %s, %s\n", b.kvbench_version,
               b.git_revision, b.preset, b.compiler_id, b.compiler_version, b.build_type,
               b.cxx_flags);
  std::fprintf(out_, "Date:       %s\n", env.date_utc.c_str());
  // The caches in parentheses when the kernel says what they are (a VM may not).
  const std::string caches = env.cpu_caches.empty() ? "" : " (" + env.cpu_caches + ")";
  std::fprintf(out_, "CPU:        %d x %s%s\n", env.cpu_cores, env.cpu_model.c_str(),
               caches.c_str());
  std::fprintf(out_, "Kernel:     %s; memory %s; clock %s\n", env.kernel.c_str(),
               FormatBytes(env.memory_bytes).c_str(), env.clock.c_str());
  std::fprintf(out_, "Host:       %s\n", env.audit.Summary().c_str());
  if (!env.noise_start.cpu_speeds.empty()) {
    const std::string finding = AssessCpuSpeeds(env.noise_start.cpu_speeds, {});
    std::fprintf(out_,
                 "CPU speed:  %s (reference loop: best of %d windows, wall ns/loop and the "
                 "loop's share of the wall time over all of them)%s%s\n",
                 DescribeCpuSpeeds(env.noise_start.cpu_speeds).c_str(), kAuditWindows,
                 finding.empty() ? "" : ": ", finding.c_str());
  }
  for (const auto& l : env.libraries) {
    if (!l.version.empty() || !l.path.empty() || !l.origin.empty()) {
      std::fprintf(out_, "Library:    %-10s %-8s %s\n", l.name.c_str(), l.version.c_str(),
                   DescribeLibrary(l).c_str());
    }
  }
  std::fprintf(out_, "Engine:     %s %s%s\n", c.engine.c_str(), c.engine_version.c_str(),
               c.reference_engine ? "  [REFERENCE engine: not a storage engine]" : "");
  for (const auto& [k, v] : c.engine_config) {
    std::fprintf(out_, "  %-34s %s\n", k.c_str(), v.c_str());
  }
  std::fprintf(out_, "Database:   %s%s\n", config.engine_options.path.c_str(),
               config.use_existing_db ? " (existing)"
               : config.RemovesDatabase()
                   ? " (emptied at start, removed at the end: --keep_db keeps it)"
                   : " (emptied at start)");
  std::fprintf(out_, "Keys:       %d bytes each; values %d bytes each (compression ratio %.2f)\n",
               w.key_size, w.value_size, w.compression_ratio);
  std::fprintf(out_,
               "Entries:    --num=%llu keys; op counts are totals across %d thread%s; seed %llu\n",
               static_cast<unsigned long long>(w.num), w.threads, w.threads == 1 ? "" : "s",
               static_cast<unsigned long long>(w.seed));
  std::fprintf(out_, "Counters:   %s%s\n", config.perf_counters.Describe().c_str(),
               config.perf_counters.enabled() ? " (per op, per role)" : "");
  if (config.profile.requested) {
    std::fprintf(out_, "Profile:    %s\n", config.profile.Describe().c_str());
  }
  if (!config.cpu_affinity.empty()) {
    std::fprintf(out_, "CPUs:       workers pinned round-robin to %s\n",
                 FormatCpuList(config.cpu_affinity).c_str());
  }
  for (const auto& warning : c.warnings) std::fprintf(out_, "WARNING:    %s\n", warning.c_str());
  std::fprintf(out_, "------------------------------------------------\n");
  std::fflush(out_);
}

bool ConsoleReporter::Finish() {
  if (noise_ == nullptr) return true;
  std::fprintf(out_, "Noise:      %s\n", DescribeNoise(*noise_).c_str());
  if (noise_->measured && !noise_->cpu_speed_end.empty()) {
    std::fprintf(out_, "CPU speed:  at the end %s\n",
                 DescribeCpuSpeeds(noise_->cpu_speed_end).c_str());
  }
  if (noise_->noisy) {
    std::fprintf(out_, "WARNING:    this run was noisy (%s): compare it with care\n",
                 noise_->reason.c_str());
  }
  std::fflush(out_);
  return true;
}

void ConsoleReporter::Progress(const ProgressUpdate& u) {
  std::string line = "... " + u.benchmark + " " + FormatDouble(u.elapsed_seconds, 1) + "s";
  if (u.duration_seconds > 0) {
    line +=
        " (" + FormatDouble(100.0 * u.elapsed_seconds / u.duration_seconds, 0) + "% of duration)";
  }
  line += ": ";
  for (const auto& r : u.roles) {
    line += r.role + " " + FormatDouble(r.interval.ops_per_sec(), 0) + " ops/s " +
            FormatDouble(r.interval.bytes_per_sec() / 1048576.0, 2) + " MB/s";
    if (r.ops_total > 0) {
      line += " (" + FormatDouble(100.0 * r.ops_so_far / r.ops_total, 0) + "% of ops)";
    }
    line += "  ";
  }
  std::fprintf(err_, "%s\n", line.c_str());
}

void ConsoleReporter::Add(const BenchmarkResult& r) {
  if (r.roles.empty()) {  // settle
    std::fprintf(out_, "%-21s: %11.3f seconds; database %s\n", r.name.c_str(), r.seconds,
                 FormatBytes(r.db_size_bytes).c_str());
  }
  std::string run_label;
  if (r.warmup) {
    run_label = " (warm-up " + std::to_string(r.repeat) + "/" + std::to_string(r.repeats) + ")";
  } else if (r.repeats > 1) {
    run_label = " (" + std::to_string(r.repeat) + "/" + std::to_string(r.repeats) + ")";
  }
  for (const auto& role : r.roles) {
    AddRole(r, role, run_label);
    AddGroupLines(role);
  }
  AddBenchmarkLines(r);
  AddProfileLines(r.profile);
  std::fflush(out_);
}

// --profile: its rate and cost, then each role's three hottest functions (self time).
void ConsoleReporter::AddProfileLines(const ProfileResult& p) {
  if (!p.requested || p.roles.empty()) {
    if (p.requested && p.unavailable != profile_unavailable_) {
      std::fprintf(out_, "    profile: unavailable: %s\n", p.unavailable.c_str());
    }
    return;
  }
  const double sampled_cpu = static_cast<double>(p.samples()) * p.period_ns / 1e9;
  std::string line =
      "    profile: " + FormatDouble(p.seconds > 0 ? p.samples() / p.seconds : 0, 0) +
      " samples/s over " + FormatDouble(p.seconds, 2) + " s (";
  for (size_t i = 0; i < p.roles.size(); ++i) {
    const RoleProfile& r = p.roles[i];
    line += (i ? ", " : "") + r.role + " " + std::to_string(r.threads) + " thread" +
            (r.threads == 1 ? "" : "s") + " " + std::to_string(r.samples) + " samples";
    if (r.lost > 0) line += " (" + std::to_string(r.lost) + " LOST)";
  }
  // The collector drains every 20 ms whatever the threads do: per CPU second of the run, and
  // against the CPU time it sampled.
  line += "); collector " + FormatDouble(p.collector_cpu_seconds * 1e3, 1) + " ms CPU (" +
          FormatDouble(p.seconds > 0 ? 100 * p.collector_cpu_seconds / p.seconds : 0, 2) +
          "% of a CPU, " +
          FormatDouble(sampled_cpu > 0 ? 100 * p.collector_cpu_seconds / sampled_cpu : 0, 2) +
          "% of the CPU sampled)";
  std::fprintf(out_, "%s\n", line.c_str());
  for (const RoleProfile& r : p.roles) {
    if (r.samples == 0) continue;
    std::vector<std::pair<std::string, uint64_t>> self;  // innermost frame -> samples
    for (const auto& s : r.stacks) {
      const size_t semi = s.frames.rfind(';');
      std::string leaf = semi == std::string::npos ? s.frames : s.frames.substr(semi + 1);
      auto it = std::find_if(self.begin(), self.end(),
                             [&leaf](const auto& e) { return e.first == leaf; });
      if (it == self.end()) {
        self.emplace_back(std::move(leaf), s.count);
      } else {
        it->second += s.count;
      }
    }
    std::stable_sort(self.begin(), self.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string top = "    profile " + r.role + " self:";
    for (size_t i = 0; i < self.size() && i < 3; ++i) {
      top += (i ? "," : "") + std::string(" ") +
             FormatDouble(100.0 * self[i].second / r.samples, 1) + "% " +
             ShortFrameName(self[i].first);
    }
    std::fprintf(out_, "%s\n", top.c_str());
  }
}

// The db_bench line: micros/op is 1e6 / ops/sec, as docs/metrics.md says.
void ConsoleReporter::AddRole(const BenchmarkResult& r, const RoleResult& role,
                              const std::string& run_label) {
  std::string name = r.name;
  if (r.roles.size() > 1) name += " [" + role.role + "]";
  name += run_label;
  const double ops_sec = role.ops_per_sec();
  std::string msg;
  if (role.role == "reader") {
    msg = " (" + std::to_string(role.found) + " of " + std::to_string(role.found + role.not_found) +
          " found)";
  }
  if (role.background) {
    msg = role.target_bytes_per_sec > 0
              ? " (target " + FormatDouble(role.target_bytes_per_sec / 1048576.0, 2) +
                    " MB/s, achieved " + FormatDouble(role.mb_per_sec(), 2) +
                    " MB/s: " + PacingVerdict(role) + ")"
              : " (unpaced)";
  }
  std::fprintf(
      out_,
      "%-21s: %11.3f micros/op %9.0f ops/sec %8.3f seconds %10llu operations; %6.1f MB/s%s%s\n",
      name.c_str(), ops_sec > 0 ? 1e6 / ops_sec : 0.0, ops_sec, role.seconds,
      static_cast<unsigned long long>(role.ops), role.mb_per_sec(), msg.c_str(),
      reference_engine_ ? " [reference engine]" : "");
}

// One line per metric group, in the role's order, of the metrics shown at this detail.
void ConsoleReporter::AddGroupLines(const RoleResult& role) {
  for (const auto& group : role.metrics.Groups()) {
    const GroupStyle style = StyleOf(group);
    std::string line;
    for (const auto& m : role.metrics.items()) {
      const bool shown = m.show == Show::kAlways || (m.show == Show::kHistogram && histogram_);
      if (m.group != group || !shown) continue;
      if (!line.empty()) line += style.separator;
      line += style.compact ? FormatCompactItem(m) : FormatItem(m, style.title);
    }
    if (group == kCountersGroup && role.counters.multiplexed) {
      line += " (multiplexed: scaled from " +
              FormatDouble(100 * role.counters.counted_fraction, 0) + "% of the time)";
    }
    if (!line.empty()) {
      std::fprintf(out_, "    %s: %s\n", std::string(style.title).c_str(), line.c_str());
    }
  }
}

// The engine's own figures, the counts, the database size and the memory.
void ConsoleReporter::AddBenchmarkLines(const BenchmarkResult& r) {
  if (!r.engine_metrics.empty()) {
    std::string line = "    engine:";
    if (r.write_amplification >= 0) {
      line += " write-amp " + FormatDouble(r.write_amplification, 2) + ";";
    }
    for (const auto& [name, value] : r.engine_metrics) {
      line += " " + name + " " + FormatDouble(value, value == static_cast<uint64_t>(value) ? 0 : 2);
    }
    std::fprintf(out_, "%s\n", line.c_str());
  }
  if (!r.engine_kb_per_op.empty()) {
    std::string line = "    engine bytes/op:";
    for (const auto& [name, value] : r.engine_kb_per_op) {
      line += " " + name.substr(0, name.size() - 10) + " " + FormatDouble(value, 3) + " KB,";
    }
    line.pop_back();
    std::fprintf(out_, "%s\n", line.c_str());
  }
  if (!r.roles.empty()) {
    std::fprintf(out_, "    %s; database %s, rss %s (peak %s)\n", r.count_note.c_str(),
                 FormatBytes(r.db_size_bytes).c_str(), FormatBytes(r.rss_bytes).c_str(),
                 FormatBytes(r.peak_rss_bytes).c_str());
  }
  for (const auto& w : r.warnings) std::fprintf(out_, "    WARNING: %s\n", w.c_str());
}

// The interval is the geometric mean's (stats/summary.h): a ratio either side of it, so it is
// given as "-35%/+54%" and never reaches below zero.
void ConsoleReporter::AddSummaries(const std::vector<RoleSummary>& summaries) {
  for (const auto& rs : summaries) {
    const SampleSummary& s = rs.ops_per_sec;
    std::string name = rs.benchmark + " [X" + std::to_string(s.n) + "]";
    if (summaries.size() > 1) name += " [" + rs.role + "]";
    const double centre = s.log_interval ? s.geomean : s.mean;
    const auto percent = [centre](double v) {
      return centre > 0 ? FormatDouble(100.0 * (v - centre) / centre, 1) : std::string("0.0");
    };
    std::string line = name;
    line.resize(std::max<size_t>(line.size(), 21), ' ');
    line += ": " + FormatDouble(centre, 0) + " ops/sec " + (s.log_interval ? "geomean" : "mean") +
            ", 95% CI " + FormatDouble(s.ci95_low, 0) + ".." + FormatDouble(s.ci95_high, 0) + " (" +
            percent(s.ci95_low) + "%/+" + percent(s.ci95_high) + "%)";
    if (s.log_interval) line += ", mean " + FormatDouble(s.mean, 0);
    line += ", median " + FormatDouble(s.median, 0) + ", stddev " + FormatDouble(s.stddev, 0) +
            ", cv " + FormatDouble(100.0 * s.cv, 2) + "%, min " + FormatDouble(s.min, 0) +
            ", max " + FormatDouble(s.max, 0);
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ConsoleReporter::Fail(const std::string& message) {
  std::fflush(out_);
  std::fprintf(err_, "kvbench: error: %s\n", message.c_str());
}

}  // namespace kvbench
