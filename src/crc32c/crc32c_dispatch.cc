// crc32c::Extend's choice of kernel: calibration, KVBENCH_CRC32C, and the per-call dispatch
// (crc32c.h, "How Extend() chooses"; docs/micro.md has the design and why it is robust to noise).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "crc32c/crc32c.h"

namespace kvbench {
namespace crc32c {

namespace {

// Each timing covers at least this many bytes (several calls at short lengths), so that reading
// the clock (tens of ns) is small against it; and one call at the longest probe, so that a
// timing lasts microseconds and an interruption spoils few of them.
constexpr size_t kTimingBytes = 16 << 10;
constexpr int kTimingsPerBurst = 2;  // per class, the shorter kept
// A burst starts with this much untimed use of its kernel: what a benchmark's loop has had
// before it is timed. Some CPUs run their wide vector units slowly for a while after a pause
// (another process's turn on the core, say), and the branch predictors learn the kernel again.
constexpr double kWarmUpSeconds = 30e-6;
constexpr size_t kWarmUpProbe = 4096;  // the length the warm-up calls use
constexpr size_t kWarmUpCalls = 16;    // between two readings of the clock
constexpr int kPruneAfterRounds = 3;
constexpr double kPruneFactor = 2.0;  // slower than a class's best by more than this: dropped
constexpr int kMaxRounds = 200;

// Where the timed calls' results go, so that the compiler keeps the calls.
volatile uint32_t g_sink;

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Times this thread has been switched out (voluntarily or not): a burst during which it changed
// ran partly on a CPU that another process had used meanwhile.
long ThreadSwitches() {
#if defined(RUSAGE_THREAD)
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) == 0) return u.ru_nvcsw + u.ru_nivcsw;
#endif
  return 0;  // not known here: no burst is discarded
}

// Seconds that `calls` independent calls of `fn` over `data[0, n)` take. Independent (each from
// crc 0, as kvbench_micro's benchmarks call them), so the rate is a throughput, not a latency.
double TimeCalls(ExtendFn fn, const char* data, size_t n, size_t calls) {
  uint32_t sum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < calls; ++i) sum += fn(0, data, n);
  const auto end = std::chrono::steady_clock::now();
  g_sink = sum;
  return std::chrono::duration<double>(end - start).count();
}

// What the calibration times: the kernels this CPU runs, by index in Implementations().
struct Candidate {
  size_t index;
  const Implementation* impl;
  ExtendFn fn;
};

std::vector<Candidate> Runnable(const CpuFeatures& cpu) {
  std::vector<Candidate> out;
  size_t count = 0;
  const Implementation* impls = Implementations(&count);
  for (size_t i = 0; i < count; ++i) {
    std::string why;
    if (ExtendFn fn = Resolve(impls[i], cpu, &why)) out.push_back({i, &impls[i], fn});
  }
  return out;
}

std::string RunnableNames(const CpuFeatures& cpu) {
  size_t count = 0;
  const Implementation* impls = Implementations(&count);
  std::string names;
  for (const Candidate& c : Runnable(cpu)) {
    names += (names.empty() ? "" : ", ") + std::string(impls[c.index].name);
  }
  return names;
}

// Extend() finds a length's class from its bit width: every class must start at 0 or a power of
// two, so that all lengths of one width share a class.
constexpr bool ClassesStartAtPowersOfTwo() {
  for (const SizeClass& c : kSizeClasses) {
    if ((c.min_bytes & (c.min_bytes - 1)) != 0) return false;
  }
  return kSizeClasses[0].min_bytes == 0;
}
static_assert(ClassesStartAtPowersOfTwo(), "size classes must start at powers of two");

}  // namespace

size_t SizeClassOf(size_t n) {
  size_t c = 0;
  while (c + 1 < kSizeClassCount && n >= kSizeClasses[c + 1].min_bytes) ++c;
  return c;
}

std::string SizeClassName(size_t c) {
  const size_t low = kSizeClasses[c].min_bytes;
  if (c + 1 == kSizeClassCount) return std::to_string(low) + "+ B";
  return std::to_string(low) + "-" + std::to_string(kSizeClasses[c + 1].min_bytes - 1) + " B";
}

const char* ChosenByName(ChosenBy how) {
  switch (how) {
    case ChosenBy::kMeasured:
      return "measured";
    case ChosenBy::kForced:
      return "forced";
    case ChosenBy::kOnlyOne:
      return "only one runs here";
  }
  return "unknown";
}

std::array<const Implementation*, kSizeClassCount> FastestByRates(const Rates& rates) {
  size_t count = 0;
  const Implementation* impls = Implementations(&count);
  std::array<const Implementation*, kSizeClassCount> out{};
  for (size_t c = 0; c < kSizeClassCount; ++c) {
    double best = 0;
    for (size_t i = 0; i < count; ++i) {
      if (rates[c][i] > best) {
        best = rates[c][i];
        out[c] = &impls[i];
      }
    }
  }
  return out;
}

namespace {

// The calibration's input: the largest probe length of bytes that are not all alike, starting on
// a cache line.
class ProbeBuffer {
 public:
  ProbeBuffer() : storage_(kSizeClasses[kSizeClassCount - 1].probe_bytes + 64) {
    data_ = storage_.data() + (64 - reinterpret_cast<uintptr_t>(storage_.data()) % 64) % 64;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i + 64 < storage_.size(); ++i) {
      x = x * 6364136223846793005u + 1442695040888963407u;
      data_[i] = static_cast<char>(x >> 56);
    }
  }
  const char* data() const { return data_; }

 private:
  std::vector<char> storage_;
  char* data_;
};

// Each kernel's shortest time per call at each class's probe length, of its kept bursts and of
// all of them (used only for a kernel that never had a kept burst), and whether it is still
// timed there.
struct Timings {
  explicit Timings(const std::vector<Candidate>& kernels)
      : best(kernels.size()),
        best_any(kernels.size()),
        timed(kernels.size()),
        kept(kernels.size()) {
    for (size_t k = 0; k < kernels.size(); ++k) {
      best[k].fill(1e300);
      best_any[k].fill(1e300);
      for (size_t c = 0; c < kSizeClassCount; ++c) {
        timed[k][c] = kSizeClasses[c].probe_bytes >= kernels[k].impl->hands_below;
      }
    }
  }
  std::vector<std::array<double, kSizeClassCount>> best, best_any;  // [kernel][class]
  std::vector<std::array<bool, kSizeClassCount>> timed;             // [kernel][class]
  std::vector<int> kept;                                            // [kernel]: kept bursts
  int interrupted = 0;
};

bool TimedAnywhere(const Timings& t, size_t k) {
  for (bool b : t.timed[k]) {
    if (b) return true;
  }
  return false;
}

// One burst of kernel k: kWarmUpSeconds of untimed calls, then kTimingsPerBurst timings at each
// class it is timed at. Kept unless the thread was switched out during it.
void TimeBurst(const Candidate& kernel, size_t k, const char* data, Timings* t) {
  const long switches = ThreadSwitches();
  const auto warm_until = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(kWarmUpSeconds));
  uint32_t sum = 0;
  while (std::chrono::steady_clock::now() < warm_until) {
    for (size_t i = 0; i < kWarmUpCalls; ++i) sum += kernel.fn(0, data, kWarmUpProbe);
  }
  g_sink = sum;
  std::array<double, kSizeClassCount> shortest;
  shortest.fill(1e300);
  for (size_t c = 0; c < kSizeClassCount; ++c) {
    if (!t->timed[k][c]) continue;
    const size_t n = kSizeClasses[c].probe_bytes;
    const size_t calls = std::max<size_t>(1, kTimingBytes / n);
    for (int i = 0; i < kTimingsPerBurst; ++i) {
      const double per_call = TimeCalls(kernel.fn, data, n, calls) / static_cast<double>(calls);
      shortest[c] = std::min(shortest[c], per_call);
    }
  }
  const bool kept = ThreadSwitches() == switches;
  t->kept[k] += kept ? 1 : 0;
  t->interrupted += kept ? 0 : 1;
  for (size_t c = 0; c < kSizeClassCount; ++c) {
    t->best_any[k][c] = std::min(t->best_any[k][c], shortest[c]);
    if (kept) t->best[k][c] = std::min(t->best[k][c], shortest[c]);
  }
}

// One round: a burst of every kernel still timed somewhere, starting from kernel `first` and
// wrapping (A B C, then B C A, ...), so that a slow spell of the machine falls on all of them.
// Ends early, between bursts, once `deadline` has passed (unless the round is the first).
void TimeRound(const std::vector<Candidate>& kernels, const char* data, size_t first,
               std::chrono::steady_clock::time_point deadline, Timings* t) {
  for (size_t j = 0; j < kernels.size(); ++j) {
    const size_t k = (first + j) % kernels.size();
    if (TimedAnywhere(*t, k)) TimeBurst(kernels[k], k, data, t);
    if (first > 0 && std::chrono::steady_clock::now() >= deadline) return;
  }
}

// Stops timing, per class, the kernels more than kPruneFactor slower than the class's best.
void Prune(Timings* t) {
  for (size_t c = 0; c < kSizeClassCount; ++c) {
    double fastest = 1e300;
    for (const auto& b : t->best_any) fastest = std::min(fastest, b[c]);
    for (size_t k = 0; k < t->best_any.size(); ++k) {
      t->timed[k][c] = t->timed[k][c] && t->best_any[k][c] <= kPruneFactor * fastest;
    }
  }
}

// Whether every kernel still timed has kCleanBurstsWanted kept bursts.
bool EnoughKept(const Timings& t) {
  for (size_t k = 0; k < t.kept.size(); ++k) {
    if (TimedAnywhere(t, k) && t.kept[k] < kCleanBurstsWanted) return false;
  }
  return true;
}

// The calibration's result: rates from each kernel's best kept timing (any timing for a kernel
// with none kept), and the fewest kept bursts of a contender that was timed to the end.
void Record(const std::vector<Candidate>& kernels, const Timings& t, Choice* choice) {
  choice->repeats = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const bool any_kept = t.kept[k] > 0;
    for (size_t c = 0; c < kSizeClassCount; ++c) {
      const double per_call = any_kept ? t.best[k][c] : t.best_any[k][c];
      if (per_call >= 1e300) continue;  // never timed at this class (it hands the length on)
      choice->rates[c][kernels[k].index] =
          static_cast<double>(kSizeClasses[c].probe_bytes) / per_call;
    }
    if (TimedAnywhere(t, k) && (choice->repeats == 0 || t.kept[k] < choice->repeats)) {
      choice->repeats = t.kept[k];
    }
  }
  choice->repeats *= kTimingsPerBurst;
  choice->interrupted = t.interrupted;
  choice->kernel = FastestByRates(choice->rates);
}

}  // namespace

Choice Calibrate(const CpuFeatures& cpu, double budget_seconds) {
  Choice choice;
  const std::vector<Candidate> kernels = Runnable(cpu);
  if (kernels.size() == 1) {
    choice.chosen_by = ChosenBy::kOnlyOne;
    choice.kernel.fill(kernels[0].impl);
    return choice;
  }
  const double cpu_start = ThreadCpuSeconds();
  const auto wall_start = std::chrono::steady_clock::now();
  const auto wall_deadline =
      wall_start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(kCalibrationWallSeconds));
  const ProbeBuffer buffer;
  Timings t(kernels);
  int rounds = 0;
  bool done = false;
  while (rounds < kMaxRounds && !done) {
    TimeRound(kernels, buffer.data(), static_cast<size_t>(rounds), wall_deadline, &t);
    if (++rounds == kPruneAfterRounds) Prune(&t);
    done = (rounds >= kPruneAfterRounds && EnoughKept(t)) ||
           ThreadCpuSeconds() - cpu_start >= budget_seconds ||
           std::chrono::steady_clock::now() >= wall_deadline;
  }
  choice.chosen_by = ChosenBy::kMeasured;
  Record(kernels, t, &choice);
  choice.calibration_seconds = ThreadCpuSeconds() - cpu_start;
  choice.calibration_wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return choice;
}

Choice Force(const std::string& name, const CpuFeatures& cpu) {
  Choice choice;
  choice.chosen_by = ChosenBy::kForced;
  const std::string kernels_here = "; the kernels this build and CPU run: " + RunnableNames(cpu);
  const Implementation* impl = Find(name);
  if (impl == nullptr) {
    size_t count = 0;
    const Implementation* impls = Implementations(&count);
    std::string all;
    for (size_t i = 0; i < count; ++i) all += (i ? ", " : "") + std::string(impls[i].name);
    choice.error = std::string(kForceVariable) + "=" + name +
                   ": no such crc32c kernel (kvbench has " + all + ")" + kernels_here;
    return choice;
  }
  std::string why;
  if (Resolve(*impl, cpu, &why) == nullptr) {
    choice.error = std::string(kForceVariable) + "=" + name + " refused: " + why + kernels_here;
    return choice;
  }
  choice.kernel.fill(impl);
  return choice;
}

const Choice& CurrentChoice() {
  static const Choice choice = [] {
    const char* forced = std::getenv(kForceVariable);
    if (forced != nullptr && *forced != '\0') return Force(forced, DetectCpu());
    return Calibrate(DetectCpu(), kCalibrationBudgetSeconds);
  }();
  return choice;
}

std::string DescribeChoice(const Choice& choice) {
  if (!choice.error.empty()) return choice.error;
  if (choice.chosen_by != ChosenBy::kMeasured) {
    return std::string(choice.kernel[0]->name) + " for every length";
  }
  std::string s;
  for (size_t c = 0; c < kSizeClassCount; ++c) {
    s += std::string(c ? ", " : "") + SizeClassName(c) + " " + choice.kernel[c]->name;
  }
  return s;
}

std::string DescribeHow(const Choice& choice) {
  std::string how = ChosenByName(choice.chosen_by);
  if (!choice.error.empty()) return how + ": refused";
  if (choice.chosen_by == ChosenBy::kMeasured) {
    const std::string interrupted =
        choice.interrupted == 0 ? ""
                                : " (" + std::to_string(choice.interrupted) + " interrupted burst" +
                                      (choice.interrupted == 1 ? "" : "s") + " discarded)";
    char detail[256];
    if (choice.repeats > 0) {
      std::snprintf(detail, sizeof(detail),
                    ": best of %d timings per kernel and size class%s, %.2f ms of CPU in %.2f ms",
                    choice.repeats, interrupted.c_str(), choice.calibration_seconds * 1e3,
                    choice.calibration_wall_seconds * 1e3);
    } else {  // a kernel none of whose bursts ran uninterrupted: its rates are interrupted ones
      std::snprintf(detail, sizeof(detail),
                    ": best of interrupted timings (%d bursts interrupted, a kernel had no other),"
                    " %.2f ms of CPU in %.2f ms",
                    choice.interrupted, choice.calibration_seconds * 1e3,
                    choice.calibration_wall_seconds * 1e3);
    }
    how += detail;
  } else if (choice.chosen_by == ChosenBy::kForced) {
    how += std::string(" by ") + kForceVariable + "=" + choice.kernel[0]->name;
  }
  return how;
}

std::string DescribeRates(const Choice& choice, size_t c) {
  if (choice.chosen_by != ChosenBy::kMeasured || !choice.error.empty()) return "";
  size_t count = 0;
  const Implementation* impls = Implementations(&count);
  std::vector<size_t> order;
  for (size_t i = 0; i < count; ++i) {
    if (choice.rates[c][i] > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return choice.rates[c][a] > choice.rates[c][b]; });
  std::string s;
  for (size_t i : order) {
    char rate[32];
    std::snprintf(rate, sizeof(rate), " %.1f", choice.rates[c][i] / 1e9);
    s += (s.empty() ? "" : ", ") + std::string(impls[i].name) + rate;
  }
  return s + " GB/s at " + std::to_string(kSizeClasses[c].probe_bytes) + " B";
}

namespace {

bool FillDispatch() {
  const Choice& choice = CurrentChoice();
  if (!choice.error.empty()) {
    std::fprintf(stderr, "crc32c: %s\n", choice.error.c_str());
    std::exit(2);
  }
  for (size_t z = 0; z <= 64; ++z) {
    // The shortest length with z leading zeros (0 for z = 64): all of them share its class.
    const size_t shortest = z == 64 ? 0 : size_t{1} << (63 - z);
    const ExtendFn fn = choice.kernel[SizeClassOf(shortest)]->extend;
    internal::extend_by_leading_zeros[z].store(fn, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace

namespace internal {

namespace {
template <size_t... I>
constexpr std::array<std::atomic<ExtendFn>, sizeof...(I)> AllFirst(std::index_sequence<I...>) {
  return {{((void)I, ExtendFn{ExtendFirst})...}};
}
}  // namespace

// Constant-initialised (before any constructor runs), so a call from another file's static
// initialiser finds ExtendFirst, never an empty entry.
std::array<std::atomic<ExtendFn>, 65> extend_by_leading_zeros =
    AllFirst(std::make_index_sequence<65>());

uint32_t ExtendFirst(uint32_t init_crc, const char* data, size_t n) {
  static const bool filled = FillDispatch();  // once per process; other threads wait here
  (void)filled;
  const int zeros = n == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(n));
  return extend_by_leading_zeros[zeros].load(std::memory_order_relaxed)(init_crc, data, n);
}

}  // namespace internal

}  // namespace crc32c
}  // namespace kvbench
