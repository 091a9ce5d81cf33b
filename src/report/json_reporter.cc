// The document is built by one small function per section, in the order docs/json.md lists them.
#include "report/json_reporter.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/build_info.h"
#include "common/cpu_affinity.h"
#include "common/file_output.h"
#include "common/instruction_marks.h"
#include "common/layout.h"
#include "report/json_writer.h"
#include "workload/workload.h"

namespace kvbench {

namespace {

void WriteBuild(JsonWriter& j, const Environment& env) {
  const BuildInfo& b = GetBuildInfo();
  j.BeginObject("build");
  j.Str("kvbench_version", b.kvbench_version).Str("git_revision", b.git_revision);
  j.Str("preset", b.preset).Str("build_type", b.build_type);
  j.Str("compiler_id", b.compiler_id).Str("compiler_version", b.compiler_version);
  j.Str("cxx_flags", b.cxx_flags).Str("arch_flags", b.arch_flags);
  j.Str("target_arch", b.target_arch).Str("target_cpu", b.target_cpu);
  j.Str("emulator", b.emulator).Bool("assertions", b.assertions);
  j.Str("callgrind_marks", InstructionMarksText());  // kvb --instructions can count it
  j.Str("atomics", env.atomics);                     // AArch64 only, else ""
  // The link's code placement (common/layout.h) and where two hot workloads landed in it.
  j.Str("layout", LayoutText());
  j.Str("layout_symbols",
        "ReadRandom=" + CodeOffset(reinterpret_cast<const void*>(&ReadRandom)) +
            " FillRandom=" + CodeOffset(reinterpret_cast<const void*>(&FillRandom)));
  j.EndObject();
}

void WriteLibraries(JsonWriter& j, const std::vector<LibraryInfo>& libraries) {
  j.BeginArray("libraries");
  for (const auto& l : libraries) {
    j.BeginObject().Str("name", l.name).Str("version", l.version).Str("path", l.path);
    j.Str("compiler", l.compiler).Bool("assertions", l.assertions).Bool("debug_info", l.debug_info);
    j.Str("origin", l.origin).Str("linked_file", l.linked_file).Str("package", l.package);
    j.Str("prefix", l.prefix).Str("source_dir", l.source_dir);
    j.Str("build_compiler", l.build_compiler).Str("build_flags", l.build_flags);
    j.Str("notes", l.notes).Str("atomics", l.atomics);
    j.EndObject();
  }
  j.EndArray();
}

// The run's warnings, then those of each recorded result.
void WriteWarnings(JsonWriter& j, const std::vector<std::string>& run,
                   const std::vector<BenchmarkResult>& results) {
  j.BeginArray("warnings");
  for (const auto& w : run) j.BeginObject().Str("message", w).EndObject();
  for (const auto& r : results) {
    for (const auto& w : r.warnings) j.BeginObject().Str("message", w).EndObject();
  }
  j.EndArray();
}

void WriteEngine(JsonWriter& j, const RunContext& c) {
  j.BeginObject("engine");
  j.Str("name", c.engine).Str("version", c.engine_version).Bool("reference", c.reference_engine);
  j.BeginObject("config");
  for (const auto& [k, v] : c.engine_config) j.Str(k.c_str(), v);
  j.EndObject();
  j.EndObject();
}

void WriteWorkload(JsonWriter& j, const RunConfig& config) {
  const WorkloadOptions& w = config.workload;
  const EngineOptions& e = config.engine_options;
  j.BeginObject("workload");
  j.Int("num", w.num).Int("reads", w.TotalReads()).Int("writes", w.TotalWrites());
  j.Int("key_size", w.key_size).Int("value_size", w.value_size);
  j.Num("compression_ratio", w.compression_ratio).Int("seed", w.seed);
  j.Num("duration_seconds", w.duration_seconds).Int("threads", w.threads);
  j.Int("seek_nexts", w.seek_nexts)
      .Int("latency_sample", w.latency_sample)
      .Num("write_rate_limit_bytes_per_sec", w.write_rate_limit);
  j.Bool("verify", w.verify).Str("op_counts", "total across threads");
  j.Str("db", e.path).Bool("use_existing_db", config.use_existing_db);
  j.Str("compression", e.compression).Int("cache_size_bytes", e.cache_size);
  j.Bool("sync", e.sync).Str("engine_options", e.engine_options);
  j.Num("report_interval_seconds", config.report_interval_seconds);
  j.Str("perf_counters", config.perf_counters.spec);
  j.Str("cpu_affinity", FormatCpuList(config.cpu_affinity));
  j.Str("profile", config.profile.requested ? config.profile.Describe() : "off");
  j.EndObject();
}

// crc32c::Extend's choice on this host (crc32c/crc32c.h): per size class, the kernel and,
// when measured, every kernel's rate at the class's probe length, fastest first.
void WriteCrc32c(JsonWriter& j, const crc32c::Choice& choice) {
  j.BeginObject("crc32c");
  j.Str("chosen_by", crc32c::ChosenByName(choice.chosen_by))
      .Str("how", crc32c::DescribeHow(choice));
  j.Int("repeats", static_cast<uint64_t>(choice.repeats));
  j.Int("interrupted_bursts", static_cast<uint64_t>(choice.interrupted));
  j.Num("calibration_cpu_seconds", choice.calibration_seconds);
  j.Num("calibration_wall_seconds", choice.calibration_wall_seconds);
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  j.BeginArray("classes");
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    j.BeginObject().Int("min_bytes", crc32c::kSizeClasses[c].min_bytes);
    j.Int("probe_bytes", crc32c::kSizeClasses[c].probe_bytes);
    j.Str("kernel", choice.kernel[c] != nullptr ? choice.kernel[c]->name : "");
    j.BeginArray("measured");
    std::vector<size_t> order;
    for (size_t i = 0; i < count; ++i) {
      if (choice.rates[c][i] > 0) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return choice.rates[c][a] > choice.rates[c][b]; });
    for (size_t i : order) {
      j.BeginObject().Str("kernel", impls[i].name).Num("bytes_per_sec", choice.rates[c][i]);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

// Each allowed CPU's speed at the start and, once the run has ended, at the end (env/cpu_speed.h).
void WriteCpuSpeed(JsonWriter& j, const std::vector<CpuSpeed>& start, const NoiseReport* noise) {
  const bool ended = noise != nullptr && noise->measured;
  const std::vector<CpuSpeed> none;
  const std::vector<CpuSpeed>& end = ended ? noise->cpu_speed_end : none;
  j.BeginObject("cpu_speed");
  j.Str("reference_loop", "a 64-bit multiply, add, shift and xor per loop, each on the last");
  j.Int("windows", kAuditWindows).Int("loops_per_window", kAuditLoopsPerWindow);
  j.Num("differs_threshold", kCpuSpeedShare).Num("low_share_threshold", kCpuShareLow);
  j.BeginArray("cpus");
  for (const auto& s : start) {
    j.BeginObject().Int("cpu", static_cast<uint64_t>(s.cpu));
    if (!s.error.empty()) {
      j.Str("start_error", s.error);
    } else {
      j.Num("start_ns_per_loop", s.ns_per_loop)
          .Num("start_median_ns_per_loop", s.median_ns_per_loop);
      j.Num("start_wall_ns_per_loop", s.wall_ns_per_loop).Num("start_cpu_share", s.cpu_share);
      j.Num("start_seconds", s.seconds);
    }
    for (const auto& e : end) {
      if (e.cpu != s.cpu) continue;
      if (!e.error.empty()) {
        j.Str("end_error", e.error);
        continue;
      }
      j.Num("end_ns_per_loop", e.ns_per_loop).Num("end_median_ns_per_loop", e.median_ns_per_loop);
      j.Num("end_wall_ns_per_loop", e.wall_ns_per_loop).Num("end_cpu_share", e.cpu_share);
      j.Num("end_seconds", e.seconds);
      if (s.error.empty() && s.ns_per_loop > 0) {
        j.Num("end_over_start", e.ns_per_loop / s.ns_per_loop);
      }
    }
    j.EndObject();
  }
  j.EndArray();
  j.Num("slowest_over_fastest_start", SlowestOverFastest(start, false));
  j.Num("wall_slowest_over_fastest_start", SlowestOverFastest(start, true));
  if (ended) {
    j.Num("slowest_over_fastest_end", SlowestOverFastest(end, false));
    j.Num("wall_slowest_over_fastest_end", SlowestOverFastest(end, true));
  }
  j.Str("finding", ended ? noise->cpu_speed_finding : AssessCpuSpeeds(start, {}));
  j.EndObject();
}

// The environment audit (env/host_audit.h) and, once the run has ended, its noise (env/noise.h).
void WriteEnvironment(JsonWriter& j, const Environment& env, const NoiseReport* noise) {
  const HostAudit& audit = env.audit;
  j.BeginObject("environment");
  for (const auto& f : audit.facts) j.Str(f.name.c_str(), f.value);
  j.BeginObject("unknown");  // why each "unknown" fact is unknown
  for (const auto& f : audit.facts) {
    if (!f.unknown.empty()) j.Str(f.name.c_str(), f.unknown);
  }
  j.EndObject();
  j.BeginArray("warnings");
  for (const auto& w : audit.warnings) j.Str(nullptr, w);
  j.EndArray();
  const bool measured = noise != nullptr && noise->measured;
  j.BeginObject("during");
  j.Bool("measured", measured);
  if (!measured) {
    j.Str("unknown", noise != nullptr && !noise->unknown.empty()
                         ? noise->unknown
                         : "measured when the run ends; it has not");
  } else {
    j.Num("wall_seconds", noise->wall_seconds).Num("own_cpu_seconds", noise->own_cpu_seconds);
    j.Num("capacity_cpu_seconds", noise->capacity_cpu_seconds);
    j.Num("steal_cpu_seconds", noise->steal_cpu_seconds).Num("steal_share", noise->steal_share);
    j.Num("foreign_cpu_seconds", noise->foreign_cpu_seconds);
    j.Num("foreign_share", noise->foreign_share);
    j.Num("load_average_start", noise->load_start).Num("load_average_end", noise->load_end);
    j.Num("noisy_steal_share_threshold", kNoisyStealShare);
    j.Num("noisy_foreign_share_threshold", kNoisyForeignShare);
  }
  j.EndObject();
  j.Bool("noisy", measured && noise->noisy).Str("noisy_reason", measured ? noise->reason : "");
  WriteCpuSpeed(j, env.noise_start.cpu_speeds, noise);
  j.EndObject();
}

void WriteContext(JsonWriter& j, const RunContext& c, const std::vector<BenchmarkResult>& results) {
  const Environment& env = *c.env;
  j.BeginObject("context");
  j.Str("date_utc", env.date_utc).Str("hostname", env.hostname).Str("kernel", env.kernel);
  j.Str("cpu_model", env.cpu_model).Int("cpu_cores", env.cpu_cores);
  j.Str("cpu_caches", env.cpu_caches).Int("memory_bytes", env.memory_bytes);
  j.Str("clock", env.clock).Str("command_line", c.config->command_line);
  WriteBuild(j, env);
  WriteCrc32c(j, env.crc32c);
  WriteEnvironment(j, env, c.noise);
  WriteLibraries(j, env.libraries);
  WriteWarnings(j, c.warnings, results);
  WriteEngine(j, c);
  WriteWorkload(j, *c.config);
  j.EndObject();
}

// The metrics of one group, as keys of the object being written.
void WriteMetrics(JsonWriter& j, const MetricList& metrics, std::string_view group) {
  for (const auto& m : metrics.items()) {
    if (m.group != group) continue;
    const std::string name(m.name);
    if (m.integer) {
      j.Int(name.c_str(), static_cast<uint64_t>(m.value));
    } else {
      j.Num(name.c_str(), m.value);
    }
  }
}

// The histogram's non-empty buckets, [low_ns, high_ns, count] each, and its shape: enough to draw
// the whole distribution and write a .hgrm file from the document alone (docs/json.md).
void WriteBuckets(JsonWriter& j, const Histogram& h) {
  j.BeginArray("buckets");
  h.ForEachBucket([&j](uint64_t low, uint64_t high, uint64_t n) {
    j.IntRow(nullptr, {low, high, n});
  });
  j.EndArray();
  j.BeginObject("hdr_layout")
      .Int("buckets", Histogram::kHdrBuckets)
      .Int("sub_buckets", Histogram::kHdrSubBuckets)
      .EndObject();
}

// The counters' honesty: whether they were scaled, and what could not be counted and why.
void WriteCounterNotes(JsonWriter& j, const PerfTotals& c) {
  j.Bool("multiplexed", c.multiplexed).Num("counted_fraction", c.counted_fraction);
  if (!c.unavailable.empty()) j.Str("unavailable", c.unavailable);
  if (!c.software_unavailable.empty()) j.Str("software_unavailable", c.software_unavailable);
}

// The paced writer's verdict and what it rests on (stats/delivery.h, result/pacing.h).
void WritePacingVerdict(JsonWriter& j, const RoleResult& role) {
  const DeliveryVerdict& d = role.delivery;
  j.Num("run_seconds", d.run_seconds).Num("due_bytes", d.due_bytes);
  j.Int("delivered_bytes", d.delivered_bytes);
  j.Int("windows", static_cast<uint64_t>(d.windows)).Num("window_seconds", kDeliveryWindowSeconds);
  j.Bool("sustained", role.sustained);
  j.Str("held_back_by", role.held_back_by).Str("note", role.pacing_note);
}

// A role: its fixed fields and top-level metrics, then one object per metric group; the group's
// non-metric fields (the interval series, the pacing target and verdict) sit in its object.
void WriteRole(JsonWriter& j, const RoleResult& role) {
  j.BeginObject();
  j.Str("role", role.role).Int("threads", role.threads).Bool("background", role.background);
  WriteMetrics(j, role.metrics, kRoleGroup);
  if (!role.cpus.empty()) {
    j.BeginArray("cpus");
    for (int cpu : role.cpus) j.Int(nullptr, static_cast<uint64_t>(cpu));
    j.EndArray();
  }
  bool counters_written = false;
  for (const auto& group : role.metrics.Groups()) {
    j.BeginObject(std::string(group).c_str());
    if (group == kPacingGroup) j.Num("target_bytes_per_sec", role.target_bytes_per_sec);
    WriteMetrics(j, role.metrics, group);
    if (group == kIntervalsGroup) {
      j.BeginArray("series");
      for (const auto& in : role.series.intervals()) {
        j.BeginObject().Num("end_seconds", in.end_seconds).Num("seconds", in.seconds);
        j.Int("ops", in.ops).Int("bytes", in.bytes).EndObject();
      }
      j.EndArray();
    }
    if (group == kPacingGroup) WritePacingVerdict(j, role);
    if (group == kLatencyGroup) WriteBuckets(j, role.latency);
    if (group == kCountersGroup) WriteCounterNotes(j, role.counters);
    counters_written = counters_written || group == kCountersGroup;
    j.EndObject();
  }
  if (role.counters.requested && !counters_written) {  // nothing counted: still say why
    j.BeginObject(std::string(kCountersGroup).c_str());
    WriteCounterNotes(j, role.counters);
    j.EndObject();
  }
  j.EndObject();
}

// --profile (docs/json.md, docs/profile.md): per role, its samples and folded stacks.
void WriteProfile(JsonWriter& j, const ProfileResult& p) {
  j.BeginObject("profile");
  j.Str("event", "cpu-clock");
  if (!p.unavailable.empty()) j.Str("unavailable", p.unavailable);
  j.Int("period_ns", p.period_ns).Bool("kernel_frames", p.kernel);
  j.Num("seconds", p.seconds).Int("samples", p.samples());
  j.Num("samples_per_sec", p.seconds > 0 ? static_cast<double>(p.samples()) / p.seconds : 0);
  j.Num("collector_cpu_seconds", p.collector_cpu_seconds);
  j.Num("symbolize_seconds", p.symbolize_seconds);
  j.BeginArray("roles");
  for (const auto& r : p.roles) {
    j.BeginObject().Str("role", r.role).Int("threads", static_cast<uint64_t>(r.threads));
    j.Int("samples", r.samples).Int("lost_samples", r.lost);
    j.BeginArray("folded");
    for (const auto& s : r.stacks) j.StrIntRow(nullptr, s.frames, s.count);
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

void WriteResult(JsonWriter& j, const BenchmarkResult& r) {
  j.BeginObject();
  j.Str("benchmark", r.name).Int("repeat", r.repeat).Int("repeats", r.repeats);
  j.Str("counts", r.count_note).Num("seconds", r.seconds);
  j.Int("db_size_bytes", r.db_size_bytes).Int("rss_bytes", r.rss_bytes);
  j.Int("peak_rss_bytes", r.peak_rss_bytes).Num("cpu_seconds", r.cpu_seconds);
  j.BeginObject("engine_metrics");
  for (const auto& [name, value] : r.engine_metrics) j.Num(name.c_str(), value);
  if (r.write_amplification >= 0) j.Num("write_amplification", r.write_amplification);
  for (const auto& [name, value] : r.engine_kb_per_op) j.Num(name.c_str(), value);
  j.EndObject();
  j.BeginArray("roles");
  for (const auto& role : r.roles) WriteRole(j, role);
  j.EndArray();
  if (r.profile.requested) WriteProfile(j, r.profile);
  j.EndObject();
}

void WriteSummaries(JsonWriter& j, const std::vector<RoleSummary>& summaries) {
  j.BeginArray("summaries");
  for (const auto& rs : summaries) {
    const SampleSummary& s = rs.ops_per_sec;
    j.BeginObject().Str("benchmark", rs.benchmark).Str("role", rs.role).Int("repeats", s.n);
    j.BeginObject("ops_per_sec");
    j.Num("mean", s.mean).Num("median", s.median).Num("stddev", s.stddev).Num("cv", s.cv);
    j.Num("geomean", s.geomean).Num("ci95_low", s.ci95_low).Num("ci95_high", s.ci95_high);
    j.Str("ci95_of", s.log_interval ? "geomean" : "mean");
    j.Num("min", s.min).Num("max", s.max);
    j.EndObject().EndObject();
  }
  j.EndArray();
}

// Every metric the roles carry, once, in first-seen order: where it is in a role object, its
// unit and its better direction, so that tools loop over it instead of their own lists.
void WriteMetricCatalog(JsonWriter& j, const std::vector<BenchmarkResult>& results) {
  std::vector<std::string> paths;
  j.BeginArray("metrics");
  for (const auto& r : results) {
    for (const auto& role : r.roles) {
      for (const auto& m : role.metrics.items()) {
        std::string path = m.Path();
        bool seen = false;
        for (const auto& p : paths) seen = seen || p == path;
        if (seen) continue;
        j.BeginObject().Str("path", path).Str("unit", std::string(m.unit));
        j.Str("better", m.better == Better::kHigher ? "higher" : "lower").EndObject();
        paths.push_back(std::move(path));
      }
    }
  }
  j.EndArray();
}

}  // namespace

JsonOutput AtomicFile(const std::string& path) {
  return JsonOutput([path](const std::string& document) { return WriteOutputFile(path, document); },
                    [path] { return CheckOutputWritable(path); });
}

bool JsonReporter::Start(const RunContext& context) {
  context_ = context;
  // An unwritable path is found now, before anything runs; nothing is written yet.
  const Status s = output_.check ? output_.check() : Status::OK();
  if (!s.ok()) std::fprintf(err_, "kvbench: error: %s\n", s.message().c_str());
  return s.ok();
}

void JsonReporter::Add(const BenchmarkResult& result) {
  if (result.warmup) return;
  results_.push_back(result);
  if (!rewritable_) return;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const double now = static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  if (last_write_ >= 0 && now - last_write_ < kRewriteSeconds) return;
  last_write_ = now;
  Write(false, "the run did not finish (kvbench pid " + std::to_string(getpid()) + ", started " +
                   context_.env->date_utc + "): it is still running, or it was killed");
}

void JsonReporter::Fail(const std::string& message) {
  if (!results_.empty()) Write(false, message);
}

void JsonReporter::AddSummaries(const std::vector<RoleSummary>& summaries) {
  summaries_.insert(summaries_.end(), summaries.begin(), summaries.end());
}

std::string JsonReporter::Document(bool complete, const std::string& error) const {
  JsonWriter j;
  j.BeginObject();
  j.Str("schema", "kvbench-run").Int("schema_version", 1);
  j.Bool("complete", complete);
  if (!complete) j.Str("error", error);
  WriteContext(j, context_, results_);
  j.BeginArray("results");
  for (const auto& r : results_) WriteResult(j, r);
  j.EndArray();
  WriteSummaries(j, summaries_);
  WriteMetricCatalog(j, results_);
  j.EndObject();
  return j.str() + "\n";
}

bool JsonReporter::Write(bool complete, const std::string& error) {
  const Status s = output_(Document(complete, error));
  if (!s.ok()) std::fprintf(err_, "kvbench: error: %s\n", s.message().c_str());
  return s.ok();
}

}  // namespace kvbench
