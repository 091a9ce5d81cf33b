#include "runner/report.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/build_info.h"
#include "kv/registry.h"
#include "runner/json_writer.h"

namespace kvbench {

namespace {

const double kPercentiles[] = {50, 75, 90, 95, 99, 99.9, 99.99};
const char* const kPercentileNames[] = {"p50", "p75", "p90", "p95", "p99", "p99_9", "p99_99"};

std::string FormatBytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return FormatDouble(v, u == 0 ? 0 : 1) + " " + units[u];
}

std::string FormatNs(double ns) {
  if (ns < 1e3) return FormatDouble(ns, 0) + "ns";
  if (ns < 1e6) return FormatDouble(ns / 1e3, 2) + "us";
  if (ns < 1e9) return FormatDouble(ns / 1e6, 2) + "ms";
  return FormatDouble(ns / 1e9, 2) + "s";
}

}  // namespace

std::string FormatDouble(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, v);
  return buf;
}

std::string ProgressFragment(const char* role, const Interval& in, uint64_t ops_so_far,
                             uint64_t ops_total) {
  std::string s = std::string(role) + " " + FormatDouble(in.ops_per_sec(), 0) + " ops/s " +
                  FormatDouble(in.bytes_per_sec() / 1048576.0, 2) + " MB/s";
  if (ops_total > 0) {
    s += " (" + FormatDouble(100.0 * ops_so_far / ops_total, 0) + "% of ops)";
  }
  return s + "  ";
}

void PrintProgress(const char* benchmark, double elapsed, double duration,
                   const std::string& fragments) {
  std::string line = std::string("... ") + benchmark + " " + FormatDouble(elapsed, 1) + "s";
  if (duration > 0) line += " (" + FormatDouble(100.0 * elapsed / duration, 0) + "% of duration)";
  std::fprintf(stderr, "%s: %s\n", line.c_str(), fragments.c_str());
}

void Reporter::Begin(const Engine& engine) {
  engine_name_ = engine.Name();
  engine_version_ = engine.Version();
  engine_config_ = engine.Config();
  const EngineInfo* info = FindEngine(engine_name_);
  reference_engine_ = info != nullptr && info->reference;
  warnings_ = env_.warnings;
  for (const auto& lib : env_.libraries) {  // only the engine this run uses
    if (lib.name == engine_name_ && lib.assertions) {
      warnings_.push_back(lib.name + " (" + lib.path +
                          ") is built with assertions enabled (it calls __assert_fail): every "
                          "operation runs its debug checks, so it is slower than a release build "
                          "of the same version");
    }
  }
  for (const auto& w : engine.BuildWarnings()) warnings_.push_back(w);

  const BuildInfo& b = GetBuildInfo();
  const WorkloadOptions& w = config_.workload;
  std::printf("kvbench:    %s (git %s), preset %s, %s %s %s, %s\n", b.kvbench_version,
              b.git_revision, b.preset, b.compiler_id, b.compiler_version, b.build_type,
              b.cxx_flags);
  std::printf("Date:       %s\n", env_.date_utc.c_str());
  std::printf("CPU:        %d x %s (%s)\n", env_.cpu_cores, env_.cpu_model.c_str(),
              env_.cpu_caches.c_str());
  std::printf("Kernel:     %s; memory %s; clock %s\n", env_.kernel.c_str(),
              FormatBytes(env_.memory_bytes).c_str(), env_.clock.c_str());
  for (const auto& l : env_.libraries) {
    if (!l.version.empty() || !l.path.empty()) {
      std::printf("Library:    %-10s %-8s %s%s%s\n", l.name.c_str(), l.version.c_str(),
                  l.path.c_str(), l.assertions ? " [assertions]" : "",
                  l.compiler.empty() ? "" : ("  " + l.compiler).c_str());
    }
  }
  std::printf("Engine:     %s %s%s\n", engine_name_.c_str(), engine_version_.c_str(),
              reference_engine_ ? "  [REFERENCE engine: not a storage engine]" : "");
  for (const auto& [k, v] : engine_config_) std::printf("  %-34s %s\n", k.c_str(), v.c_str());
  std::printf("Database:   %s%s\n", config_.engine_options.path.c_str(),
              config_.use_existing_db ? " (existing)" : " (emptied at start)");
  std::printf("Keys:       %d bytes each; values %d bytes each (compression ratio %.2f)\n",
              w.key_size, w.value_size, w.compression_ratio);
  std::printf("Entries:    --num=%llu keys; op counts are totals across %d thread%s; seed %llu\n",
              static_cast<unsigned long long>(w.num), w.threads, w.threads == 1 ? "" : "s",
              static_cast<unsigned long long>(w.seed));
  for (const auto& warning : warnings_) std::printf("WARNING:    %s\n", warning.c_str());
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
}

void Reporter::Add(const BenchmarkResult& r) {
  if (r.roles.empty()) {  // settle
    std::printf("%-21s: %11.3f seconds; database %s\n", r.name.c_str(), r.seconds,
                FormatBytes(r.db_size_bytes).c_str());
  }
  std::string run_label;
  if (r.warmup) {
    run_label = " (warm-up " + std::to_string(r.repeat) + "/" + std::to_string(r.repeats) + ")";
  } else if (r.repeats > 1) {
    run_label = " (" + std::to_string(r.repeat) + "/" + std::to_string(r.repeats) + ")";
  }
  for (const auto& role : r.roles) {
    std::string name = r.name;
    if (r.roles.size() > 1) name += " [" + role.role + "]";
    name += run_label;
    const double ops_sec = role.ops_per_sec();
    std::string msg;
    if (role.role == "reader") {
      msg = " (" + std::to_string(role.found) + " of " +
            std::to_string(role.found + role.not_found) + " found)";
    }
    if (role.background) {
      msg = role.target_bytes_per_sec > 0
                ? " (target " + FormatDouble(role.target_bytes_per_sec / 1048576.0, 2) +
                      " MB/s, achieved " + FormatDouble(role.mb_per_sec(), 2) +
                      " MB/s: " + (role.sustained ? "sustained" : "NOT sustained") + ")"
                : " (unpaced)";
    }
    std::printf(
        "%-21s: %11.3f micros/op %9.0f ops/sec %8.3f seconds %10llu operations; %6.1f MB/s%s%s\n",
        name.c_str(), ops_sec > 0 ? 1e6 / ops_sec : 0.0, ops_sec, role.seconds,
        static_cast<unsigned long long>(role.ops), role.mb_per_sec(), msg.c_str(),
        reference_engine_ ? " [reference engine]" : "");
    std::string lat = "    latency: ";
    for (int i = 0; i < 7; ++i) {
      if (!config_.histogram && (i == 1 || i == 2 || i == 3 || i == 6)) continue;
      lat += std::string(kPercentileNames[i]) + " " +
             FormatNs(role.latency.Percentile(kPercentiles[i])) + "  ";
    }
    lat += "max " + FormatNs(static_cast<double>(role.latency.max()));
    std::printf("%s\n", lat.c_str());
    const auto& c = role.cost;
    std::printf("    cost/op: process cpu %.2f us (user %.2f, sys %.2f), own threads %.2f us",
                c.cpu_user_us_per_op + c.cpu_sys_us_per_op, c.cpu_user_us_per_op,
                c.cpu_sys_us_per_op, role.thread_cpu_us_per_op());
    if (c.have_io) {
      std::printf("; storage read %.3f KB, written %.3f KB", c.storage_read_kb_per_op,
                  c.storage_write_kb_per_op);
    }
    std::printf("; ctx switches %.3f voluntary, %.3f involuntary\n", c.voluntary_cs_per_op,
                c.involuntary_cs_per_op);
    if (role.stalls.intervals > 0) {
      const auto& st = role.stalls;
      std::printf(
          "    intervals: %d, median %.0f ops/s, 95%% exceed %.0f, 99%% exceed %.0f, "
          "slowest %.0f, %d below half the median\n",
          st.intervals, st.median_ops_per_sec, st.p95_exceeded, st.p99_exceeded, st.min_ops_per_sec,
          st.below_half_median);
    }
  }
  if (!r.engine_metrics.empty()) {
    std::string line = "    engine:";
    if (r.write_amplification >= 0) {
      line += " write-amp " + FormatDouble(r.write_amplification, 2) + ";";
    }
    for (const auto& [name, value] : r.engine_metrics) {
      line += " " + name + " " + FormatDouble(value, value == static_cast<uint64_t>(value) ? 0 : 2);
    }
    std::printf("%s\n", line.c_str());
  }
  if (!r.roles.empty()) {
    std::printf("    %s; database %s, rss %s (peak %s)\n", r.count_note.c_str(),
                FormatBytes(r.db_size_bytes).c_str(), FormatBytes(r.rss_bytes).c_str(),
                FormatBytes(r.peak_rss_bytes).c_str());
  }
  std::fflush(stdout);
  if (!r.warmup) results_.push_back(r);
}

void Reporter::AddSummary(const std::vector<BenchmarkResult>& repeats) {
  if (repeats.empty()) return;
  for (size_t i = 0; i < repeats[0].roles.size(); ++i) {
    std::vector<double> rates;
    for (const auto& r : repeats) rates.push_back(r.roles[i].ops_per_sec());
    RoleSummary rs{repeats[0].name, repeats[0].roles[i].role, Summarize(rates)};
    const SampleSummary& s = rs.ops_per_sec;
    std::string name = rs.benchmark + " [X" + std::to_string(s.n) + "]";
    if (repeats[0].roles.size() > 1) name += " [" + rs.role + "]";
    std::printf(
        "%-21s: %9.0f ops/sec mean, 95%% CI %.0f..%.0f (+-%.1f%%), median %.0f, "
        "stddev %.0f, cv %.2f%%, min %.0f, max %.0f\n",
        name.c_str(), s.mean, s.ci95_low, s.ci95_high,
        s.mean > 0 ? 100.0 * (s.ci95_high - s.mean) / s.mean : 0.0, s.median, s.stddev,
        100.0 * s.cv, s.min, s.max);
    summaries_.push_back(rs);
  }
  std::fflush(stdout);
}

void Reporter::Fail(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "kvbench: error: %s\n", message.c_str());
  WriteJson(false, message);
}

bool Reporter::Start() {
  return WriteJson(false, "the run did not finish (kvbench pid " + std::to_string(getpid()) +
                              ", started " + env_.date_utc +
                              "): it is still running, or it was killed");
}

bool Reporter::Finish() { return WriteJson(true, ""); }

bool Reporter::WriteJson(bool complete, const std::string& error) {
  if (config_.json_path.empty()) return true;
  const BuildInfo& b = GetBuildInfo();
  const WorkloadOptions& w = config_.workload;
  JsonWriter j;
  j.BeginObject();
  j.Str("schema", "kvbench-run").Int("schema_version", 1);
  j.Bool("complete", complete);
  if (!complete) j.Str("error", error);
  j.BeginObject("context");
  j.Str("date_utc", env_.date_utc).Str("hostname", env_.hostname).Str("kernel", env_.kernel);
  j.Str("cpu_model", env_.cpu_model).Int("cpu_cores", env_.cpu_cores);
  j.Str("cpu_caches", env_.cpu_caches).Int("memory_bytes", env_.memory_bytes);
  j.Str("clock", env_.clock).Str("command_line", config_.command_line);
  j.BeginObject("build");
  j.Str("kvbench_version", b.kvbench_version).Str("git_revision", b.git_revision);
  j.Str("preset", b.preset).Str("build_type", b.build_type);
  j.Str("compiler_id", b.compiler_id).Str("compiler_version", b.compiler_version);
  j.Str("cxx_flags", b.cxx_flags).Str("arch_flags", b.arch_flags);
  j.Str("target_arch", b.target_arch).Bool("assertions", b.assertions);
  j.EndObject();
  j.BeginArray("libraries");
  for (const auto& l : env_.libraries) {
    j.BeginObject().Str("name", l.name).Str("version", l.version).Str("path", l.path);
    j.Str("compiler", l.compiler).Bool("assertions", l.assertions).Bool("debug_info", l.debug_info);
    j.EndObject();
  }
  j.EndArray();
  j.BeginArray("warnings");
  for (const auto& warning : warnings_.empty() ? env_.warnings : warnings_) {
    j.BeginObject().Str("message", warning).EndObject();
  }
  j.EndArray();
  j.BeginObject("engine");
  j.Str("name", engine_name_.empty() ? config_.engine : engine_name_);
  j.Str("version", engine_version_).Bool("reference", reference_engine_);
  j.BeginObject("config");
  for (const auto& [k, v] : engine_config_) j.Str(k.c_str(), v);
  j.EndObject();
  j.EndObject();
  j.BeginObject("workload");
  j.Int("num", w.num).Int("reads", w.TotalReads()).Int("writes", w.TotalWrites());
  j.Int("key_size", w.key_size).Int("value_size", w.value_size);
  j.Num("compression_ratio", w.compression_ratio).Int("seed", w.seed);
  j.Num("duration_seconds", w.duration_seconds).Int("threads", w.threads);
  j.Int("seek_nexts", w.seek_nexts).Num("write_rate_limit_bytes_per_sec", w.write_rate_limit);
  j.Bool("verify", w.verify).Str("op_counts", "total across threads");
  j.Str("db", config_.engine_options.path).Bool("use_existing_db", config_.use_existing_db);
  j.Str("compression", config_.engine_options.compression);
  j.Int("cache_size_bytes", config_.engine_options.cache_size);
  j.Bool("sync", config_.engine_options.sync);
  j.Str("engine_options", config_.engine_options.engine_options);
  j.Num("report_interval_seconds", config_.report_interval_seconds);
  j.EndObject();
  j.EndObject();  // context

  j.BeginArray("results");
  for (const auto& r : results_) {
    j.BeginObject();
    j.Str("benchmark", r.name).Int("repeat", r.repeat).Int("repeats", r.repeats);
    j.Str("counts", r.count_note).Num("seconds", r.seconds);
    j.Int("db_size_bytes", r.db_size_bytes).Int("rss_bytes", r.rss_bytes);
    j.Int("peak_rss_bytes", r.peak_rss_bytes).Num("cpu_seconds", r.cpu_seconds);
    j.BeginObject("engine_metrics");
    for (const auto& [name, value] : r.engine_metrics) j.Num(name.c_str(), value);
    if (r.write_amplification >= 0) j.Num("write_amplification", r.write_amplification);
    j.EndObject();
    j.BeginArray("roles");
    for (const auto& role : r.roles) {
      j.BeginObject();
      j.Str("role", role.role).Int("threads", role.threads).Bool("background", role.background);
      j.Int("ops", role.ops).Int("bytes", role.bytes).Num("seconds", role.seconds);
      j.Num("ops_per_sec", role.ops_per_sec()).Num("mb_per_sec", role.mb_per_sec());
      j.Int("found", role.found).Int("not_found", role.not_found).Int("entries", role.entries);
      j.BeginObject("latency_ns");
      j.Int("count", role.latency.count()).Num("mean", role.latency.mean());
      j.Int("min", role.latency.min());
      for (int i = 0; i < 7; ++i)
        j.Num(kPercentileNames[i], role.latency.Percentile(kPercentiles[i]));
      j.Int("max", role.latency.max());
      j.EndObject();
      const auto& c = role.cost;
      j.BeginObject("cost");
      j.Num("cpu_user_us_per_op", c.cpu_user_us_per_op)
          .Num("cpu_sys_us_per_op", c.cpu_sys_us_per_op);
      j.Num("thread_cpu_us_per_op", role.thread_cpu_us_per_op());
      if (c.have_io) {
        j.Num("storage_read_kb_per_op", c.storage_read_kb_per_op);
        j.Num("storage_write_kb_per_op", c.storage_write_kb_per_op);
        j.Num("syscall_read_kb_per_op", c.syscall_read_kb_per_op);
        j.Num("syscall_write_kb_per_op", c.syscall_write_kb_per_op);
      }
      j.Num("voluntary_cs_per_op", c.voluntary_cs_per_op);
      j.Num("involuntary_cs_per_op", c.involuntary_cs_per_op);
      j.EndObject();
      j.BeginObject("intervals");
      j.Int("count", role.stalls.intervals)
          .Num("median_ops_per_sec", role.stalls.median_ops_per_sec);
      j.Num("p95_exceeded_ops_per_sec", role.stalls.p95_exceeded);
      j.Num("p99_exceeded_ops_per_sec", role.stalls.p99_exceeded);
      j.Num("min_ops_per_sec", role.stalls.min_ops_per_sec);
      j.Int("below_half_median", role.stalls.below_half_median);
      j.BeginArray("series");
      for (const auto& in : role.series.intervals()) {
        j.BeginObject().Num("end_seconds", in.end_seconds).Num("seconds", in.seconds);
        j.Int("ops", in.ops).Int("bytes", in.bytes).EndObject();
      }
      j.EndArray();
      j.EndObject();
      if (role.background) {
        j.BeginObject("pacing");
        j.Num("target_bytes_per_sec", role.target_bytes_per_sec);
        j.Num("achieved_bytes_per_sec", role.mb_per_sec() * 1048576.0);
        j.Num("p99_exceeded_bytes_per_sec", role.byte_stalls.p99_exceeded);
        j.Bool("sustained", role.sustained);
        j.EndObject();
      }
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.BeginArray("summaries");
  for (const auto& rs : summaries_) {
    const SampleSummary& s = rs.ops_per_sec;
    j.BeginObject().Str("benchmark", rs.benchmark).Str("role", rs.role).Int("repeats", s.n);
    j.BeginObject("ops_per_sec");
    j.Num("mean", s.mean).Num("median", s.median).Num("stddev", s.stddev).Num("cv", s.cv);
    j.Num("ci95_low", s.ci95_low).Num("ci95_high", s.ci95_high);
    j.Num("min", s.min).Num("max", s.max);
    j.EndObject().EndObject();
  }
  j.EndArray();
  j.EndObject();

  const std::string tmp = config_.json_path + ".tmp";
  std::FILE* out = std::fopen(tmp.c_str(), "w");
  if (out == nullptr) {
    std::fprintf(stderr, "kvbench: error: cannot write %s: %s\n", tmp.c_str(),
                 std::strerror(errno));
    return false;
  }
  const std::string text = j.str() + "\n";
  const bool written = std::fwrite(text.data(), 1, text.size(), out) == text.size();
  const int write_errno = errno;
  if (std::fclose(out) != 0 || !written) {
    std::fprintf(stderr, "kvbench: error: cannot write %s: %s\n", tmp.c_str(),
                 std::strerror(written ? errno : write_errno));
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), config_.json_path.c_str()) != 0) {
    std::fprintf(stderr, "kvbench: error: cannot rename %s to %s: %s\n", tmp.c_str(),
                 config_.json_path.c_str(), std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace kvbench
