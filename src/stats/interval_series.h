// Throughput per reporting interval, and what it says about stalls.
//
// The runner samples each role's op counters every --report_interval_seconds and appends one
// Interval per sample. A steady engine gives intervals close to the median; write stalls show up
// as intervals far below it.
#pragma once

#include <cstdint>
#include <vector>

namespace kvbench {

struct Interval {
  double end_seconds;  // since the benchmark started
  double seconds;      // length of this interval (the last one is usually shorter)
  uint64_t ops;
  uint64_t bytes;
  double ops_per_sec() const { return seconds > 0 ? ops / seconds : 0.0; }
  double bytes_per_sec() const { return seconds > 0 ? bytes / seconds : 0.0; }
};

struct StallSummary {
  int intervals = 0;              // intervals counted (complete ones, see below)
  double median_ops_per_sec = 0;  // median interval rate
  double p95_exceeded = 0;        // rate that 95% of intervals exceed (5th percentile)
  double p99_exceeded = 0;        // rate that 99% of intervals exceed (1st percentile)
  double min_ops_per_sec = 0;     // slowest interval
  int below_half_median = 0;      // intervals slower than half the median
};

class IntervalSeries {
 public:
  void Add(const Interval& i) { intervals_.push_back(i); }
  const std::vector<Interval>& intervals() const { return intervals_; }
  bool empty() const { return intervals_.empty(); }

  // Over complete intervals: a trailing interval shorter than half of `nominal_seconds` is
  // left out, as its rate is noise. Rates are ops/s, or bytes/s when `use_bytes`.
  StallSummary Summarize(double nominal_seconds, bool use_bytes = false) const;

 private:
  std::vector<Interval> intervals_;
};

}  // namespace kvbench
