// The counters one worker thread keeps while it runs: private, never shared per op.
#pragma once

#include <atomic>
#include <cstdint>

#include "stats/histogram.h"

namespace kvbench {

// Counters one thread owns. Only its thread writes them; the runner's sampling thread reads the
// `published_*` atomics (relaxed) to build the interval series, so nothing shared is written.
struct ThreadStats {
  Histogram latency;  // ns per op, as the loop timed it
  uint64_t ops = 0, bytes = 0;
  uint64_t found = 0, not_found = 0;      // reads
  uint64_t entries = 0;                   // range/scan entries visited
  uint64_t first_not_found = UINT64_MAX;  // verifyacked: the first acknowledged key missing
  alignas(64) std::atomic<uint64_t> published_ops{0};
  std::atomic<uint64_t> published_bytes{0};
  char pad[64 - 2 * sizeof(std::atomic<uint64_t>)];
};

}  // namespace kvbench
