#include "cli/command_line.h"

#include <cstdio>
#include <string>

#include "cli/memory_flags.h"
#include "cli/run_config.h"
#include "crc32c/crc32c.h"
#include "kv/registry.h"
#include "workload/benchmark.h"

namespace kvbench {

CommandLine::CommandLine() : table_(KvbenchFlagTable(&flags_)) {}

Status CommandLine::Parse(int argc, char** argv) {
  // --check-flags is taken out here (kvb matrix and versions ask with it before their first
  // run): the other arguments are parsed and checked as for a run. So is --canary (cli/canary.h),
  // which runs nothing else.
  bool check_only = false, canary = false;
  args_.clear();
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool check = i > 0 && (a == "--check-flags" || a == "--check_flags");
    const bool canary_flag = i > 0 && a == "--canary";
    check_only = check_only || check;
    canary = canary || canary_flag;
    if (!check && !canary_flag) args_.push_back(argv[i]);
  }
  std::string action;
  Status s =
      ParseFlags(table_, {"help", "h", "helpfull", "version", "list-engines", "list_engines"},
                 static_cast<int>(args_.size()), args_.data(), UnknownFlags::kError, &action);
  if (!s.ok()) return s;
  action_ = action.empty()                                         ? Action::kRun
            : action == "version"                                  ? Action::kVersion
            : action == "list-engines" || action == "list_engines" ? Action::kListEngines
                                                                   : Action::kHelp;
  if (action_ == Action::kRun && check_only) action_ = Action::kCheckFlags;
  if (action_ == Action::kRun && canary) action_ = Action::kCanary;
  if (action_ == Action::kCanary || action_ == Action::kHelp || action_ == Action::kListEngines)
    return Status::OK();
  const std::string& error = crc32c::CurrentChoice().error;
  return error.empty() ? Status::OK() : Status::InvalidArgument(error);
}

bool CommandLine::WasSet(const char* name) const {
  for (const auto& f : table_) {
    if (std::string(name) == f.name()) return f.is_set();
  }
  return false;
}

Status CommandLine::BuildRunConfig(RunConfig* config) {
  Status s =
      BuildConfig(flags_, WasSet("db"), static_cast<int>(args_.size()), args_.data(), config);
  if (s.ok()) s = ApplyMemoryFlags(flags_, WasSet("cache_size"), config);
  return s;
}

void CommandLine::PrintHelp() const {
  std::printf(
      "Usage: kvbench [--flag=value ...]\n\n"
      "Runs db_bench-style benchmarks against one engine and prints one line per benchmark\n"
      "(and per role for *whilewriting). Op counts are totals across threads. Exit status:\n"
      "0 success, 2 usage error, 1 runtime failure. See docs/ for definitions.\n\nBenchmarks:\n");
  for (const auto& b : AllBenchmarks()) std::printf("  %-22s %s\n", b.name, b.description);
  std::printf("\nSuites (a name in --benchmarks that runs several in order):\n");
  for (const auto& s : AllSuites()) std::printf("  %-22s %s\n", s.name, s.description);
  std::printf("\nEngines:\n");
  for (const auto& e : AllEngines()) {
    std::printf("  %-22s %s%s\n", e.name, e.description,
                e.compiled_in ? "" : "  [not compiled in]");
  }
  std::printf("\nFlags (--flag=value, --flag value, --flag / --noflag for booleans):\n");
  PrintFlags(stdout, table_);
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

}  // namespace kvbench
