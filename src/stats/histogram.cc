#include "stats/histogram.h"

#include <algorithm>
#include <cmath>

namespace kvbench {

void Histogram::Clear() {
  counts_.fill(0);
  sum_ = max_ = 0;
  min_ = UINT64_MAX;
}

void Histogram::Merge(const Histogram& o) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  sum_ += o.sum_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

void Histogram::BucketRange(int b, uint64_t* low, uint64_t* high) {
  if (b < kSub) {
    *low = *high = static_cast<uint64_t>(b);
    return;
  }
  const int msb = (b - kSub) / kHalf + kSubBits;
  const int shift = msb - (kSubBits - 1);
  const uint64_t top = static_cast<uint64_t>((b - kSub) % kHalf) + kHalf;
  *low = top << shift;
  *high = *low + ((uint64_t{1} << shift) - 1);
}

uint64_t Histogram::count() const {
  uint64_t n = 0;
  for (uint64_t c : counts_) n += c;
  return n;
}

double Histogram::mean() const {
  const uint64_t n = count();
  return n ? static_cast<double>(sum_) / static_cast<double>(n) : 0.0;
}

double Histogram::Percentile(double p) const {
  const uint64_t n = count();
  if (n == 0) return 0.0;
  // The rank of the value reported: the smallest value with at least p% of values at or below.
  const double want = std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(n)));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[b];
    if (static_cast<double>(seen) >= want) {
      uint64_t low, high;
      BucketRange(b, &low, &high);
      return BucketValue(low, high);
    }
  }
  return static_cast<double>(max_);
}

double Histogram::BucketValue(uint64_t low, uint64_t high) const {
  double mid = (static_cast<double>(low) + static_cast<double>(high)) / 2.0;
  return std::clamp(mid, static_cast<double>(min()), static_cast<double>(max_));
}

}  // namespace kvbench
