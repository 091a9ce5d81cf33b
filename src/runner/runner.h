// Runs the benchmarks of a validated RunConfig and hands each result to the reporter.
#pragma once

#include "report/reporter.h"
#include "result/config.h"

namespace kvbench {

// Runs every benchmark in order; returns the process exit code (0 success, 1 runtime failure,
// 128 + signal when interrupted). Usage errors are caught before this is called. Prints nothing
// itself: everything goes through `reporter`.
int RunBenchmarks(const RunConfig& config, Reporter& reporter);

}  // namespace kvbench
