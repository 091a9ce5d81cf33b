// --memory_budget: one number of bytes that each engine's adapter turns into its own memory
// settings, so that engines compared in one study get the same memory. The split is the
// adapter's (its plan function, registered in its EngineAdapter); it is recorded in every result
// (Engine::Config) and printed by --version. docs/engines.md, "Comparing engines fairly", gives
// each split and the measurements behind it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kvbench {

// One share of the budget, in the engine's own vocabulary ("block_cache", "cache_size").
struct BudgetPart {
  std::string knob;
  uint64_t bytes;
  std::string why;  // one sentence: what holds this memory and why this share
};

// What an engine does with a budget, and how it can be kept from caching in the OS for
// --io_bound.
struct MemoryPlan {
  std::vector<BudgetPart> parts;
  // Further settings the budget implies, as (option, value) in the engine's syntax
  // (WiredTiger's eviction targets).
  std::vector<std::pair<std::string, std::string>> settings;
  // With --io_bound the engine reads its data with O_DIRECT (what it sets, e.g.
  // "use_direct_reads=true"); empty: it cannot, and caches through the OS page cache, so only a
  // memory cgroup bounds what it caches.
  std::string direct_io;
};

// The pairs an adapter appends to its Config() for a budget: "memory_budget" and one
// "memory_budget.<knob>" per part (bytes, summing to the budget), then one
// "memory_budget.sets.<option>" per implied setting, and "io_bound.direct_io". Empty for budget 0.
std::vector<std::pair<std::string, std::string>> BudgetConfig(uint64_t budget,
                                                              const MemoryPlan& plan,
                                                              bool io_bound);

// One line for --version: "block_cache 768 MiB, write_buffers 256 MiB; sets write_buffer_size=...;
// --io_bound: use_direct_reads=true,...".
std::string DescribePlan(const MemoryPlan& plan);

// `bytes` as the largest whole binary unit: "256 MiB", "1 GiB", "1536 KiB", else "N bytes".
std::string BudgetBytes(uint64_t bytes);

}  // namespace kvbench
