// HdrHistogram's percentile-distribution text (a .hgrm file) of a latency histogram: the rows
// `Value Percentile TotalCount 1/(1-Percentile)` of its outputPercentileDistribution (5 ticks per
// half distance), plus a row at each percentile kvbench reports where the ticks miss it, then
// the `#[Mean ...]`, `#[Max ...]`, `#[Buckets ...]` footer; values in microseconds, a bucket's
// value as Histogram::Percentile reports it (docs/report.md).
//
// scripts/kvbtools/hgrm.py writes the same text from a JSON document's buckets (kvb export
// hgrm); tests/report_test.py checks that the two agree.
#pragma once

#include <string>

#include "stats/histogram.h"

namespace kvbench {

// The .hgrm text of `h` (nanoseconds); "" when it is empty.
std::string HgrmText(const Histogram& h);

}  // namespace kvbench
