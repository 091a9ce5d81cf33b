// Monotonic time for per-operation timing.
//
// Timing every operation with clock_gettime costs ~30 ns per call on a VM, which would dominate
// the harness's own cost. Where the CPU has an invariant counter (x86 TSC with constant_tsc and
// nonstop_tsc; the ARMv8 virtual counter when it runs at >= 500 MHz), Now() reads it directly and
// ToNanos() converts with a factor calibrated against CLOCK_MONOTONIC at start-up. Elsewhere it
// falls back to CLOCK_MONOTONIC. Either way the unit of Now() is opaque: subtract two readings and
// convert the difference with ToNanos().
#pragma once

#include <cstdint>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace kvbench {

class Clock {
 public:
  // Chooses the source and calibrates (about 20 ms, once per process). Thread-safe; idempotent.
  static void Init();
  // "tsc", "cntvct" or "clock_monotonic", and the calibrated GHz where a counter is used.
  static std::string Description();

  static inline uint64_t Now() {
#if defined(__x86_64__) || defined(__i386__)
    if (use_counter_) return __rdtsc();
#elif defined(__aarch64__)
    if (use_counter_) {
      uint64_t v;
      asm volatile("mrs %0, cntvct_el0" : "=r"(v));
      return v;
    }
#endif
    return MonotonicNanos();
  }
  // Fixed point (ns per tick in 32.32), on the per-op path: an integer multiply instead of two
  // int<->double conversions and a double multiply. Exact to 1 part in 2^32 of a tick's length.
  static inline uint64_t ToNanos(uint64_t ticks) {
    return use_counter_ ? static_cast<uint64_t>(
                              (static_cast<unsigned __int128>(ticks) * ns_per_tick_q32_) >> 32)
                        : ticks;
  }
  static inline uint64_t FromNanos(uint64_t ns) {
    return use_counter_ ? static_cast<uint64_t>(static_cast<double>(ns) / ns_per_tick_) : ns;
  }
  // CLOCK_MONOTONIC in ns: for wall-clock intervals that are not per-op.
  static uint64_t MonotonicNanos();

 private:
  static bool use_counter_;
  static double ns_per_tick_;
  static uint64_t ns_per_tick_q32_;  // ns_per_tick_ * 2^32, rounded
};

}  // namespace kvbench
