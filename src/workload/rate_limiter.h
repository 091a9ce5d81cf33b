// Smooth pacing of a background writer to a byte rate.
//
// Unlike a token bucket refilled every 100 ms (db_bench), each Acquire() waits until its bytes
// are due, so writes are spread evenly over time rather than arriving in bursts. A writer that
// falls behind (the engine stalled it) may catch up with at most `max_credit_ns` of credit, so
// "sustained" means it really kept the rate, not that it burst afterwards.
#pragma once

#include <cstdint>

namespace kvbench {

// Time source for the limiter; tests substitute a manual clock.
class PacerClock {
 public:
  virtual ~PacerClock() = default;
  virtual uint64_t NowNanos() = 0;
  virtual void SleepUntilNanos(uint64_t t) = 0;
};

// CLOCK_MONOTONIC and an absolute clock_nanosleep (no spinning).
PacerClock* SystemPacerClock();

class RateLimiter {
 public:
  // REQUIRES: bytes_per_sec > 0.
  RateLimiter(double bytes_per_sec, PacerClock* clock, uint64_t max_credit_ns = 10'000'000);
  // Blocks until `bytes` more may be written at the configured rate.
  void Acquire(uint64_t bytes);
  double bytes_per_sec() const { return bytes_per_sec_; }

 private:
  double bytes_per_sec_;
  PacerClock* clock_;
  uint64_t max_credit_ns_;
  double next_ns_ = -1;  // when the next bytes are due
};

}  // namespace kvbench
