#include "result/engine_cost.h"

#include <cstdio>

namespace kvbench {

namespace {

constexpr double kDirtyEvictionsPerOp = 0.1;
constexpr double kBlockWriteAmplification = 20;
constexpr double kStallFraction = 0.1;

// The change of engine figure `name` over the benchmark; -1 if the engine has none.
double Figure(const BenchmarkResult& r, const char* name) {
  for (const auto& [n, v] : r.engine_metrics) {
    if (n == name) return v;
  }
  return -1;
}

uint64_t TotalOps(const BenchmarkResult& r) {
  uint64_t ops = 0;
  for (const auto& role : r.roles) ops += role.ops;
  return ops;
}

uint64_t BytesWritten(const BenchmarkResult& r) {
  uint64_t bytes = 0;
  for (const auto& role : r.roles) {
    if (role.role == "writer") bytes += role.bytes;
  }
  return bytes;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string DirtyEvictionWarning(const BenchmarkResult& r) {
  const double evictions = Figure(r, "eviction_dirty"), block = Figure(r, "block_written_bytes");
  const uint64_t ops = TotalOps(r), data = BytesWritten(r);
  if (evictions < 0 || block < 0 || ops == 0 || data == 0) return "";
  const double per_op = evictions / ops, amplification = block / data;
  if (per_op < kDirtyEvictionsPerOp || amplification < kBlockWriteAmplification) return "";
  return r.name + ": wiredtiger evicted " + Fixed(per_op, 2) + " dirty pages per op and its " +
         "block manager wrote " + Fixed(amplification, 0) + "x the data written (" +
         Fixed(block / ops / 1024, 1) + " KB/op): eviction is writing the same pages again and " +
         "again. The dirty part of the cache is above eviction_dirty_trigger (default 20% of " +
         "cache_size; eviction_dirty_target 5%): raise them with --engine_options, or use " +
         "--memory_budget, which does (docs/engines.md)";
}

std::string StallWarning(const BenchmarkResult& r) {
  const double stall_us = Figure(r, "write_stall_us");
  if (stall_us < 0 || r.seconds <= 0) return "";
  const double fraction = stall_us / 1e6 / r.seconds;
  if (fraction < kStallFraction) return "";
  return r.name + ": rocksdb stalled writes for " + Fixed(100 * fraction, 0) + "% of the run " +
         "(write_stall_us): memtables full (write_buffer_size, max_write_buffer_number) or " +
         "compaction behind (level0_slowdown_writes_trigger, soft_pending_compaction_bytes_limit)" +
         "; raise them with --engine_options or --memory_budget";
}

}  // namespace

void AddEngineKbPerOp(const std::vector<EngineMetric>& after, BenchmarkResult* r) {
  const uint64_t ops = TotalOps(*r);
  if (ops == 0) return;
  for (const auto& m : after) {
    if (!m.cumulative || m.name.find("bytes") == std::string::npos) continue;
    const double v = Figure(*r, m.name.c_str());
    if (v < 0) continue;
    std::string name = m.name;
    const size_t at = name.find("_bytes");
    name.replace(at, 6, "");  // "block_written_bytes" -> "block_written"
    r->engine_kb_per_op.emplace_back(name + "_kb_per_op", v / 1024.0 / ops);
  }
}

std::vector<std::string> EngineWarnings(const BenchmarkResult& r) {
  std::vector<std::string> warnings;
  for (const auto& w : {DirtyEvictionWarning(r), StallWarning(r)}) {
    if (!w.empty()) warnings.push_back(w);
  }
  return warnings;
}

}  // namespace kvbench
