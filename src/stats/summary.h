// Summary statistics over a small sample (repeats of a benchmark, interval rates).
#pragma once

#include <vector>

namespace kvbench {

// Linear-interpolated quantile q in [0, 1] of an ascending-sorted, non-empty sample.
double QuantileSorted(const std::vector<double>& sorted, double q);

struct SampleSummary {
  int n = 0;
  double mean = 0, median = 0, stddev = 0;  // stddev: sample (n-1) standard deviation
  double cv = 0;                            // stddev / mean (0 when n < 2)
  double ci95_low = 0, ci95_high = 0;       // 95% confidence interval of the mean (Student's t)
  double min = 0, max = 0;
};

SampleSummary Summarize(std::vector<double> sample);

// Two-sided Student's t critical value for 95% confidence with `df` degrees of freedom.
double TCritical95(int df);

}  // namespace kvbench
