// What the engine did to the storage, per operation, from its own figures (Engine::Metrics), and
// the warnings those figures call for: a run that spends its time evicting dirty pages or
// stalling writes is measuring a setting, and the console says which one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kv/engine.h"
#include "result/result.h"

namespace kvbench {

// Each cumulative engine figure counted in bytes ("block_written_bytes"), as KB per operation of
// the benchmark (all roles' ops), into r->engine_kb_per_op as "<name>_kb_per_op". `after` is the
// engine's list at the end, for which figures are cumulative; r->engine_metrics holds the
// changes over the benchmark already.
void AddEngineKbPerOp(const std::vector<EngineMetric>& after, BenchmarkResult* r);

// Warnings decided from r's engine figures, each naming the option that controls the cost:
//   dirty eviction (WiredTiger): eviction_dirty >= 0.1 per op and the block manager writing
//     >= 20x the data the benchmark wrote (the thrash of an undersized dirty target);
//   write stalls (RocksDB): write_stall_us >= 10% of the benchmark's time.
std::vector<std::string> EngineWarnings(const BenchmarkResult& r);

}  // namespace kvbench
