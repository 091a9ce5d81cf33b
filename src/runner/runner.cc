// The benchmark runner: opens the engine, runs each benchmark's threads behind a start barrier,
// samples their counters once per interval, and hands the results to the reporters.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <thread>

#include "common/limits.h"
#include "common/random.h"
#include "env/environment.h"
#include "kv/database_dir.h"
#include "kv/registry.h"
#include "report/format.h"
#include "result/role_metrics.h"
#include "runner/runner.h"
#include "workload/benchmark.h"

namespace kvbench {

namespace {

// Threads wait at the barrier until every thread exists and the clock has started.
class StartBarrier {
 public:
  void Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// SIGINT and SIGTERM end a run cleanly: the workers stop, the finished benchmarks are written to
// the JSON document (marked incomplete) and the process exits with 128 + the signal. The signals
// are blocked in every thread (threads inherit the mask of the thread that creates them, so this
// must run before any other thread exists) and taken by one thread with sigwait, so the callback
// runs as ordinary code, not in a signal handler. A second signal ends the process at once.
class SignalWatcher {
 public:
  explicit SignalWatcher(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    // Detached: it waits for a signal that may never come; the process exits around it.
    std::thread([this] {
      int sig = 0;
      bool first = true;
      while (sigwait(&set_, &sig) == 0) {
        if (!first) _exit(128 + sig);
        first = false;
        on_signal_(sig);
      }
    }).detach();
  }

 private:
  sigset_t set_;
  std::function<void(int)> on_signal_;
};

const char* SignalName(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

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

uint64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
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

// Per role, the spread of ops/s over the measured repeats of one benchmark.
std::vector<RoleSummary> SummarizeRoles(const std::vector<BenchmarkResult>& repeats) {
  std::vector<RoleSummary> summaries;
  if (repeats.empty()) return summaries;
  for (size_t i = 0; i < repeats[0].roles.size(); ++i) {
    std::vector<double> rates;
    for (const auto& r : repeats) rates.push_back(r.roles[i].ops_per_sec());
    summaries.push_back({repeats[0].name, repeats[0].roles[i].role, Summarize(rates)});
  }
  return summaries;
}

struct RoleRun {
  const char* role;
  bool background;
  WorkFn fn;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<uint64_t> end_ticks;
  std::vector<uint64_t> cpu_ns;  // each thread's own CPU time over its loop
  uint64_t last_ops = 0, last_bytes = 0;
  std::unique_ptr<RateLimiter> limiter;

  void Sum(uint64_t* ops, uint64_t* bytes) const {
    *ops = *bytes = 0;
    for (const auto& w : workers) {
      *ops += w->stats.published_ops.load(std::memory_order_relaxed);
      *bytes += w->stats.published_bytes.load(std::memory_order_relaxed);
    }
  }
};

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
  int Conclude(int rc);
  Status OpenEngine(bool create);
  Status RunOne(const BenchmarkSpec& spec, int index, BenchmarkResult* result);
  Status RunThreads(const BenchmarkSpec& spec, int index, BenchmarkResult* result);

  const RunConfig& config_;
  Reporter& reporter_;
  KeyFormat keys_;
  ValueSource values_;
  std::unique_ptr<DatabaseLock> lock_;  // held from before the first open to the end
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<AckLog> ack_log_;  // --ack_file, as the last fill or verifyacked opened it
  std::atomic<int> signal_{0};       // the first SIGINT/SIGTERM received; 0 = none
  std::atomic<bool> stop_{false};    // the running benchmark's workers stop when set
  std::mutex done_mu_;               // guards the count of finished workers; with done_cv_,
  std::condition_variable done_cv_;  // wakes the sampling loop when a worker or a signal ends
};

void Runner::Interrupt(int sig) {
  signal_.store(sig);
  stop_.store(true);
  std::lock_guard<std::mutex> l(done_mu_);
  done_cv_.notify_all();
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
  const std::vector<EngineMetric> metrics_before = engine_->Metrics();
  const ResourceSnapshot before = ResourceSnapshot::Take();
  const uint64_t t0 = Clock::MonotonicNanos();
  Status s;
  if (spec.work == nullptr) {
    s = engine_->Settle();
  } else {
    s = RunThreads(spec, index, result);
  }
  result->seconds = (Clock::MonotonicNanos() - t0) / 1e9;
  const ResourceSnapshot after = ResourceSnapshot::Take();
  for (auto& r : result->roles) {
    r.cost = CostPerOp(before, after, r.ops);
    AddRoleMetrics(&r);
  }
  result->cpu_seconds = CostPerOp(before, after, 0).cpu_seconds;
  result->rss_bytes = after.rss_bytes;
  result->peak_rss_bytes = after.peak_rss_bytes;
  result->db_size_bytes = engine_->SizeOnDisk();
  RecordEngineMetrics(metrics_before, engine_->Metrics(), result);
  return s;
}

Status Runner::RunThreads(const BenchmarkSpec& spec, int index, BenchmarkResult* result) {
  const WorkloadOptions& wo = config_.workload;
  // Cleared first, then the signal looked at: a signal arriving in between still stops the run.
  std::atomic<bool>& stop = stop_;
  stop.store(false);
  if (signal_.load() != 0) stop.store(true);
  std::vector<RoleRun> roles;
  roles.push_back({RoleName(spec.role), false, spec.work, {}, {}, {}, 0, 0, nullptr});
  if (spec.background != nullptr) {
    roles.push_back({"writer", true, spec.background, {}, {}, {}, 0, 0, nullptr});
    if (wo.write_rate_limit > 0) {
      roles.back().limiter = std::make_unique<RateLimiter>(wo.write_rate_limit, SystemPacerClock());
      roles.back().limiter->StopWhen(&stop);
    }
  }
  std::vector<std::unique_ptr<Session>> sessions;
  int thread_id = 0;
  for (auto& r : roles) {
    const int n = r.background ? 1 : wo.threads;
    for (int i = 0; i < n; ++i, ++thread_id) {
      std::unique_ptr<Session> session;
      Status s = engine_->NewSession(&session);
      if (!s.ok()) return s;
      // Seeds unique per benchmark and thread, repeatable for the same --seed.
      const uint64_t seed = Mix64(wo.seed ^ Mix64(static_cast<uint64_t>(index) << 20 | thread_id));
      r.workers.push_back(std::make_unique<Worker>(i, n, seed, session.get(), wo, keys_, values_,
                                                   &stop, 0, r.limiter.get()));
      if (!r.background && spec.UsesAckFile()) {
        r.workers.back()->ack_log = ack_log_.get();
      }
      sessions.push_back(std::move(session));
    }
    r.end_ticks.assign(n, 0);
    r.cpu_ns.assign(n, 0);
    RoleResult rr;
    rr.role = r.role;
    rr.background = r.background;
    rr.threads = n;
    result->roles.push_back(std::move(rr));
  }
  const uint64_t acked = spec.checks_acks && ack_log_ ? ack_log_->TotalAcknowledged() : 0;
  result->count_note = spec.CountNote(wo, acked);

  const int main_threads = wo.threads;
  StartBarrier barrier;
  std::mutex& done_mu = done_mu_;
  std::condition_variable& done_cv = done_cv_;
  int main_done = 0;
  uint64_t start_ticks = 0;
  std::vector<std::thread> threads;
  for (auto& r : roles) {
    for (size_t i = 0; i < r.workers.size(); ++i) {
      threads.emplace_back([&, rp = &r, i] {
        Worker& w = *rp->workers[i];
        w.session->AttachToThread();
        barrier.Wait();
        const uint64_t cpu0 = ThreadCpuNanos();
        rp->fn(w);
        rp->end_ticks[i] = Clock::Now();
        rp->cpu_ns[i] = ThreadCpuNanos() - cpu0;
        if (!w.error.ok()) stop.store(true);
        if (!rp->background) {
          std::lock_guard<std::mutex> l(done_mu);
          ++main_done;
          done_cv.notify_all();
        }
      });
    }
  }

  // The deadline is set before the barrier opens, so workers read it without synchronisation
  // beyond the barrier itself.
  start_ticks = Clock::Now();
  const uint64_t start_ns = Clock::MonotonicNanos();
  if (wo.duration_seconds > 0) {
    const uint64_t duration_ns = static_cast<uint64_t>(wo.duration_seconds * 1e9);
    const uint64_t deadline = start_ticks + Clock::FromNanos(duration_ns);
    for (auto& r : roles) {
      for (auto& w : r.workers) w->SetDeadline(deadline);
      if (r.limiter) r.limiter->StopAt(start_ns + duration_ns);  // the pacer's own clock
    }
  }
  barrier.Open();

  // Sample every role once per interval until the main workers are done.
  const double interval = config_.report_interval_seconds;
  // With --duration, read and overwrite loops ignore their counts: no "% of ops" then, only the
  // progress line's "% of duration". Fills stop at --num or the deadline, whichever is first.
  const bool counts_ignored = wo.duration_seconds > 0 && !spec.Bounded();
  const uint64_t main_total = counts_ignored ? 0 : spec.MainCount(wo, acked);
  uint64_t last_sample_ns = start_ns;
  auto sample = [&](uint64_t now_ns, bool final_sample) {
    const double secs = (now_ns - last_sample_ns) / 1e9;
    const double elapsed = (now_ns - start_ns) / 1e9;
    ProgressUpdate progress{spec.name, elapsed, wo.duration_seconds, {}};
    for (size_t ri = 0; ri < roles.size(); ++ri) {
      RoleRun& r = roles[ri];
      uint64_t ops, bytes;
      r.Sum(&ops, &bytes);
      Interval in{elapsed, secs, ops - r.last_ops, bytes - r.last_bytes};
      r.last_ops = ops;
      r.last_bytes = bytes;
      if (secs > 0) result->roles[ri].series.Add(in);
      progress.roles.push_back({r.role, in, ops, r.background ? 0 : main_total});
    }
    last_sample_ns = now_ns;
    progress.elapsed_seconds = elapsed;
    if (!final_sample) reporter_.Progress(progress);
  };
  {
    std::unique_lock<std::mutex> l(done_mu);
    auto done = [&] { return main_done >= main_threads || signal_.load() != 0; };
    while (!done()) {
      if (interval <= 0) {
        done_cv.wait(l, done);
        break;
      }
      const auto next = std::chrono::steady_clock::now() +
                        std::chrono::nanoseconds(static_cast<uint64_t>(interval * 1e9));
      if (done_cv.wait_until(l, next, done)) break;
      l.unlock();
      sample(Clock::MonotonicNanos(), false);
      l.lock();
    }
  }
  stop.store(true);
  for (auto& t : threads) t.join();
  if (interval > 0) sample(Clock::MonotonicNanos(), true);
  sessions.clear();

  Status first_error;
  uint64_t main_end = start_ticks;
  for (size_t ri = 0; ri < roles.size(); ++ri) {
    const RoleRun& r = roles[ri];
    RoleResult& rr = result->roles[ri];
    // The paced writer's time is the benchmark's: it may return early, when its next write would
    // only be due after the deadline, but it was pacing (writing nothing) until the end.
    uint64_t end = r.background ? main_end : start_ticks;
    for (size_t i = 0; i < r.workers.size(); ++i) {
      const Worker& w = *r.workers[i];
      rr.latency.Merge(w.stats.latency);
      rr.ops += w.stats.ops;
      rr.bytes += w.stats.bytes;
      rr.found += w.stats.found;
      rr.not_found += w.stats.not_found;
      rr.entries += w.stats.entries;
      if (rr.first_not_found == UINT64_MAX) rr.first_not_found = w.stats.first_not_found;
      end = std::max(end, r.end_ticks[i]);
      rr.thread_cpu_seconds += r.cpu_ns[i] / 1e9;
      if (first_error.ok() && !w.error.ok()) first_error = w.error;
    }
    if (!r.background) main_end = std::max(main_end, end);
    rr.seconds = Clock::ToNanos(end - start_ticks) / 1e9;
    rr.stalls = rr.series.Summarize(interval);
    if (r.background) {
      rr.target_bytes_per_sec = wo.write_rate_limit;
      rr.byte_stalls = rr.series.Summarize(interval, /*use_bytes=*/true);
      const double achieved =
          rr.byte_stalls.intervals > 0 ? rr.byte_stalls.p99_exceeded : rr.mb_per_sec() * 1048576.0;
      rr.sustained = rr.target_bytes_per_sec > 0 && achieved >= 0.9 * rr.target_bytes_per_sec;
    }
  }
  return first_error;
}

int Runner::Run() {
  // First, before any thread exists (see SignalWatcher). Never destroyed: its thread may be in
  // sigwait when the process exits. kvbench runs one Runner per process, the one it calls.
  static SignalWatcher* const watcher = new SignalWatcher([this](int sig) { Interrupt(sig); });
  (void)watcher;
  Clock::Init();
  // Writes past RLIMIT_FSIZE must come back as errors to report, not kill the process.
  signal(SIGXFSZ, SIG_IGN);

  const Environment env = Environment::Collect(&EngineLibrary);
  RunContext context;
  context.config = &config_;
  context.env = &env;
  context.engine = config_.engine;
  context.warnings = env.warnings;
  // An unwritable --json is found now, not after the run; and until the run ends, the document
  // at --json says it did not finish, so no older result there passes for this run's.
  if (!reporter_.Start(context)) return 1;
  return Conclude(OpenAndRunAll(&context));
}

int Runner::Interrupted(const std::string& during) {
  const int sig = signal_.load();
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
  // are no longer there. (Each fill then creates its own before it empties the database.)
  if (create && !config_.ack_file.empty() && unlink(config_.ack_file.c_str()) != 0 &&
      errno != ENOENT) {
    reporter_.Fail("cannot remove the old --ack_file " + config_.ack_file + ": " +
                   strerror(errno));
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
  if (signal_.load() != 0) return Interrupted(" while opening the database");
  context->engine = engine_->Name();
  context->engine_version = engine_->Version();
  context->engine_config = engine_->Config();
  const EngineInfo* info = FindEngine(context->engine);
  context->reference_engine = info != nullptr && info->reference;
  context->warnings = RunWarnings(*context->env, context->engine, engine_->BuildWarnings());
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
    if (signal_.load() != 0) return Interrupted(std::string(" during ") + spec->name);
    if (!s.ok()) {
      reporter_.Fail(std::string(spec->name) + " failed: " + s.ToString());
      return 1;
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
  return reporter_.Finish() ? 0 : 1;
}

}  // namespace

int RunBenchmarks(const RunConfig& config, Reporter& reporter) {
  Runner runner(config, reporter);
  return runner.Run();
}

}  // namespace kvbench
