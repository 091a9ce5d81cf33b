#include "kv/memory_budget.h"

#include <cstdio>

namespace kvbench {

std::string BudgetBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  for (int i = 0; i < 4; ++i) {
    const uint64_t unit = 1ull << (10 * (4 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + kUnits[i];
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  return bytes >= (1u << 20) ? std::string(text) : std::to_string(bytes) + " bytes";
}

std::string DescribePlan(const MemoryPlan& plan) {
  std::string text;
  for (const auto& p : plan.parts) {
    text += (text.empty() ? "" : ", ") + p.knob + " " + BudgetBytes(p.bytes);
  }
  std::string sets;
  for (const auto& [option, value] : plan.settings) {
    sets += sets.empty() ? "; sets " : ",";
    sets += option;
    sets += "=";
    sets += value;
  }
  return text + sets + "; --io_bound: " +
         (plan.direct_io.empty() ? "memory cgroup (no O_DIRECT)" : plan.direct_io);
}

std::vector<std::pair<std::string, std::string>> BudgetConfig(uint64_t budget,
                                                              const MemoryPlan& plan,
                                                              bool io_bound) {
  std::vector<std::pair<std::string, std::string>> config;
  if (budget == 0) return config;
  config.emplace_back("memory_budget", std::to_string(budget));
  for (const auto& p : plan.parts) {
    config.emplace_back("memory_budget." + p.knob, std::to_string(p.bytes));
  }
  for (const auto& [option, value] : plan.settings) {
    config.emplace_back("memory_budget.sets." + option, value);
  }
  if (io_bound) {
    config.emplace_back("io_bound.direct_io",
                        plan.direct_io.empty() ? "(not supported: page cache)" : plan.direct_io);
  }
  return config;
}

}  // namespace kvbench
