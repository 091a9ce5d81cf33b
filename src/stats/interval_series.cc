#include "stats/interval_series.h"

#include <algorithm>

#include "stats/summary.h"

namespace kvbench {

StallSummary IntervalSeries::Summarize(double nominal_seconds, bool use_bytes) const {
  std::vector<double> rates;
  for (size_t i = 0; i < intervals_.size(); ++i) {
    const Interval& in = intervals_[i];
    const bool last = i + 1 == intervals_.size();
    if (last && i > 0 && in.seconds < nominal_seconds / 2) continue;
    rates.push_back(use_bytes ? in.bytes_per_sec() : in.ops_per_sec());
  }
  StallSummary s;
  if (rates.empty()) return s;
  std::sort(rates.begin(), rates.end());
  s.intervals = static_cast<int>(rates.size());
  s.median_ops_per_sec = QuantileSorted(rates, 0.5);
  s.p95_exceeded = QuantileSorted(rates, 0.05);
  s.p99_exceeded = QuantileSorted(rates, 0.01);
  s.min_ops_per_sec = rates.front();
  for (double r : rates) s.below_half_median += r < s.median_ops_per_sec / 2 ? 1 : 0;
  return s;
}

}  // namespace kvbench
