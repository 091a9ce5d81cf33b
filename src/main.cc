// kvbench: db_bench-style benchmarks over the engines of cmake/deps.json behind one KV interface.
//
// The flags are a table (cli/kvbench_flags.cc) parsed by cli/flags.h; the rules between flags are
// cli/run_config.cc's. Every usage error exits with status 2 and a message naming the problem,
// runtime failures with 1, success with 0.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/canary.h"
#include "cli/flags.h"
#include "cli/kvbench_flags.h"
#include "cli/memory_flags.h"
#include "cli/run_config.h"
#include "common/build_info.h"
#include "common/file_output.h"
#include "common/layout.h"
#include "crc32c/crc32c.h"
#include "env/environment.h"
#include "kv/registry.h"
#include "report/console_reporter.h"
#include "report/hgrm_reporter.h"
#include "report/json_reporter.h"
#include "runner/runner.h"
#include "workload/benchmark.h"

namespace {

using kvbench::Status;

constexpr int kUsageError = 2;

int Usage(const Status& s) {
  std::fprintf(stderr, "kvbench: %s\nRun 'kvbench --help' for usage.\n", s.message().c_str());
  return kUsageError;
}

void PrintVersion() {
  const kvbench::BuildInfo& b = kvbench::GetBuildInfo();
  std::printf(
      "kvbench %s (git %s)\npreset: %s\ncompiler: %s %s\nbuild type: %s\nflags: %s\n"
      "target: %s (cpu %s)%s%s\nassertions: %s\nlayout: %s\nengines:",
      b.kvbench_version, b.git_revision, b.preset, b.compiler_id, b.compiler_version, b.build_type,
      b.cxx_flags, b.target_arch, b.target_cpu, *b.emulator ? ", emulated by " : "", b.emulator,
      b.assertions ? "on" : "off", kvbench::LayoutText().c_str());
  for (const auto& e : kvbench::AllEngines()) {
    std::printf(" %s%s", e.name, e.compiled_in ? "" : "(not compiled in)");
  }
  std::printf("\nmemory budget split at --memory_budget=1GB (docs/engines.md):\n");
  for (const auto& e : kvbench::AllEngines()) {
    if (!e.compiled_in || e.adapter.plan_memory == nullptr) continue;
    std::printf("  %-10s %s\n", e.name,
                kvbench::DescribePlan(e.adapter.plan_memory(1ull << 30)).c_str());
  }
  std::printf("libraries:\n");
  // The same audit as the run header: origin, version, the file loaded and how it was built.
  const kvbench::Environment env = kvbench::Environment::Collect(&kvbench::EngineLibrary, "");
  for (const auto& l : env.libraries) {
    if (l.version.empty() && l.path.empty() && l.origin.empty()) continue;
    std::printf("  %-10s %-8s %s\n", l.name.c_str(), l.version.c_str(),
                kvbench::DescribeLibrary(l).c_str());
    if (!l.atomics.empty()) std::printf("  %-10s atomics: %s\n", "", l.atomics.c_str());
  }
  // AArch64: kvbench itself (and every library linked statically into it).
  if (!env.atomics.empty()) std::printf("atomics:    kvbench %s\n", env.atomics.c_str());
  // crc32c::Extend's kernel per size class on this host, and the rates it was chosen from.
  std::printf("crc32c:     %s (%s)\n", kvbench::crc32c::DescribeChoice(env.crc32c).c_str(),
              kvbench::crc32c::DescribeHow(env.crc32c).c_str());
  for (size_t c = 0; c < kvbench::crc32c::kSizeClassCount; ++c) {
    const std::string rates = kvbench::crc32c::DescribeRates(env.crc32c, c);
    if (!rates.empty()) {
      std::printf("  %-12s %s\n", kvbench::crc32c::SizeClassName(c).c_str(), rates.c_str());
    }
  }
}

// One compiled-in engine per line, "name<TAB>storage" or "name<TAB>reference", for scripts.
void PrintEngineList() {
  for (const auto& e : kvbench::AllEngines()) {
    if (e.compiled_in) std::printf("%s\t%s\n", e.name, e.reference ? "reference" : "storage");
  }
}

void PrintHelp(const std::vector<kvbench::Flag>& flags) {
  std::printf(
      "Usage: kvbench [--flag=value ...]\n\n"
      "Runs db_bench-style benchmarks against one engine and prints one line per benchmark\n"
      "(and per role for *whilewriting). Op counts are totals across threads. Exit status:\n"
      "0 success, 2 usage error, 1 runtime failure. See docs/ for definitions.\n\nBenchmarks:\n");
  for (const auto& b : kvbench::AllBenchmarks()) std::printf("  %-22s %s\n", b.name, b.description);
  std::printf("\nSuites (a name in --benchmarks that runs several in order):\n");
  for (const auto& s : kvbench::AllSuites()) std::printf("  %-22s %s\n", s.name, s.description);
  std::printf("\nEngines:\n");
  for (const auto& e : kvbench::AllEngines()) {
    std::printf("  %-22s %s%s\n", e.name, e.description,
                e.compiled_in ? "" : "  [not compiled in]");
  }
  std::printf("\nFlags (--flag=value, --flag value, --flag / --noflag for booleans):\n");
  kvbench::PrintFlags(stdout, flags);
  std::printf(
      "  --help, --version, --list-engines; --check-flags: check the other flags as for a run, "
      "run nothing\n"
      "  --canary [--cpu_affinity=N]: time the CPU speed reference loop on one CPU (about "
      "50 ms,\n    best of its windows; default the CPU it starts on) and print one JSON "
      "object; run nothing\n");
  std::printf(
      "\nEnvironment: KVBENCH_CRC32C=<kernel> forces the crc32c kernel that --version and the "
      "JSON\n"
      "record (default: the fastest per size class, measured at start; docs/micro.md).\n");
}

bool WasSet(const std::vector<kvbench::Flag>& flags, const std::string& name) {
  for (const auto& f : flags) {
    if (name == f.name()) return f.is_set();
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // --check-flags: every check of the command line that comes before a run, then exit 0 without
  // touching a database (kvb matrix and versions ask before their first run). Taken out of the
  // arguments here: the others are parsed and checked as for a run.
  bool check_only = false, canary = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool check = i > 0 && (a == "--check-flags" || a == "--check_flags");
    const bool canary_flag = i > 0 && a == "--canary";  // cli/canary.h: run nothing else
    check_only = check_only || check;
    canary = canary || canary_flag;
    if (!check && !canary_flag) args.push_back(argv[i]);
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  kvbench::KvbenchFlags flags;
  std::vector<kvbench::Flag> table = kvbench::KvbenchFlagTable(&flags);
  std::string action;
  Status s = kvbench::ParseFlags(
      table, {"help", "h", "helpfull", "version", "list-engines", "list_engines"}, argc, argv,
      kvbench::UnknownFlags::kError, &action);
  if (!s.ok()) return Usage(s);
  if (canary && action.empty()) return kvbench::RunCanary(flags.cpu_affinity);
  // KVBENCH_CRC32C naming a kernel this CPU or build cannot run is a usage error, like a bad flag.
  if (action.empty() || action == "version") {
    const std::string& error = kvbench::crc32c::CurrentChoice().error;
    if (!error.empty()) return Usage(Status::InvalidArgument(error));
  }
  if (action == "version") {
    PrintVersion();
    return 0;
  }
  if (action == "list-engines" || action == "list_engines") {
    PrintEngineList();
    return 0;
  }
  if (!action.empty()) {
    PrintHelp(table);
    return 0;
  }
  kvbench::RunConfig config;
  s = kvbench::BuildConfig(flags, WasSet(table, "db"), argc, argv, &config);
  if (s.ok()) s = kvbench::ApplyMemoryFlags(flags, WasSet(table, "cache_size"), &config);
  if (!s.ok()) return Usage(s);
  if (check_only) {
    std::printf("kvbench: the flags are valid (nothing was run)\n");
    return 0;
  }

  kvbench::ReporterList reporters;
  reporters.Append(std::make_unique<kvbench::ConsoleReporter>(stdout, stderr, config.histogram));
  if (!config.json_path.empty()) {
    // A file can take the incomplete document after a result and the whole one at the end; a
    // stream gets one document.
    kvbench::OutputTarget json;
    const bool stream = kvbench::ResolveOutput(config.json_path, &json).ok() && json.in_place;
    reporters.Append(std::make_unique<kvbench::JsonReporter>(kvbench::AtomicFile(config.json_path),
                                                             stderr, /*rewritable=*/!stream));
  }
  if (!config.hgrm_prefix.empty()) {
    reporters.Append(std::make_unique<kvbench::HgrmReporter>(config.hgrm_prefix, stderr));
  }
  return kvbench::RunBenchmarks(config, reporters);
}
