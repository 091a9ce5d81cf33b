#include "workload/rate_limiter.h"

#include <time.h>

#include <algorithm>

#include "common/clock.h"

namespace kvbench {

namespace {

class SystemClock : public PacerClock {
 public:
  uint64_t NowNanos() override { return Clock::MonotonicNanos(); }
  void SleepUntilNanos(uint64_t t) override {
    constexpr uint64_t kSpinNs = 50'000;
    uint64_t now = NowNanos();
    if (t > now + kSpinNs) {
      const uint64_t wake = t - kSpinNs;
      timespec ts{static_cast<time_t>(wake / 1000000000ull), static_cast<long>(wake % 1000000000ull)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
    while (NowNanos() < t) {
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

void RateLimiter::Acquire(uint64_t bytes) {
  const double now = static_cast<double>(clock_->NowNanos());
  if (next_ns_ < 0) next_ns_ = now;
  next_ns_ = std::max(next_ns_, now - static_cast<double>(max_credit_ns_));
  if (next_ns_ > now) clock_->SleepUntilNanos(static_cast<uint64_t>(next_ns_));
  next_ns_ += static_cast<double>(bytes) * 1e9 / bytes_per_sec_;
}

}  // namespace kvbench
