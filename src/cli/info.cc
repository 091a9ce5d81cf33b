#include "cli/info.h"

#include <cstdio>
#include <string>

#include "common/build_info.h"
#include "common/layout.h"
#include "crc32c/crc32c.h"
#include "env/environment.h"
#include "kv/memory_budget.h"
#include "kv/registry.h"

namespace kvbench {

namespace {

// crc32c::Extend's kernel per size class on this host, and the rates it was chosen from.
void PrintCrc32c(const crc32c::Choice& choice) {
  std::printf("crc32c:     %s (%s)\n", crc32c::DescribeChoice(choice).c_str(),
              crc32c::DescribeHow(choice).c_str());
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    const std::string rates = crc32c::DescribeRates(choice, c);
    if (!rates.empty()) {
      std::printf("  %-12s %s\n", crc32c::SizeClassName(c).c_str(), rates.c_str());
    }
  }
}

}  // namespace

void PrintVersion() {
  const BuildInfo& b = GetBuildInfo();
  std::printf(
      "kvbench %s (git %s)\npreset: %s\ncompiler: %s %s\nbuild type: %s\nflags: %s\n"
      "target: %s (cpu %s)%s%s\nassertions: %s\nlayout: %s\nengines:",
      b.kvbench_version, b.git_revision, b.preset, b.compiler_id, b.compiler_version, b.build_type,
      b.cxx_flags, b.target_arch, b.target_cpu, *b.emulator ? ", emulated by " : "", b.emulator,
      b.assertions ? "on" : "off", LayoutText().c_str());
  for (const auto& e : AllEngines()) {
    std::printf(" %s%s", e.name, e.compiled_in ? "" : "(not compiled in)");
  }
  std::printf("\nmemory budget split at --memory_budget=1GB (docs/engines.md):\n");
  for (const auto& e : AllEngines()) {
    if (!e.compiled_in || e.adapter.plan_memory == nullptr) continue;
    std::printf("  %-10s %s\n", e.name, DescribePlan(e.adapter.plan_memory(1ull << 30)).c_str());
  }
  std::printf("libraries:\n");
  // The same audit as the run header: origin, version, the file loaded and how it was built.
  const Environment env = Environment::Collect(&EngineLibrary, "");
  for (const auto& l : env.libraries) {
    if (l.version.empty() && l.path.empty() && l.origin.empty()) continue;
    std::printf("  %-10s %-8s %s\n", l.name.c_str(), l.version.c_str(), DescribeLibrary(l).c_str());
    if (!l.atomics.empty()) std::printf("  %-10s atomics: %s\n", "", l.atomics.c_str());
  }
  // AArch64: kvbench itself (and every library linked statically into it).
  if (!env.atomics.empty()) std::printf("atomics:    kvbench %s\n", env.atomics.c_str());
  PrintCrc32c(env.crc32c);
}

void PrintEngineList() {
  for (const auto& e : AllEngines()) {
    if (e.compiled_in) std::printf("%s\t%s\n", e.name, e.reference ? "reference" : "storage");
  }
}

}  // namespace kvbench
