// The benchmark runner: locks and opens the database, runs each --benchmarks item's warm-ups and
// measured runs (the threads of one run: benchmark_threads.h), measures the process around each,
// and hands every result to the reporter.
#include "runner/runner.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "common/cpu_affinity.h"
#include "common/file_output.h"
#include "common/limits.h"
#include "common/random.h"
#include "env/environment.h"
#include "env/io_bound.h"
#include "kv/database_dir.h"
#include "kv/registry.h"
#include "result/engine_cost.h"
#include "result/pacing.h"
#include "result/role_metrics.h"
#include "runner/benchmark_threads.h"
#include "runner/signal_watcher.h"
#include "workload/benchmark.h"

namespace kvbench {

namespace {

// Pairs the engine's figures from before and after a benchmark; derives write amplification.
void RecordEngineMetrics(const std::vector<EngineMetric>& before,
                         const std::vector<EngineMetric>& after, BenchmarkResult* result) {
  double user = -1, engine = -1;
  for (const auto& m : after) {
    double v = m.value;
    if (m.cumulative) {
      for (const auto& b : before) {
        if (b.name == m.name) v -= b.value;
      }
    }
    result->engine_metrics.emplace_back(m.name, v);
    if (m.name == "user_bytes_written") user = v;
    if (m.name == "flush_compaction_bytes_written") engine = v;
  }
  if (user > 0 && engine >= 0) result->write_amplification = engine / user;
}

// The device counters are device-wide: say so when they read clearly more than this process did
// (other processes on the same device), so reads/op is not taken as the engine's alone.
std::string SharedDeviceNote(const ResourceSnapshot& before, const ResourceSnapshot& after,
                             const BenchmarkResult& r) {
  if (r.roles.empty() || !r.roles[0].device.valid || !after.have_io) return "";
  const double device = static_cast<double>(r.roles[0].device.read_bytes);
  const double own = static_cast<double>(after.storage_read_bytes - before.storage_read_bytes);
  // Below 0.1 KB/op the device figure says "no reads" whoever made them.
  if (r.roles[0].device.read_kb_per_op < 0.1 || device <= 1.25 * own) return "";
  // Amounts under 1 MiB in KiB: "read 0 MiB, this process 0 MiB" explained nothing.
  const auto amount = [](double bytes) {
    return bytes < 1048576 ? std::to_string(static_cast<uint64_t>(bytes / 1024)) + " KiB"
                           : std::to_string(static_cast<uint64_t>(bytes / 1048576)) + " MiB";
  };
  return r.name + ": the device " + r.roles[0].device.device + " read " + amount(device) +
         ", this process " + amount(own) +
         ": other processes read from it too, so device reads/op overstate the engine's";
}

// verifyacked's verdict when acknowledged writes are missing.
std::string LostWritesMessage(const RoleResult& r, uint64_t acked) {
  const uint64_t checked = r.found + r.not_found;
  std::string m = "verifyacked: " + std::to_string(r.not_found) + " of " + std::to_string(checked) +
                  " acknowledged writes lost (first lost key " + std::to_string(r.first_not_found);
  if (checked < acked) {
    m += "; --duration ended the check after " + std::to_string(checked) + " of " +
         std::to_string(acked);
  }
  return m + ")";
}

// Reads of keys 0..num-1 on an existing database that lacks some of them: the database was
// filled with a smaller --num (or another --key_size), and ops/s of a mix of hits and misses is
// not the figure a reader of the line expects.
std::string PartialReadWarning(const BenchmarkResult& r, const RunConfig& config, uint64_t looked) {
  const RoleResult& reader = r.roles[0];
  if (!config.use_existing_db || reader.not_found == 0) return "";
  const WorkloadOptions& w = config.workload;
  return r.name + ": " + std::to_string(reader.found) + " of " + std::to_string(looked) +
         " found (" + std::to_string(100 * reader.found / looked) + "%): the database at " +
         config.engine_options.path + " lacks some of the keys 0.." + std::to_string(w.num - 1) +
         " of --key_size=" + std::to_string(w.key_size) +
         "; was it filled with a smaller --num? Reads that miss are cheaper than reads that hit";
}

// A reader that found nothing, on a database this run knows holds no keys, or one that has none of
// the keys this run looks for: say why, since "0 of N found" alone looks like a result; one that
// found only some, where misses are absent keys: PartialReadWarning. "" otherwise, or when writes
// earlier in this run make it the engine's business.
std::string EmptyReadWarning(const BenchmarkResult& r, const RunConfig& config, bool keys_written,
                             bool misses_are_absent_keys) {
  const RoleResult& reader = r.roles[0];
  if (reader.role != RoleName(Role::kReader) || keys_written) return "";
  const uint64_t looked = reader.found + reader.not_found;
  if (reader.found > 0) {
    return misses_are_absent_keys ? PartialReadWarning(r, config, looked) : "";
  }
  const std::string what =
      r.name + ": " +
      (looked > 0 ? "0 of " + std::to_string(looked) + " found" : std::string("nothing to read"));
  if (!config.use_existing_db) {
    return what + ": the database is empty (kvbench empties --db at start); run fillseq first " +
           "(--benchmarks=fillseq," + r.name + ") or pass --use_existing_db";
  }
  const WorkloadOptions& w = config.workload;
  return what + ": the database at " + config.engine_options.path + " has none of the keys 0.." +
         std::to_string(w.num - 1) + " of --key_size=" + std::to_string(w.key_size) +
         "; was it filled with another --num or --key_size, or not at all?";
}

// Per role, the spread of ops/s over the measured repeats of one benchmark.
std::vector<RoleSummary> SummarizeRoles(const std::vector<BenchmarkResult>& repeats) {
  std::vector<RoleSummary> summaries;
  if (repeats.empty()) return summaries;
  for (size_t i = 0; i < repeats[0].roles.size(); ++i) {
    std::vector<double> rates;
    rates.reserve(repeats.size());
    for (const auto& r : repeats) rates.push_back(r.roles[i].ops_per_sec());
    summaries.push_back({repeats[0].name, repeats[0].roles[i].role, Summarize(rates)});
  }
  return summaries;
}

class Runner {
 public:
  Runner(const RunConfig& c, Reporter& reporter)
      : config_(c),
        reporter_(reporter),
        keys_(c.workload.key_size),
        values_(c.workload.seed, c.workload.compression_ratio, c.workload.value_size) {}

  int Run();

 private:
  // From the signal thread: remembers the first signal and stops the running benchmark.
  void Interrupt(int sig);
  // Ends an interrupted run: what finished is in the JSON document, marked incomplete.
  int Interrupted(const std::string& during);
  // Locks and opens the database, then runs every plan; the exit code so far.
  int OpenAndRunAll(RunContext* context);
  // The warm-ups and measured runs of one --benchmarks item.
  int RunPlan(const BenchmarkPlan& plan, int index);
  // Closes the engine, removes a database the run created in the default directory, and ends
  // the report; the exit code.
  int Conclude(int rc);
  Status OpenEngine(bool create);
  Status RunOne(const BenchmarkSpec& spec, int index, BenchmarkResult* result);
  Status RunThreads(const BenchmarkSpec& spec, int index, BenchmarkResult* result,
                    std::unique_ptr<Profiler>* profiler);

  const RunConfig& config_;
  Reporter& reporter_;
  KeyFormat keys_;
  ValueSource values_;
  std::unique_ptr<DatabaseLock> lock_;  // held from before the first open to the end
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<AckLog> ack_log_;  // --ack_file, as the last fill or verifyacked opened it
  StopSignal stop_;                  // a signal, or the end of the main workers, stops a run
  bool keys_written_ = false;        // a writer of this run has put keys in the database
  NoiseSnapshot noise_start_;        // Environment::Collect's, at the start of the run
  NoiseReport noise_;                // the whole run's, once it has ended (RunContext::noise)
};

void Runner::Interrupt(int sig) {
  stop_.signal.store(sig);
  stop_.stop.store(true);
  std::lock_guard<std::mutex> l(stop_.mu);
  stop_.cv.notify_all();
}

Status Runner::OpenEngine(bool create) {
  if (engine_) {
    Status s = engine_->Close();
    engine_.reset();
    if (!s.ok()) return s;
  }
  EngineOptions eo = config_.engine_options;
  eo.create = create;
  eo.max_sessions = config_.workload.threads + 1;
  eo.expected_bytes = config_.workload.num * static_cast<uint64_t>(config_.workload.key_size +
                                                                   config_.workload.value_size);
  eo.expected_keys = config_.workload.num;
  Status s = create ? PrepareNewDatabase(eo.path, config_.engine)
                    : CheckExistingDatabase(eo.path, config_.engine);
  if (!s.ok()) return s;
  return kvbench::OpenEngine(config_.engine, eo, &engine_);
}

Status Runner::RunOne(const BenchmarkSpec& spec, int index, BenchmarkResult* result) {
  result->name = spec.name;
  const bool ack = !config_.ack_file.empty();
  if (ack && spec.acks != AckKind::kNone) {
    // Zero counts are in place before the database is emptied: a crash in between leaves a log
    // that claims nothing, never an older one claiming writes the emptying removed.
    ack_log_.reset();
    Status s =
        AckLog::Create(config_.ack_file, AckHeader::For(spec.acks, config_.workload), &ack_log_);
    if (!s.ok()) return s;
  }
  if (spec.fresh_db && !config_.use_existing_db) {
    Status s = OpenEngine(/*create=*/true);
    if (!s.ok()) return s;
  }
  if (ack && spec.checks_acks) {
    // Read from the file, as a run after a crash would, even when a fill of this run wrote it.
    ack_log_.reset();
    Status s = AckLog::Open(config_.ack_file, &ack_log_);
    if (s.ok()) s = ack_log_->CheckMatches(config_.workload);
    if (!s.ok()) return s;
  }
  if (config_.drop_caches && !spec.fresh_db && spec.work != nullptr) {
    Status s = DropCaches();
    if (!s.ok()) return s;
  }
  const std::vector<EngineMetric> metrics_before = engine_->Metrics();
  const DiskSnapshot disk_before = DiskSnapshot::Take(config_.engine_options.path);
  const ResourceSnapshot before = ResourceSnapshot::Take();
  const uint64_t t0 = Clock::MonotonicNanos();
  Status s;
  std::unique_ptr<Profiler> profiler;
  if (spec.work == nullptr) {
    s = engine_->Settle();
  } else {
    s = RunThreads(spec, index, result, &profiler);
  }
  result->seconds = (Clock::MonotonicNanos() - t0) / 1e9;
  const ResourceSnapshot after = ResourceSnapshot::Take();
  const DiskSnapshot disk_after = DiskSnapshot::Take(config_.engine_options.path);
  // Symbolized only now: its file reading is no part of the costs above.
  if (profiler) {
    result->profile = profiler->Result();
    if (!profiler->missed().empty() && result->profile.unavailable.empty()) {
      result->warnings.push_back("profile: a thread was not sampled: " + profiler->missed());
    }
  }
  if (spec.work != nullptr && config_.profile.requested && !config_.profile.enabled) {
    result->profile.requested = true;
    result->profile.unavailable = config_.profile.unavailable;
  }
  for (auto& r : result->roles) {
    r.cost = CostPerOp(before, after, r.ops);
    r.device = DeviceCostPerOp(disk_before, disk_after, r.ops);
    AddRoleMetrics(&r);
  }
  result->cpu_seconds = CostPerOp(before, after, 0).cpu_seconds;
  result->rss_bytes = after.rss_bytes;
  result->peak_rss_bytes = after.peak_rss_bytes;
  result->db_size_bytes = engine_->SizeOnDisk();
  const std::vector<EngineMetric> metrics_after = engine_->Metrics();
  RecordEngineMetrics(metrics_before, metrics_after, result);
  const std::string shared = SharedDeviceNote(before, after, *result);
  if (!shared.empty()) result->warnings.push_back(shared);
  AddEngineKbPerOp(metrics_after, result);
  for (auto& w : EngineWarnings(*result)) result->warnings.push_back(std::move(w));
  ExplainPacing(engine_->Name(), result);
  return s;
}

Status Runner::RunThreads(const BenchmarkSpec& spec, int index, BenchmarkResult* result,
                          std::unique_ptr<Profiler>* profiler) {
  const WorkloadOptions& wo = config_.workload;
  // Cleared first, then the signal looked at: a signal arriving in between still stops the run.
  stop_.stop.store(false);
  if (stop_.signal.load() != 0) stop_.stop.store(true);
  BenchmarkThreads threads(wo, keys_, values_, &stop_);
  threads.Configure(config_.cpu_affinity, config_.perf_counters, config_.profile);
  Status s = threads.Prepare(spec, index, engine_.get(), ack_log_.get(), result);
  if (!s.ok()) return s;
  const uint64_t acked = spec.checks_acks && ack_log_ ? ack_log_->TotalAcknowledged() : 0;
  result->count_note = spec.CountNote(wo, acked);
  // With --duration, read and overwrite loops ignore their counts: no "% of ops" then, only the
  // progress line's "% of duration". Fills stop at --num or the deadline, whichever is first.
  const uint64_t main_total =
      wo.duration_seconds > 0 && !spec.Bounded() ? 0 : spec.MainCount(wo, acked);
  threads.Start();
  threads.Sample(
      config_.report_interval_seconds, main_total, spec.name,
      [this](const ProgressUpdate& p) { reporter_.Progress(p); }, result);
  s = threads.Finish(config_.report_interval_seconds, result);
  *profiler = threads.TakeProfiler();
  return s;
}

int Runner::Run() {
  // First, before any thread exists (see SignalWatcher). Never destroyed: its thread may be in
  // sigwait when the process exits. kvbench runs one Runner per process, the one it calls.
  static SignalWatcher* const watcher = new SignalWatcher([this](int sig) { Interrupt(sig); });
  (void)watcher;
  Clock::Init();
  // Writes past RLIMIT_FSIZE must come back as errors to report, not kill the process.
  signal(SIGXFSZ, SIG_IGN);

  Environment env = Environment::Collect(&EngineLibrary, config_.engine_options.path);
  // Each allowed CPU's speed now and at the end (env/cpu_speed.h): a slow vCPU is named.
  env.noise_start.cpu_speeds = MeasureCpuSpeeds(AllowedCpus());
  RunContext context;
  context.noise = &noise_;  // filled in by Conclude, before the reporters finish
  context.config = &config_;
  context.env = &env;
  noise_start_ = env.noise_start;
  context.engine = config_.engine;
  context.warnings = env.warnings;
  // An unwritable --json is found now, not after the run. Nothing is written to it before this
  // run has a result (report/json_reporter.h): a run refused before its first benchmark leaves
  // an older document there as it was.
  if (!reporter_.Start(context)) return 1;
  return Conclude(OpenAndRunAll(&context));
}

int Runner::Interrupted(const std::string& during) {
  const int sig = stop_.signal.load();
  if (engine_) {
    engine_->Close();
    engine_.reset();
  }
  reporter_.Fail(std::string("interrupted by ") + SignalName(sig) + during +
                 "; only the benchmarks that finished before it are reported");
  return 128 + sig;
}

int Runner::OpenAndRunAll(RunContext* context) {
  const bool create = !config_.use_existing_db;
  const std::string& path = config_.engine_options.path;
  Status s = DatabaseLock::Acquire(path, create, &lock_);
  if (!s.ok()) {
    reporter_.Fail(s.message());  // says what and where; the code name would add nothing
    return 1;
  }
  // The database is about to be emptied: an ack file of an earlier fill would claim writes that
  // are no longer there. (Each fill then creates its own before it empties the database.) A
  // link's target is removed, not the link; a device or FIFO is left alone (the fill refuses it).
  OutputTarget acks;
  if (create && !config_.ack_file.empty() && ResolveOutput(config_.ack_file, &acks).ok() &&
      !acks.in_place && unlink(acks.path.c_str()) != 0 && errno != ENOENT) {
    reporter_.Fail("cannot remove the old --ack_file " + acks.path + ": " + strerror(errno));
    return 1;
  }
  // Like db_bench: without --use_existing_db the database starts empty.
  s = OpenEngine(create);
  if (!s.ok()) {
    const char* hint = config_.default_db && !create
                           ? " (the default --db is removed after each run unless --keep_db)"
                           : "";
    reporter_.Fail("cannot open " + config_.engine + " at " + path + ": " + s.ToString() + hint);
    return 1;
  }
  if (stop_.signal.load() != 0) return Interrupted(" while opening the database");
  context->engine = engine_->Name();
  context->engine_version = engine_->Version();
  context->engine_config = engine_->Config();
  if (!config_.io_bound_mechanism.empty()) {
    context->engine_config.emplace_back("io_bound", config_.io_bound_mechanism);
  }
  if (config_.drop_caches) {
    context->engine_config.emplace_back("drop_caches", "before each benchmark on existing data");
  }
  const EngineInfo* info = FindEngine(context->engine);
  context->reference_engine = info != nullptr && info->reference;
  context->warnings = RunWarnings(*context->env, context->engine, engine_->BuildWarnings());
  if (config_.workload.latency_sample > 1) {
    const std::string n = std::to_string(config_.workload.latency_sample);
    context->warnings.push_back("latency is sampled: one op in " + n +
                                " is timed (--latency_sample=" + n +
                                "); throughput counts every op");
  }
  reporter_.Begin(*context);
  for (size_t i = 0; i < config_.benchmarks.size(); ++i) {
    const int rc = RunPlan(config_.benchmarks[i], static_cast<int>(i));
    if (rc != 0) return rc;
  }
  return 0;
}

int Runner::RunPlan(const BenchmarkPlan& plan, int index) {
  const BenchmarkSpec* spec = FindBenchmark(plan.name);
  std::vector<BenchmarkResult> measured;
  for (int run = 0; run < plan.warmups + plan.repeats; ++run) {
    BenchmarkResult result;
    result.warmup = run < plan.warmups;
    result.repeat = result.warmup ? run + 1 : run - plan.warmups + 1;
    result.repeats = result.warmup ? plan.warmups : plan.repeats;
    // Each run draws its own keys: the seed stream depends on the run as well as the benchmark.
    Status s = RunOne(*spec, index * kMaxRunsPerBenchmark + run, &result);
    if (stop_.signal.load() != 0) return Interrupted(std::string(" during ") + spec->name);
    if (!s.ok()) {
      reporter_.Fail(std::string(spec->name) + " failed: " + s.ToString());
      return 1;
    }
    if (!spec->checks_acks && !result.roles.empty()) {  // verifyacked calls a miss a lost write
      const std::string w =
          EmptyReadWarning(result, config_, keys_written_, spec->misses_are_absent_keys);
      if (!w.empty()) result.warnings.push_back(w);
    }
    for (const auto& role : result.roles) {
      keys_written_ = keys_written_ || (role.role == RoleName(Role::kWriter) && role.ops > 0);
    }
    reporter_.Add(result);
    if (spec->checks_acks && result.roles[0].not_found > 0) {
      reporter_.Fail(LostWritesMessage(result.roles[0], ack_log_->TotalAcknowledged()));
      return 1;
    }
    if (!result.warmup) measured.push_back(std::move(result));
  }
  if (plan.repeats > 1) reporter_.AddSummaries(SummarizeRoles(measured));
  return 0;
}

// Closes the engine, removes the database the run created in the default directory, and ends
// the report: whatever `rc` the run ended with.
int Runner::Conclude(int rc) {
  if (engine_) {
    Status s = engine_->Close();
    engine_.reset();
    if (!s.ok() && rc == 0) {
      reporter_.Fail("closing the database failed: " + s.ToString());
      rc = 1;
    }
  }
  if (lock_ != nullptr && config_.RemovesDatabase()) {
    Status s = RemoveDatabase(config_.engine_options.path);
    if (!s.ok() && rc == 0) {
      reporter_.Fail("cannot remove the database (--keep_db keeps it): " + s.ToString());
      rc = 1;
    }
  }
  lock_.reset();
  if (rc != 0) return rc;
  NoiseSnapshot end = TakeNoiseSnapshot();
  end.cpu_speeds = MeasureCpuSpeeds(AllowedCpus());
  noise_ = AssessNoise(noise_start_, end, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                       static_cast<double>(sysconf(_SC_CLK_TCK)));
  return reporter_.Finish() ? 0 : 1;
}

}  // namespace

int RunBenchmarks(const RunConfig& config, Reporter& reporter) {
  Runner runner(config, reporter);
  return runner.Run();
}

}  // namespace kvbench
