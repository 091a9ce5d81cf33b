// The counters one worker thread keeps while it runs: private, never shared per op.
#pragma once

#include <atomic>
#include <cstdint>

#include "stats/histogram.h"

namespace kvbench {

// Counters one thread owns. Only its thread writes them; the runner's sampling thread reads
// `ops` and `bytes` (relaxed) to build the interval series, so nothing shared is written.
struct ThreadStats {
  // One op of `b` bytes. The counters are atomics written with relaxed load + store: the same
  // plain moves as a non-atomic counter on every target, with no second copy to publish, and the
  // compiler cannot merge them into one vector store that the next op's scalar loads would have
  // to wait for (a store-forwarding stall that cost ~3 ns per op).
  void CountOp(uint64_t b) {
    ops.store(ops.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    bytes.store(bytes.load(std::memory_order_relaxed) + b, std::memory_order_relaxed);
  }
  // `n` ops done together (a batch, a chunk of a scan) of `b` bytes in all.
  void CountOps(uint64_t n, uint64_t b) {
    ops.store(ops.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    bytes.store(bytes.load(std::memory_order_relaxed) + b, std::memory_order_relaxed);
  }

  Histogram latency;                      // ns per timed op, as the loop timed it
  uint64_t found = 0, not_found = 0;      // reads
  uint64_t entries = 0;                   // range/scan entries visited
  uint64_t first_not_found = UINT64_MAX;  // verifyacked: the first acknowledged key missing
  alignas(64) std::atomic<uint64_t> ops{0};
  std::atomic<uint64_t> bytes{0};
  char pad[64 - 2 * sizeof(std::atomic<uint64_t>)];
};

}  // namespace kvbench
