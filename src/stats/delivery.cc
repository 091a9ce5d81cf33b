#include "stats/delivery.h"

#include <algorithm>
#include <cmath>

namespace kvbench {

void DeliveryLog::Begin(uint64_t start_ns) {
  if (begun_) return;
  begun_ = true;
  start_ns_ = start_ns;
}

void DeliveryLog::Add(uint64_t now_ns, uint64_t bytes) {
  const uint64_t second = now_ns > start_ns_ ? (now_ns - start_ns_) / 1000000000ull : 0;
  if (per_second_.size() <= second) per_second_.resize(second + 1, 0);
  per_second_[second] += bytes;
}

DeliveryVerdict JudgeDelivery(const DeliveryLog& log, uint64_t benchmark_start_ns, uint64_t end_ns,
                              double target, uint64_t write_bytes) {
  DeliveryVerdict v;
  if (!log.begun() || end_ns <= log.start_ns()) return v;
  v.judged = true;
  v.start_delay_seconds =
      log.start_ns() > benchmark_start_ns ? (log.start_ns() - benchmark_start_ns) / 1e9 : 0;
  v.run_seconds = (end_ns - log.start_ns()) / 1e9;
  v.due_bytes = target * v.run_seconds;
  const std::vector<uint64_t>& seconds = log.per_second();
  for (uint64_t b : seconds) v.delivered_bytes += b;
  const auto share = [&](double delivered, double seconds_long) {
    const double due = target * seconds_long;
    return due > 0 ? (delivered + static_cast<double>(write_bytes)) / due : 1.0;
  };
  v.delivered_share = share(static_cast<double>(v.delivered_bytes), v.run_seconds);
  // Whole windows from the first write; the tail (under a window) joins the last, and a run
  // shorter than a window is one window.
  const int whole = static_cast<int>(std::floor(v.run_seconds / kDeliveryWindowSeconds));
  v.windows = std::max(whole, 1);
  v.slowest_window_share = -1;
  for (int w = 0; w < v.windows; ++w) {
    const bool last = w + 1 == v.windows;
    const size_t first = static_cast<size_t>(w);
    const size_t stop = last ? std::max(seconds.size(), first + 1) : first + 1;
    double delivered = 0;
    for (size_t i = first; i < stop && i < seconds.size(); ++i) {
      delivered += static_cast<double>(seconds[i]);
    }
    const double length =
        last ? v.run_seconds - w * kDeliveryWindowSeconds : kDeliveryWindowSeconds;
    const double s = share(delivered, length);
    if (v.slowest_window_share < 0 || s < v.slowest_window_share) {
      v.slowest_window_share = s;
      v.slowest_window_end_seconds = w * kDeliveryWindowSeconds + length;
    }
  }
  v.sustained =
      v.delivered_share >= kSustainedRunShare || v.slowest_window_share >= kSustainedWindowShare;
  return v;
}

}  // namespace kvbench
