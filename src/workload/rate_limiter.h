// Smooth pacing of a background writer to a byte rate.
//
// Unlike a token bucket refilled every 100 ms (db_bench), each Acquire() waits until its bytes
// are due, so writes are spread evenly over time rather than arriving in bursts. A writer that
// falls behind (the engine stalled it) may catch up with at most `max_credit_ns` of credit, so
// "sustained" means it really kept the rate, not that it burst afterwards.
//
// A wait ends early when the run stops (the readers finished, --duration passed, a signal), and a
// wait that would end after the deadline is not started: the writer never outlives its benchmark.
#pragma once

#include <atomic>
#include <cstdint>

#include "stats/delivery.h"

namespace kvbench {

// Time source for the limiter; tests substitute a manual clock.
class PacerClock {
 public:
  virtual ~PacerClock() = default;
  virtual uint64_t NowNanos() = 0;
  // Sleeps until `t`, or until `*stop` (if not null) becomes true, whichever is first.
  virtual void SleepUntilNanos(uint64_t t, const std::atomic<bool>* stop) = 0;
};

// CLOCK_MONOTONIC and an absolute clock_nanosleep (no spinning); a long sleep wakes every 20 ms to
// look at the stop flag.
PacerClock* SystemPacerClock();

class RateLimiter {
 public:
  // REQUIRES: bytes_per_sec > 0.
  RateLimiter(double bytes_per_sec, PacerClock* clock, uint64_t max_credit_ns = 10'000'000);
  // Ends waits early when `*stop` becomes true. REQUIRES: before the first Acquire.
  void StopWhen(const std::atomic<bool>* stop) { stop_ = stop; }
  // No wait ends after `deadline_ns` (the clock's time); 0 = no deadline. REQUIRES: before the
  // first Acquire.
  void StopAt(uint64_t deadline_ns) { deadline_ns_ = deadline_ns; }
  // Blocks until `bytes` more may be written at the configured rate and returns true; or returns
  // false, without writing being due, when the stop flag is set or the bytes would only be due
  // after the deadline (then it does not wait at all).
  bool Acquire(uint64_t bytes);
  // A write of `bytes` that Acquire let through has completed: recorded, at the clock's time, in
  // delivered(). The first Acquire's time is when the writer's run began.
  void Delivered(uint64_t bytes) { log_.Add(clock_->NowNanos(), bytes); }
  double bytes_per_sec() const { return bytes_per_sec_; }
  // REQUIRES: the writer has stopped.
  const DeliveryLog& delivered() const { return log_; }

 private:
  double bytes_per_sec_;
  PacerClock* clock_;
  uint64_t max_credit_ns_;
  const std::atomic<bool>* stop_ = nullptr;
  uint64_t deadline_ns_ = 0;
  double next_ns_ = -1;  // when the next bytes are due
  DeliveryLog log_;
};

}  // namespace kvbench
