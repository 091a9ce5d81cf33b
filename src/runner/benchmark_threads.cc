#include "runner/benchmark_threads.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/clock.h"
#include "common/cpu_affinity.h"
#include "common/random.h"

namespace kvbench {

namespace {

uint64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// How long this thread has been runnable but waiting for a CPU (the scheduler's run_delay, the
// second field of /proc/thread-self/schedstat), ns; -1 where the kernel does not say.
int64_t ThreadCpuWaitNanos() {
  std::FILE* f = std::fopen("/proc/thread-self/schedstat", "r");
  if (f == nullptr) return -1;
  unsigned long long on_cpu = 0, waiting = 0;
  const int n = std::fscanf(f, "%llu %llu", &on_cpu, &waiting);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(waiting) : -1;
}

}  // namespace

BenchmarkThreads::~BenchmarkThreads() {
  if (threads_.empty()) return;
  stop_->stop.store(true);
  for (auto& t : threads_) t.join();
}

Status BenchmarkThreads::Prepare(const BenchmarkSpec& spec, int seed_stream, Engine* engine,
                                 AckLog* ack_log, BenchmarkResult* result) {
  roles_.push_back({RoleName(spec.role), false, spec.work, {}, {}, {}, {}, {}, {}, 0, 0, nullptr});
  if (spec.background != nullptr) {
    roles_.push_back(
        {RoleName(Role::kWriter), true, spec.background, {}, {}, {}, {}, {}, {}, 0, 0, nullptr});
    writer_target_ = spec.WriterBytesPerSec(options_);
    if (writer_target_ > 0) {
      roles_.back().limiter = std::make_unique<RateLimiter>(writer_target_, SystemPacerClock());
      roles_.back().limiter->StopWhen(&stop_->stop);
    }
  }
  if (spec.setup != nullptr) {
    Status s = spec.setup(engine, options_, &step_);
    if (!s.ok()) return s;
  }
  int thread_id = 0;
  for (auto& r : roles_) {
    const int n = r.background ? 1 : options_.threads;
    for (int i = 0; i < n; ++i, ++thread_id) {
      std::unique_ptr<Session> session;
      Status s = engine->NewSession(&session);
      if (!s.ok()) return s;
      // Seeds unique per run and thread, repeatable for the same --seed.
      const uint64_t seed =
          Mix64(options_.seed ^ Mix64(static_cast<uint64_t>(seed_stream) << 20 | thread_id));
      r.workers.push_back(std::make_unique<Worker>(i, n, seed, session.get(), options_, keys_,
                                                   values_, &stop_->stop, 0, r.limiter.get()));
      if (!r.background && spec.UsesAckFile()) r.workers.back()->ack_log = ack_log;
      r.workers.back()->step = step_.get();
      sessions_.push_back(std::move(session));
      r.cpu.push_back(cpus_.empty() ? -1 : cpus_[thread_id % cpus_.size()]);
    }
    r.end_ticks.assign(n, 0);
    r.cpu_ns.assign(n, 0);
    r.wait_ns.assign(n, -1);
    r.perf.assign(n, PerfReading());
    RoleResult rr;
    rr.cpus = r.cpu;
    if (cpus_.empty()) rr.cpus.clear();
    rr.counters.Begin(perf_);
    rr.role = r.name;
    rr.background = r.background;
    rr.threads = n;
    result->roles.push_back(std::move(rr));
  }
  return Status::OK();
}

void BenchmarkThreads::RunWorker(RoleThreads* r, size_t i) {
  Worker& w = *r->workers[i];
  w.session->AttachToThread();
  if (r->cpu[i] >= 0) w.error = PinThisThread(r->cpu[i]);
  // Opened before the barrier, so the syscalls are outside the measured loop.
  std::unique_ptr<PerfGroup> counters;
  if (perf_.enabled()) counters = std::make_unique<PerfGroup>(perf_);
  ThreadSampler* sampler = profiler_ ? profiler_->Attach(r->name) : nullptr;
  {
    std::unique_lock<std::mutex> l(start_mu_);
    start_cv_.wait(l, [this] { return started_; });
  }
  const int64_t wait0 = ThreadCpuWaitNanos();
  const uint64_t cpu0 = ThreadCpuNanos();
  if (counters) counters->Start();
  if (sampler != nullptr) sampler->Enable();
  if (w.error.ok()) r->fn(w);
  if (sampler != nullptr) sampler->Disable();
  r->end_ticks[i] = Clock::Now();
  r->cpu_ns[i] = ThreadCpuNanos() - cpu0;
  const int64_t wait1 = ThreadCpuWaitNanos();
  r->wait_ns[i] = wait0 >= 0 && wait1 >= wait0 ? wait1 - wait0 : -1;
  if (counters) r->perf[i] = counters->Stop();
  if (!w.error.ok()) stop_->stop.store(true);
  if (!r->background) {
    std::lock_guard<std::mutex> l(stop_->mu);
    ++main_done_;
    stop_->cv.notify_all();
  }
}

void BenchmarkThreads::Start() {
  if (profile_.enabled) {
    int workers = 0;
    for (const auto& r : roles_) workers += static_cast<int>(r.workers.size());
    profiler_ = std::make_unique<Profiler>(profile_, workers);
    profiler_->Start();
  }
  for (auto& r : roles_) {
    for (size_t i = 0; i < r.workers.size(); ++i) {
      threads_.emplace_back([this, rp = &r, i] { RunWorker(rp, i); });
    }
  }
  // The deadline is set before the barrier opens, so workers read it without synchronisation
  // beyond the barrier itself.
  start_ticks_ = Clock::Now();
  start_ns_ = last_sample_ns_ = Clock::MonotonicNanos();
  if (options_.duration_seconds > 0) {
    const uint64_t duration_ns = static_cast<uint64_t>(options_.duration_seconds * 1e9);
    const uint64_t deadline = start_ticks_ + Clock::FromNanos(duration_ns);
    for (auto& r : roles_) {
      for (auto& w : r.workers) w->SetDeadline(deadline);
      if (r.limiter) r.limiter->StopAt(start_ns_ + duration_ns);  // the pacer's own clock
    }
  }
  std::lock_guard<std::mutex> l(start_mu_);
  started_ = true;
  start_cv_.notify_all();
}

void BenchmarkThreads::SampleOnce(uint64_t now_ns, uint64_t main_total, ProgressUpdate* progress,
                                  BenchmarkResult* result) {
  const double secs = (now_ns - last_sample_ns_) / 1e9;
  progress->elapsed_seconds = (now_ns - start_ns_) / 1e9;
  progress->roles.clear();
  for (size_t ri = 0; ri < roles_.size(); ++ri) {
    RoleThreads& r = roles_[ri];
    uint64_t ops = 0, bytes = 0;
    for (const auto& w : r.workers) {
      ops += w->stats.ops.load(std::memory_order_relaxed);
      bytes += w->stats.bytes.load(std::memory_order_relaxed);
    }
    const Interval in{progress->elapsed_seconds, secs, ops - r.last_ops, bytes - r.last_bytes};
    r.last_ops = ops;
    r.last_bytes = bytes;
    if (secs > 0) result->roles[ri].series.Add(in);
    progress->roles.push_back({r.name, in, ops, r.background ? 0 : main_total});
  }
  last_sample_ns_ = now_ns;
}

void BenchmarkThreads::Sample(double interval, uint64_t main_total, const std::string& benchmark,
                              const std::function<void(const ProgressUpdate&)>& progress,
                              BenchmarkResult* result) {
  ProgressUpdate update{benchmark, 0, options_.duration_seconds, {}};
  std::unique_lock<std::mutex> l(stop_->mu);
  auto done = [&] { return main_done_ >= options_.threads || stop_->signal.load() != 0; };
  while (!done()) {
    if (interval <= 0) {
      stop_->cv.wait(l, done);
      break;
    }
    const auto next = std::chrono::steady_clock::now() +
                      std::chrono::nanoseconds(static_cast<uint64_t>(interval * 1e9));
    if (stop_->cv.wait_until(l, next, done)) break;
    l.unlock();
    SampleOnce(Clock::MonotonicNanos(), main_total, &update, result);
    progress(update);
    l.lock();
  }
}

Status BenchmarkThreads::MergeRole(const RoleThreads& r, double interval, uint64_t* main_end,
                                   RoleResult* rr) const {
  Status first_error;
  // The paced writer's time is the benchmark's: it may return early, when its next write would
  // only be due after the deadline, but it was pacing (writing nothing) until the end.
  uint64_t end = r.background ? *main_end : start_ticks_;
  for (size_t i = 0; i < r.workers.size(); ++i) {
    const Worker& w = *r.workers[i];
    rr->latency.Merge(w.stats.latency);
    rr->ops += w.stats.ops.load(std::memory_order_relaxed);
    rr->bytes += w.stats.bytes.load(std::memory_order_relaxed);
    rr->found += w.stats.found;
    rr->not_found += w.stats.not_found;
    rr->entries += w.stats.entries;
    if (rr->first_not_found == UINT64_MAX) rr->first_not_found = w.stats.first_not_found;
    end = std::max(end, r.end_ticks[i]);
    rr->thread_cpu_seconds += r.cpu_ns[i] / 1e9;
    // Unknown (-1) as soon as one thread's is.
    if (i == 0) rr->cpu_wait_seconds = 0;
    if (rr->cpu_wait_seconds >= 0) {
      rr->cpu_wait_seconds = r.wait_ns[i] < 0 ? -1 : rr->cpu_wait_seconds + r.wait_ns[i] / 1e9;
    }
    rr->counters.Add(r.perf[i]);
    if (first_error.ok() && !w.error.ok()) first_error = w.error;
  }
  if (!r.background) *main_end = std::max(*main_end, end);
  rr->seconds = Clock::ToNanos(end - start_ticks_) / 1e9;
  rr->stalls = rr->series.Summarize(interval);
  if (r.background) {
    rr->target_bytes_per_sec = writer_target_;
    rr->byte_stalls = rr->series.Summarize(interval, /*use_bytes=*/true);
    if (r.limiter != nullptr) {
      // Judged on the pacer's clock, from the writer's first write to the benchmark's end.
      const uint64_t end_ns = start_ns_ + Clock::ToNanos(end - start_ticks_);
      const uint64_t write_bytes =
          rr->ops > 0 ? rr->bytes / rr->ops
                      : static_cast<uint64_t>(options_.key_size + options_.value_size);
      rr->delivery =
          JudgeDelivery(r.limiter->delivered(), start_ns_, end_ns, writer_target_, write_bytes);
    }
    rr->sustained = rr->target_bytes_per_sec > 0 && rr->delivery.sustained;
  }
  return first_error;
}

Status BenchmarkThreads::Finish(double interval, BenchmarkResult* result) {
  stop_->stop.store(true);
  for (auto& t : threads_) t.join();
  threads_.clear();
  if (profiler_) profiler_->Stop();
  if (interval > 0) {
    ProgressUpdate unused;
    SampleOnce(Clock::MonotonicNanos(), 0, &unused, result);
  }
  sessions_.clear();
  Status first_error;
  uint64_t main_end = start_ticks_;
  for (size_t ri = 0; ri < roles_.size(); ++ri) {
    Status s = MergeRole(roles_[ri], interval, &main_end, &result->roles[ri]);
    if (first_error.ok() && !s.ok()) first_error = s;
  }
  return first_error;
}

}  // namespace kvbench
