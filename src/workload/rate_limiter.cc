#include "workload/rate_limiter.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include "common/clock.h"

namespace kvbench {

namespace {

class SystemClock : public PacerClock {
 public:
  uint64_t NowNanos() override { return Clock::MonotonicNanos(); }
  // Sleeps, never spins: a spinning "background" writer would take a whole core from the
  // readers. Waking late costs no rate, as the limiter lets the writer catch up (within its
  // credit); a 1 us timer slack keeps the wake-ups close to due.
  void SleepUntilNanos(uint64_t t, const std::atomic<bool>* stop) override {
    thread_local bool slack_set = false;
    if (!slack_set) {
      prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
      slack_set = true;
    }
    // Slices of at most 20 ms: a stop is seen within 20 ms, and a writer paced at a few writes
    // per second wakes a few dozen times a second more, which costs nothing measurable.
    constexpr uint64_t kSliceNs = 20'000'000;
    while (stop == nullptr || !stop->load(std::memory_order_relaxed)) {
      const uint64_t now = Clock::MonotonicNanos();
      if (now >= t) return;
      const uint64_t until = stop == nullptr ? t : std::min(t, now + kSliceNs);
      const timespec ts{static_cast<time_t>(until / 1000000000ull),
                        static_cast<long>(until % 1000000000ull)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
      }
    }
  }
};

}  // namespace

PacerClock* SystemPacerClock() {
  static SystemClock clock;
  return &clock;
}

RateLimiter::RateLimiter(double bytes_per_sec, PacerClock* clock, uint64_t max_credit_ns)
    : bytes_per_sec_(bytes_per_sec), clock_(clock), max_credit_ns_(max_credit_ns) {}

bool RateLimiter::Acquire(uint64_t bytes) {
  const double now = static_cast<double>(clock_->NowNanos());
  if (next_ns_ < 0) {
    next_ns_ = now;
    log_.Begin(static_cast<uint64_t>(now));
  }
  next_ns_ = std::max(next_ns_, now - static_cast<double>(max_credit_ns_));
  if (next_ns_ > now) {
    if (deadline_ns_ != 0 && next_ns_ > static_cast<double>(deadline_ns_)) return false;
    clock_->SleepUntilNanos(static_cast<uint64_t>(next_ns_), stop_);
  }
  if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) return false;
  next_ns_ += static_cast<double>(bytes) * 1e9 / bytes_per_sec_;
  return true;
}

}  // namespace kvbench
