// Reporters: measurement produces BenchmarkResults; these format them. The console reporter
// prints db_bench-style lines on stdout and progress on stderr. The JSON document is written at
// the start, marked incomplete ("the run did not finish"), and again at the end, each time to a
// temporary file renamed into place: a run killed at any point leaves a document that says it is
// incomplete, never a complete one (an older run's or its own half-written one).
#pragma once

#include <string>
#include <vector>

#include "kv/engine.h"
#include "runner/config.h"
#include "runner/environment.h"
#include "runner/result.h"
#include "stats/summary.h"

namespace kvbench {

std::string FormatDouble(double v, int precision = 3);

// "reader 123456 ops/s (45%)" for one role over one interval.
std::string ProgressFragment(const char* role, const Interval& in, uint64_t ops_so_far,
                             uint64_t ops_total);
// One progress line on stderr.
void PrintProgress(const char* benchmark, double elapsed, double duration,
                   const std::string& fragments);

class Reporter {
 public:
  Reporter(const RunConfig& config, const Environment& env) : config_(config), env_(env) {}

  // Before anything runs: writes the incomplete placeholder document (if --json). False, with a
  // message on stderr, if it cannot be written.
  bool Start();
  // Prints the header: build, host, engine and its effective configuration, workload settings.
  void Begin(const Engine& engine);
  // Prints one benchmark's lines and keeps it for the JSON document (warm-ups are only printed).
  void Add(const BenchmarkResult& result);
  // After the measured repeats of one benchmark: per role, the spread of ops/s across them.
  void AddSummary(const std::vector<BenchmarkResult>& repeats);
  // Reports a runtime failure on stderr and writes an incomplete JSON document.
  void Fail(const std::string& message);
  // Writes the JSON document (if asked for). False if it could not be written.
  bool Finish();

 private:
  bool WriteJson(bool complete, const std::string& error);

  const RunConfig& config_;
  const Environment& env_;
  std::string engine_name_, engine_version_;
  std::vector<std::pair<std::string, std::string>> engine_config_;
  bool reference_engine_ = false;
  std::vector<std::string> warnings_;  // the environment's and the engine's
  std::vector<BenchmarkResult> results_;
  struct RoleSummary {
    std::string benchmark, role;
    SampleSummary ops_per_sec;
  };
  std::vector<RoleSummary> summaries_;
};

}  // namespace kvbench
