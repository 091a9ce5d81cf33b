#include "cli/memory_flags.h"

#include <string>

#include "env/io_bound.h"
#include "kv/memory_budget.h"
#include "kv/registry.h"
#include "stats/resource_usage.h"

namespace kvbench {

namespace {

// Room in the cgroup for what is not cache: the harness and the engine's own heap.
constexpr uint64_t kCgroupHeadroom = 32ull << 20;

Status Usage(const std::string& message) { return Status::InvalidArgument(message); }

Status CheckBudget(const KvbenchFlags& f, const EngineInfo& engine, bool cache_size_given) {
  if (f.memory_budget < 0) {
    if (f.io_bound) {
      return Usage("--io_bound needs --memory_budget: the memory " + f.engine +
                   " may cache the database in");
    }
    return Status::OK();
  }
  if (cache_size_given) {
    return Usage("give --memory_budget or --cache_size, not both: the budget sets " + f.engine +
                 "'s cache (memory_budget.* in the engine config says how)");
  }
  if (engine.adapter.plan_memory == nullptr) {
    return Usage("the " + f.engine + " engine takes no --memory_budget (it is a reference " +
                 "engine and holds everything in memory)");
  }
  if (!f.io_bound) return Status::OK();
  const double data = static_cast<double>(f.num) * (f.key_size + f.value_size);
  if (2.0 * static_cast<double>(f.memory_budget) > data) {
    return Usage("--io_bound: the data (--num x (key_size + value_size) = " +
                 BudgetBytes(static_cast<uint64_t>(data)) + ") must be at least twice " +
                 "--memory_budget=" + BudgetBytes(static_cast<uint64_t>(f.memory_budget)) +
                 ", or the run is not IO-bound; raise --num or lower the budget");
  }
  return Status::OK();
}

// O_DIRECT where the engine has it; otherwise a memory cgroup of budget + headroom for the
// whole process, since the engine caches through the OS page cache.
Status SetUpIoBound(const EngineInfo& engine, RunConfig* config) {
  const uint64_t budget = config->engine_options.memory_budget;
  const MemoryPlan plan = engine.adapter.plan_memory(budget);
  if (!plan.direct_io.empty()) {
    config->io_bound_mechanism = "O_DIRECT (" + plan.direct_io + "); the engine caches in " +
                                 "--memory_budget=" + BudgetBytes(budget);
    return Status::OK();
  }
  const uint64_t limit = budget + kCgroupHeadroom + ResourceSnapshot::Take().rss_bytes;
  std::string mechanism;
  Status s = LimitMemoryWithCgroup(limit, &mechanism);
  if (!s.ok()) {
    return Usage(
        "--io_bound: " + config->engine + " reads through the OS page cache (no " +
        "O_DIRECT), so only a memory cgroup can bound it, and none is available: " + s.message());
  }
  config->io_bound_mechanism = "memory " + mechanism + " (--memory_budget=" + BudgetBytes(budget) +
                               " + the process's own memory)";
  return Status::OK();
}

}  // namespace

Status ApplyMemoryFlags(const KvbenchFlags& f, bool cache_size_given, RunConfig* config) {
  const EngineInfo* engine = FindEngine(f.engine);
  Status s = CheckBudget(f, *engine, cache_size_given);
  if (s.ok() && f.drop_caches) s = CheckDropCaches();
  if (!s.ok()) return s;
  config->drop_caches = f.drop_caches;
  config->engine_options.memory_budget = f.memory_budget > 0 ? f.memory_budget : 0;
  config->engine_options.io_bound = f.io_bound;
  return f.io_bound ? SetUpIoBound(*engine, config) : Status::OK();
}

}  // namespace kvbench
