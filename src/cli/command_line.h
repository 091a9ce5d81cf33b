// kvbench's command line as main() reads it: what it asks for (a run, --check-flags, --help,
// --version, --list-engines), the flags parsed against the table (cli/kvbench_flags.h), and the
// RunConfig they make (cli/run_config.h, cli/memory_flags.h). Every usage error is an
// InvalidArgument with a one-line message: kvbench prints it and exits with status 2.
#pragma once

#include <string>
#include <vector>

#include "cli/flags.h"
#include "cli/kvbench_flags.h"
#include "common/status.h"
#include "result/config.h"

namespace kvbench {

enum class Action {
  kRun,          // the benchmarks
  kCheckFlags,   // --check-flags: every check a run makes before it starts, then exit 0
  kHelp,         // --help, -h, --helpfull
  kVersion,      // --version
  kListEngines,  // --list-engines: one compiled-in engine per line, for scripts
  kCanary,       // --canary: the CPU speed reference loop on one CPU (cli/canary.h)
};

class CommandLine {
 public:
  CommandLine();
  CommandLine(const CommandLine&) = delete;  // the table points into flags_
  CommandLine& operator=(const CommandLine&) = delete;

  // Parses argv. --check-flags may stand anywhere; the other flags are parsed and checked as for
  // a run. KVBENCH_CRC32C naming a kernel this CPU or build cannot run is a usage error too, as a
  // bad flag is, for a run, --check-flags and --version.
  Status Parse(int argc, char** argv);

  Action action() const { return action_; }

  // --cpu_affinity as given ("" when not set): the CPU --canary runs on.
  const std::string& cpu_affinity() const { return flags_.cpu_affinity; }

  // The run's configuration: the rules between flags (BuildConfig) and the memory flags
  // (ApplyMemoryFlags, which may move the process into a memory cgroup for --io_bound: call it
  // before any thread starts). REQUIRES: Parse() returned OK.
  Status BuildRunConfig(RunConfig* config);

  // --help: the benchmarks, suites and engines, and the flag table with its ranges.
  void PrintHelp() const;

 private:
  bool WasSet(const char* name) const;

  KvbenchFlags flags_;
  std::vector<Flag> table_;
  std::vector<char*> args_;  // argv without --check-flags: what BuildConfig records
  Action action_ = Action::kRun;
};

}  // namespace kvbench
