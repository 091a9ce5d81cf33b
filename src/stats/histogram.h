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

  void Add(uint64_t v) {
    ++counts_[BucketOf(v)];
    ++count_;
    sum_ += v;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }
  void Merge(const Histogram& other);

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
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

 private:
  std::array<uint64_t, kBuckets> counts_;
  uint64_t count_, sum_, min_, max_;
};

}  // namespace kvbench
