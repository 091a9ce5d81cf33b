#include "report/hgrm.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <vector>

namespace kvbench {
namespace {

constexpr int kTicksPerHalfDistance = 5;
// The percentiles kvbench reports (latency_ns.p50 ... p99_99), in percent.
constexpr double kReported[] = {50, 75, 90, 95, 99, 99.9, 99.99};

struct Row {
  double value_ns;
  double percentile;  // 0..1
  uint64_t total;     // values at or below this one
};

// HdrHistogram's next reporting level: ticks halve in width each time the distance to 100%
// halves.
double NextTick(double level) {
  const auto halvings = static_cast<int64_t>(std::log(100.0 / (100.0 - level)) / std::log(2.0));
  const double ticks = kTicksPerHalfDistance * std::pow(2.0, static_cast<double>(halvings + 1));
  return level + 100.0 / ticks;
}

// The rank of a percentile as Histogram::Percentile computes it.
double Rank(double percent, uint64_t total) {
  return std::max(1.0, std::ceil(percent / 100.0 * static_cast<double>(total)));
}

std::vector<Row> Rows(const Histogram& h) {
  std::vector<Row> rows;
  const uint64_t total = h.count();
  double level = 0;
  uint64_t cum = 0;
  size_t reported = 0;
  bool done = false;
  h.ForEachBucket([&](uint64_t low, uint64_t high, uint64_t n) {
    if (done) return;
    cum += n;
    const bool last = cum >= total;
    std::vector<double> here;
    // In the last bucket one level only: HdrHistogram's iterator ends when the count does.
    while (100.0 * static_cast<double>(cum) / static_cast<double>(total) >= level) {
      here.push_back(level);
      level = NextTick(level);
      if (last) break;
    }
    while (reported < std::size(kReported) &&
           static_cast<double>(cum) >= Rank(kReported[reported], total)) {
      here.push_back(kReported[reported++]);
    }
    std::sort(here.begin(), here.end());
    here.erase(std::unique(here.begin(), here.end()), here.end());
    for (double p : here) rows.push_back({h.BucketValue(low, high), p / 100.0, cum});
    done = last;
  });
  rows.push_back({static_cast<double>(h.max()), 1.0, total});  // the 100% row is the max
  return rows;
}

double StdDev(const Histogram& h) {
  double sum = 0;
  const double mean = h.mean();
  h.ForEachBucket([&](uint64_t low, uint64_t high, uint64_t n) {
    const double d = h.BucketValue(low, high) - mean;
    sum += static_cast<double>(n) * d * d;
  });
  return std::sqrt(sum / static_cast<double>(h.count()));
}

}  // namespace

std::string HgrmText(const Histogram& h) {
  if (h.count() == 0) return "";
  std::string out;
  char line[160];
  std::snprintf(line, sizeof(line), "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
                "1/(1-Percentile)");
  out += line;
  for (const Row& r : Rows(h)) {
    if (r.percentile < 1.0) {
      std::snprintf(line, sizeof(line), "%12.3f %2.12f %10" PRIu64 " %14.2f\n", r.value_ns / 1e3,
                    r.percentile, r.total, 1.0 / (1.0 - r.percentile));
    } else {
      std::snprintf(line, sizeof(line), "%12.3f %2.12f %10" PRIu64 "\n", r.value_ns / 1e3,
                    r.percentile, r.total);
    }
    out += line;
  }
  std::snprintf(line, sizeof(line), "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n",
                h.mean() / 1e3, StdDev(h) / 1e3);
  out += line;
  std::snprintf(line, sizeof(line), "#[Max     = %12.3f, Total count    = %12" PRIu64 "]\n",
                static_cast<double>(h.max()) / 1e3, h.count());
  out += line;
  std::snprintf(line, sizeof(line), "#[Buckets = %12d, SubBuckets     = %12d]\n",
                Histogram::kHdrBuckets, Histogram::kHdrSubBuckets);
  out += line;
  return out;
}

}  // namespace kvbench
