// kvbench: db_bench-style benchmarks over the engines of cmake/deps.json behind one KV interface.
//
// flags -> config -> runner: the command line (cli/command_line.h) parses the flag table
// (cli/kvbench_flags.cc) and applies the rules between flags (cli/run_config.cc) to make a
// RunConfig; the runner runs it, reporting through the console, JSON and .hgrm reporters. Every
// usage error exits with status 2 and a message naming the problem, runtime failures with 1,
// success with 0.
#include <cstdio>
#include <memory>

#include "cli/canary.h"
#include "cli/command_line.h"
#include "cli/info.h"
#include "common/file_output.h"
#include "report/console_reporter.h"
#include "report/hgrm_reporter.h"
#include "report/json_reporter.h"
#include "runner/runner.h"

namespace {

constexpr int kUsageError = 2;

int Usage(const kvbench::Status& s) {
  std::fprintf(stderr, "kvbench: %s\nRun 'kvbench --help' for usage.\n", s.message().c_str());
  return kUsageError;
}

// The console always; JSON and .hgrm files when asked for.
kvbench::ReporterList Reporters(const kvbench::RunConfig& config) {
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
  return reporters;
}

}  // namespace

int main(int argc, char** argv) {
  using kvbench::Action;
  kvbench::CommandLine command_line;
  kvbench::Status s = command_line.Parse(argc, argv);
  if (!s.ok()) return Usage(s);
  switch (command_line.action()) {
    case Action::kHelp:
      command_line.PrintHelp();
      return 0;
    case Action::kVersion:
      kvbench::PrintVersion();
      return 0;
    case Action::kListEngines:
      kvbench::PrintEngineList();
      return 0;
    case Action::kCanary:
      return kvbench::RunCanary("kvbench", command_line.cpu_affinity());
    case Action::kRun:
    case Action::kCheckFlags:
      break;
  }
  kvbench::RunConfig config;
  s = command_line.BuildRunConfig(&config);
  if (!s.ok()) return Usage(s);
  if (command_line.action() == Action::kCheckFlags) {
    std::printf("kvbench: the flags are valid (nothing was run)\n");
    return 0;
  }
  kvbench::ReporterList reporters = Reporters(config);
  return kvbench::RunBenchmarks(config, reporters);
}
