// The reporter interface: measurement produces results (result/result.h); reporters format them.
// The runner calls every reporter in the order below; a reporter never runs anything itself.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "env/environment.h"
#include "result/config.h"
#include "result/result.h"
#include "stats/interval_series.h"

namespace kvbench {

// What a run is about: the configuration, the environment and the engine. Before the engine is
// open (Start) the engine fields are --engine's name and nothing more.
struct RunContext {
  const RunConfig* config = nullptr;
  const Environment* env = nullptr;
  std::string engine;  // its registry name
  std::string engine_version;
  std::vector<std::pair<std::string, std::string>> engine_config;
  bool reference_engine = false;      // memory/null: labelled as such everywhere
  std::vector<std::string> warnings;  // env/RunWarnings: decided there, printed here
  // What else the machine did during the run (env/noise.h): measured = false until the run has
  // ended, when the runner fills it in just before Finish.
  const NoiseReport* noise = nullptr;
};

// One interval of a running benchmark, per role.
struct RoleProgress {
  std::string role;
  Interval interval;
  uint64_t ops_so_far = 0;
  uint64_t ops_total = 0;  // 0 = the count does not decide the end (--duration does)
};
struct ProgressUpdate {
  std::string benchmark;
  double elapsed_seconds = 0;
  double duration_seconds = 0;  // --duration, 0 = none
  std::vector<RoleProgress> roles;
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  // Before anything runs. False, with the reason reported, if this reporter cannot work (an
  // unwritable --json); the run then stops.
  virtual bool Start(const RunContext& context) { return true; }
  // The engine is open: the run's header.
  virtual void Begin(const RunContext& context) = 0;
  // Once per --report_interval_seconds while a benchmark runs.
  virtual void Progress(const ProgressUpdate& update) {}
  // One run of a benchmark; a warm-up has result.warmup set.
  virtual void Add(const BenchmarkResult& result) = 0;
  // After the measured repeats of one benchmark (more than one), per role.
  virtual void AddSummaries(const std::vector<RoleSummary>& summaries) = 0;
  // A runtime failure (or a signal) ends the run.
  virtual void Fail(const std::string& message) = 0;
  // The run is complete. False if the output could not be written.
  virtual bool Finish() = 0;
};

// Several reporters as one, called in the order they were added.
class ReporterList : public Reporter {
 public:
  void Append(std::unique_ptr<Reporter> r) { reporters_.push_back(std::move(r)); }

  bool Start(const RunContext& context) override {
    for (auto& r : reporters_) {
      if (!r->Start(context)) return false;
    }
    return true;
  }
  void Begin(const RunContext& context) override {
    for (auto& r : reporters_) r->Begin(context);
  }
  void Progress(const ProgressUpdate& update) override {
    for (auto& r : reporters_) r->Progress(update);
  }
  void Add(const BenchmarkResult& result) override {
    for (auto& r : reporters_) r->Add(result);
  }
  void AddSummaries(const std::vector<RoleSummary>& summaries) override {
    for (auto& r : reporters_) r->AddSummaries(summaries);
  }
  void Fail(const std::string& message) override {
    for (auto& r : reporters_) r->Fail(message);
  }
  bool Finish() override {
    bool ok = true;
    for (auto& r : reporters_) ok = r->Finish() && ok;
    return ok;
  }

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

}  // namespace kvbench
