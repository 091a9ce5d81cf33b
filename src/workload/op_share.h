// How many ops a worker's loop runs: a helper for the workload loops, beside Worker (workload.h).
#pragma once

#include <cstdint>

#include "workload/workload.h"

namespace kvbench {

// This worker's share of `total` ops across its benchmark's threads, or no limit when the run has
// a deadline (--duration), which then ends the loop instead.
inline uint64_t OpsToRun(const Worker& w, uint64_t total) {
  return w.has_deadline() ? UINT64_MAX : w.ShareEnd(total) - w.ShareBegin(total);
}

}  // namespace kvbench
