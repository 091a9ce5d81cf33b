// Summary statistics over a small sample (repeats of a benchmark, interval rates).
#pragma once

#include <vector>

namespace kvbench {

// Linear-interpolated quantile q in [0, 1] of an ascending-sorted, non-empty sample.
double QuantileSorted(const std::vector<double>& sorted, double q);

// A sample of rates (ops/s of the repeats of one benchmark). A rate is never negative, and a
// repeat 5x slower than the others (a first run paying for page faults) is a factor, not a
// difference: so the interval is the geometric mean's, computed on the logarithms and turned back,
// and cannot fall below zero however wide it is (a t interval of the plain mean of 118515, 431535,
// 691108, 709949 and 482003 ops/s reached -783356 with a worse first run).
struct SampleSummary {
  int n = 0;
  double mean = 0, median = 0, stddev = 0;  // stddev: sample (n-1) standard deviation
  double cv = 0;                            // stddev / mean (0 when n < 2)
  double geomean = 0;                       // exp(mean of the logs); 0 unless every value > 0
  // 95% confidence interval of the geometric mean: exp(mean(log x) +- t * sd(log x) / sqrt(n))
  // (Student's t), when every value is positive; otherwise (a zero rate) the plain mean's t
  // interval with its low end cut at 0. Both ends equal the value when n == 1.
  double ci95_low = 0, ci95_high = 0;
  bool log_interval = false;  // which of the two the interval is
  double min = 0, max = 0;
};

SampleSummary Summarize(std::vector<double> sample);

// Two-sided Student's t critical value for 95% confidence with `df` degrees of freedom.
double TCritical95(int df);

}  // namespace kvbench
