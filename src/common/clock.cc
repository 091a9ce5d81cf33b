#include "common/clock.h"

#include <time.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

namespace kvbench {

bool Clock::use_counter_ = false;
double Clock::ns_per_tick_ = 1.0;
uint64_t Clock::ns_per_tick_q32_ = uint64_t{1} << 32;

uint64_t Clock::MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

bool CounterIsUsable() {
#if defined(__x86_64__) || defined(__i386__)
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) == 0) {
      return line.find(" constant_tsc") != std::string::npos &&
             line.find(" nonstop_tsc") != std::string::npos;
    }
  }
  return false;
#elif defined(__aarch64__)
  uint64_t freq;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(freq));
  return freq >= 500000000ull;  // slower counters cannot resolve single nanoseconds
#else
  return false;
#endif
}

std::once_flag init_once;

}  // namespace

void Clock::Init() {
  std::call_once(init_once, [] {
    if (!CounterIsUsable()) return;
    use_counter_ = true;  // Now() reads the counter from here on
    const uint64_t t0 = MonotonicNanos();
    const uint64_t c0 = Now();
    uint64_t t1;
    do {
      t1 = MonotonicNanos();
    } while (t1 - t0 < 20000000ull);
    const uint64_t c1 = Now();
    if (c1 <= c0) {
      use_counter_ = false;
      return;
    }
    ns_per_tick_ = static_cast<double>(t1 - t0) / static_cast<double>(c1 - c0);
    ns_per_tick_q32_ = static_cast<uint64_t>(std::llround(ns_per_tick_ * 4294967296.0));
  });
}

std::string Clock::Description() {
  if (!use_counter_) return "clock_monotonic";
  std::ostringstream s;
#if defined(__aarch64__)
  s << "cntvct";
#else
  s << "tsc";
#endif
  s.precision(4);
  s << " (" << 1.0 / ns_per_tick_ << " GHz, calibrated against CLOCK_MONOTONIC)";
  return s.str();
}

}  // namespace kvbench
