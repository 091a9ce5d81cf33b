// Latency histogram with log-linear (HDR-style) buckets.
//
// Values (nanoseconds) below 2^kSubBits are counted exactly; above, each power-of-two range is
// split into 2^(kSubBits-1) equal sub-buckets, so any recorded value is reported with a relative
// error of at most 2^-(kSubBits-1) / 2 (0.39% with kSubBits = 8) — inside the 1% budget.
// Percentiles are reported at the middle of their bucket, clamped to the exact min and max.
//
// One histogram per thread: Add() is not thread-safe and touches only this object. Merge() the
// per-thread histograms at the end.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace kvbench {

class Histogram {
 public:
  static constexpr int kSubBits = 8;
  static constexpr int kSub = 1 << kSubBits;  // exact values below this
  static constexpr int kHalf = kSub / 2;      // sub-buckets per power of two above
  static constexpr int kBuckets = kSub + (64 - kSubBits) * kHalf;

  Histogram() { Clear(); }
  void Clear();

  // The per-op path: one bucket, the sum, min and max. The count is the buckets' sum, computed
  // when read, so an op does not pay for a counter kept twice.
  void Add(uint64_t v) {
    ++counts_[BucketOf(v)];
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void Merge(const Histogram& other);

  uint64_t count() const;  // sums the buckets: for reports, not per op
  uint64_t min() const { return min_ == UINT64_MAX ? 0 : min_; }
  uint64_t max() const { return max_; }
  double mean() const;
  // The value at or below which `p` percent of values lie (0 < p <= 100). 0 when empty.
  double Percentile(double p) const;

  static int BucketOf(uint64_t v) {
    if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
    const int msb = 63 - __builtin_clzll(v);  // >= kSubBits
    const int shift = msb - (kSubBits - 1);   // keeps kSubBits significant bits
    return kSub + (msb - kSubBits) * kHalf + static_cast<int>((v >> shift) - kHalf);
  }
  // [low, high] of the values bucket `b` holds.
  static void BucketRange(int b, uint64_t* low, uint64_t* high);
  // The value reported for a value in [low, high]: the middle, clamped to the recorded min and
  // max (the rule of Percentile).
  double BucketValue(uint64_t low, uint64_t high) const;
  // Calls f(low, high, count) for every non-empty bucket, lowest first: what the JSON keeps of
  // the histogram (latency_ns.buckets) and what a .hgrm file is made from.
  template <typename F>
  void ForEachBucket(F&& f) const {
    for (int b = 0; b < kBuckets; ++b) {
      if (counts_[b] == 0) continue;
      uint64_t low, high;
      BucketRange(b, &low, &high);
      f(low, high, counts_[b]);
    }
  }
  // This layout in HdrHistogram's terms (the footer of a .hgrm file): kSub sub-buckets, the
  // first bucket exact, then one bucket per power of two up to 2^64.
  static constexpr int kHdrSubBuckets = kSub;
  static constexpr int kHdrBuckets = 64 - kSubBits + 1;

 private:
  std::array<uint64_t, kBuckets> counts_;
  uint64_t sum_, min_, max_;
};

}  // namespace kvbench
