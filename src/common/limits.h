// Bounds shared by the flag table (cli/), the config checks and the workloads, so that no
// arithmetic on a count, size or interval can overflow (docs/cli.md lists them).
#pragma once

#include <cstdint>

namespace kvbench {

// --memory_budget: below this no engine has room for its write buffers and a cache.
constexpr int64_t kMinMemoryBudget = 16ll << 20;

constexpr int kMaxKeySize = 1024;              // bytes; the workloads' key buffers are this big
constexpr int kMaxValueSize = 64 << 20;        // bytes
constexpr int kMaxRepeats = 1000;              // measured runs per benchmark, and warm-ups
constexpr int kMaxRunsPerBenchmark = 1024;     // warm-ups + repeats: each has its own seed stream
constexpr int64_t kMaxNum = 1000000000000;     // 10^12 keys
constexpr int64_t kMaxOps = 1000000000000000;  // 10^15 reads or writes
constexpr int kMaxThreads = 1024;
constexpr int kMaxDurationSeconds = 30 * 86400;                          // 30 days
constexpr double kMinReportInterval = 0.01, kMaxReportInterval = 86400;  // seconds
constexpr int kMaxSeekNexts = 1000000;
constexpr int kMaxLatencySample = 1000000;    // --latency_sample: one timed op in this many
constexpr double kMaxDatabaseBytes = 0x1p62;  // --num x (key + value): the engines' size hint
constexpr int kMaxProfileHz = 10000;          // --profile_hz: a sample per 100 us of CPU time

}  // namespace kvbench
