#include "profile/profiler.h"

#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>

#include "profile/symbolizer.h"

namespace kvbench {

namespace {

constexpr auto kDrainEvery = std::chrono::milliseconds(20);
constexpr int kScanEvery = 5;  // drains between two looks for new background threads
constexpr const char* kBackground = "background";

uint64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::vector<pid_t> ProcessThreads() {
  std::vector<pid_t> tids;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return tids;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
      tids.push_back(static_cast<pid_t>(std::atol(e->d_name)));
    }
  }
  closedir(dir);
  return tids;
}

// The folded stack of one sample: outermost frame first. `raw` holds its addresses innermost
// first, as the kernel wrote them.
std::string Fold(const std::string& raw, Symbolizer* symbols) {
  const size_t n = raw.size() / sizeof(uint64_t);
  if (n == 0) return "[no stack]";
  std::string folded;
  for (size_t i = n; i-- > 0;) {
    uint64_t ip;
    std::memcpy(&ip, raw.data() + i * sizeof(uint64_t), sizeof(ip));
    if (!folded.empty()) folded += ';';
    folded += symbols->Name(ip, /*return_address=*/i > 0);
  }
  return folded;
}

}  // namespace

Profiler::Profiler(const ProfilePlan& plan, int workers) : plan_(plan), workers_(workers) {}

Profiler::~Profiler() {
  if (collector_.joinable()) {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    collector_.join();
  }
}

size_t Profiler::RoleIndex(const std::string& name) {
  for (size_t i = 0; i < roles_.size(); ++i) {
    if (roles_[i].name == name) return i;
  }
  roles_.push_back(Role{name, 0, 0, {}});
  return roles_.size() - 1;
}

ThreadSampler* Profiler::Attach(const std::string& role) {
  std::string why;
  std::unique_ptr<ThreadSampler> s = ThreadSampler::Open(0, plan_.period_ns(), plan_.kernel, &why);
  std::lock_guard<std::mutex> l(mu_);
  ++attached_;
  cv_.notify_all();
  const size_t r = RoleIndex(role);
  if (!s) {
    if (unavailable_.empty()) unavailable_ = role + ": " + why;
    return nullptr;
  }
  ++roles_[r].threads;
  ++opened_;
  sampled_.push_back({std::move(s), r});
  return sampled_.back().sampler.get();
}

void Profiler::Start() {
  start_ns_ = NowNanos();
  collector_ = std::thread([this] { Collect(); });
}

void Profiler::FindBackgroundThreads() {
  std::set<pid_t> known = {getpid(), collector_tid_};
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& s : sampled_) known.insert(s.sampler->tid());
  }
  for (pid_t tid : ProcessThreads()) {
    if (known.count(tid) != 0 || refused_.count(tid) != 0) continue;
    std::string why;
    std::unique_ptr<ThreadSampler> s =
        ThreadSampler::Open(tid, plan_.period_ns(), plan_.kernel, &why);
    if (!s) {
      refused_.insert(tid);
      continue;
    }
    s->Enable();
    std::lock_guard<std::mutex> l(mu_);
    const size_t r = RoleIndex(kBackground);
    ++roles_[r].threads;
    sampled_.push_back({std::move(s), r});
  }
}

void Profiler::DrainAll() {
  std::lock_guard<std::mutex> l(mu_);
  std::string key;
  for (auto& s : sampled_) {
    Role& role = roles_[s.role];
    s.sampler->Drain([&](const uint64_t* ips, size_t n) {
      key.assign(reinterpret_cast<const char*>(ips), n * sizeof(uint64_t));
      ++role.stacks[key];
      ++role.samples;
    });
  }
}

void Profiler::Collect() {
  collector_tid_ = CurrentThreadId();
  std::unique_lock<std::mutex> l(mu_);
  // Until every worker has its own sampler, a new thread could be a worker, not the engine's.
  cv_.wait(l, [this] { return stopping_ || attached_ >= workers_; });
  for (int round = 0;; ++round) {
    const bool last = stopping_;
    l.unlock();
    if (round % kScanEvery == 0 && !last) FindBackgroundThreads();
    DrainAll();
    l.lock();
    if (last) break;
    cv_.wait_for(l, kDrainEvery, [this] { return stopping_; });
  }
  collector_cpu_seconds_ = ThreadCpuSeconds();
}

void Profiler::Stop() {
  stop_ns_ = NowNanos();
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& s : sampled_) s.sampler->Disable();
    stopping_ = true;
  }
  cv_.notify_all();
  if (collector_.joinable()) collector_.join();  // its last round drains what is left
}

ProfileResult Profiler::Result() {
  ProfileResult p;
  p.requested = true;
  p.period_ns = plan_.period_ns();
  p.kernel = plan_.kernel;
  p.seconds = (stop_ns_ - start_ns_) / 1e9;
  p.collector_cpu_seconds = collector_cpu_seconds_;
  if (opened_ == 0) p.unavailable = unavailable_;
  const uint64_t t0 = NowNanos();
  Symbolizer symbols;
  std::map<std::string, uint64_t> lost;  // by name: the partition below moves the roles
  for (const auto& s : sampled_) lost[roles_[s.role].name] += s.sampler->lost();
  // "background" last, whatever order the roles appeared in.
  std::stable_partition(roles_.begin(), roles_.end(),
                        [](const Role& r) { return r.name != kBackground; });
  for (size_t i = 0; i < roles_.size(); ++i) {
    const Role& r = roles_[i];
    RoleProfile rp{r.name, r.threads, r.samples, lost[r.name], {}};
    std::map<std::string, uint64_t> folded;
    for (const auto& [raw, count] : r.stacks) folded[Fold(raw, &symbols)] += count;
    for (auto& [frames, count] : folded) rp.stacks.push_back({frames, count});
    std::stable_sort(rp.stacks.begin(), rp.stacks.end(),
                     [](const FoldedStack& a, const FoldedStack& b) { return a.count > b.count; });
    p.roles.push_back(std::move(rp));
  }
  p.symbolize_seconds = (NowNanos() - t0) / 1e9;
  return p;
}

}  // namespace kvbench
