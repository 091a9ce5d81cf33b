// Statistics: histogram percentiles against known distributions, summaries, interval stalls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stats/histogram.h"
#include "stats/interval_series.h"
#include "stats/summary.h"

namespace kvbench {
namespace {

double ExactPercentile(std::vector<uint64_t> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  return static_cast<double>(v[std::max<size_t>(rank, 1) - 1]);
}

void ExpectWithinOnePercent(const std::vector<uint64_t>& values) {
  Histogram h;
  for (uint64_t v : values) h.Add(v);
  for (double p : {50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
    const double exact = ExactPercentile(values, p);
    EXPECT_NEAR(h.Percentile(p), exact, exact * 0.01 + 0.5) << "p" << p;
  }
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.max(), *std::max_element(values.begin(), values.end()));
  EXPECT_EQ(h.min(), *std::min_element(values.begin(), values.end()));
}

TEST(HistogramTest, UniformDistributionWithinOnePercent) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint64_t> d(100, 1'000'000);
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = d(rng);
  ExpectWithinOnePercent(v);
}

TEST(HistogramTest, ExponentialDistributionWithinOnePercent) {
  std::mt19937_64 rng(2);
  std::exponential_distribution<double> d(1.0 / 5000.0);
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = static_cast<uint64_t>(d(rng)) + 1;
  ExpectWithinOnePercent(v);
}

TEST(HistogramTest, LogNormalWithHugeTailWithinOnePercent) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> d(8.0, 2.0);  // ns to seconds
  std::vector<uint64_t> v(200000);
  for (auto& x : v) x = static_cast<uint64_t>(d(rng)) + 1;
  ExpectWithinOnePercent(v);
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram h;
  for (uint64_t v = 1; v <= 100; ++v) h.Add(v);
  EXPECT_EQ(h.Percentile(50), 50);
  EXPECT_EQ(h.Percentile(99), 99);
  EXPECT_EQ(h.Percentile(100), 100);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(HistogramTest, BucketsCoverEveryValueWithBoundedWidth) {
  const std::vector<uint64_t> values = {0,    1,         255,        256,       257,
                                        1000, 123456789, 1ull << 40, UINT64_MAX};
  for (uint64_t v : values) {
    uint64_t lo, hi;
    Histogram::BucketRange(Histogram::BucketOf(v), &lo, &hi);
    EXPECT_LE(lo, v);
    EXPECT_GE(hi, v);
    EXPECT_LE(static_cast<double>(hi - lo), static_cast<double>(lo) / 128.0 + 1);
  }
}

TEST(HistogramTest, MergeEqualsAddingEverything) {
  Histogram a, b, all;
  for (uint64_t v = 1; v < 5000; v += 3) {
    (v % 2 ? a : b).Add(v * 17);
    all.Add(v * 17);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  for (double p : {50.0, 99.0, 99.9}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));
  EXPECT_EQ(a.max(), all.max());
}

TEST(HistogramTest, EmptyIsZero) {
  Histogram h;
  EXPECT_EQ(h.Percentile(99), 0);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.mean(), 0);
}

TEST(SummaryTest, MeanMedianStddevAndConfidenceInterval) {
  SampleSummary s = Summarize({10, 12, 11, 13, 9});
  EXPECT_DOUBLE_EQ(s.mean, 11);
  EXPECT_DOUBLE_EQ(s.median, 11);
  EXPECT_NEAR(s.stddev, std::sqrt(2.5), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(2.5) / 11, 1e-12);
  const double half = 2.776 * std::sqrt(2.5) / std::sqrt(5.0);  // t(0.975, 4) = 2.776
  EXPECT_NEAR(s.ci95_low, 11 - half, 1e-9);
  EXPECT_NEAR(s.ci95_high, 11 + half, 1e-9);
}

TEST(SummaryTest, SingleSampleHasNoSpread) {
  SampleSummary s = Summarize({5});
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.ci95_low, 5);
}

TEST(IntervalSeriesTest, StallsShowAsSlowIntervals) {
  IntervalSeries series;
  for (int i = 0; i < 100; ++i) {
    const uint64_t ops = (i == 40 || i == 41) ? 100 : 1000;  // two stalled seconds
    series.Add({i + 1.0, 1.0, ops, ops * 100});
  }
  series.Add({100.2, 0.2, 10, 1000});  // a short trailing interval is left out
  StallSummary s = series.Summarize(1.0);
  EXPECT_EQ(s.intervals, 100);
  EXPECT_DOUBLE_EQ(s.median_ops_per_sec, 1000);
  EXPECT_DOUBLE_EQ(s.min_ops_per_sec, 100);
  EXPECT_EQ(s.below_half_median, 2);
  EXPECT_LT(s.p99_exceeded, 1000);  // the 1st percentile sees the stall
  EXPECT_DOUBLE_EQ(s.p95_exceeded, 1000);
  EXPECT_DOUBLE_EQ(series.Summarize(1.0, true).median_ops_per_sec, 100000);
}

}  // namespace
}  // namespace kvbench
