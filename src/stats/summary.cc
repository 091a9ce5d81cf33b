#include "stats/summary.h"

#include <algorithm>
#include <cmath>

namespace kvbench {

double QuantileSorted(const std::vector<double>& s, double q) {
  if (s.size() == 1) return s[0];
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
}

double TCritical95(int df) {
  static const double kTable[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                  2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                  2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                  2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  if (df <= 30) return kTable[df];
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  return 1.960;
}

SampleSummary Summarize(std::vector<double> x) {
  SampleSummary s;
  s.n = static_cast<int>(x.size());
  if (x.empty()) return s;
  std::sort(x.begin(), x.end());
  double sum = 0, log_sum = 0;
  for (double v : x) {
    sum += v;
    if (v > 0) log_sum += std::log(v);
  }
  s.mean = sum / s.n;
  s.median = QuantileSorted(x, 0.5);
  s.min = x.front();
  s.max = x.back();
  s.log_interval = s.min > 0;
  const double log_mean = log_sum / s.n;
  if (s.log_interval) s.geomean = std::exp(log_mean);
  if (s.n < 2) {
    if (s.log_interval) s.geomean = x[0];  // exactly, not exp(log(x))
    s.ci95_low = s.ci95_high = x[0];
    return s;
  }
  double ss = 0, log_ss = 0;
  for (double v : x) {
    ss += (v - s.mean) * (v - s.mean);
    if (s.log_interval) log_ss += (std::log(v) - log_mean) * (std::log(v) - log_mean);
  }
  s.stddev = std::sqrt(ss / (s.n - 1));
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
  const double t = TCritical95(s.n - 1) / std::sqrt(static_cast<double>(s.n));
  if (s.log_interval) {
    const double half = t * std::sqrt(log_ss / (s.n - 1));
    s.ci95_low = std::exp(log_mean - half);
    s.ci95_high = std::exp(log_mean + half);
  } else {
    s.ci95_low = std::max(0.0, s.mean - t * s.stddev);
    s.ci95_high = s.mean + t * s.stddev;
  }
  return s;
}

}  // namespace kvbench
