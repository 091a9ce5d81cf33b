// The console reporter: a db_bench-style line per benchmark and role, then one line per metric
// group (latency, cost, intervals) looping over the role's metrics; progress lines and errors on
// the second stream.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "report/reporter.h"

namespace kvbench {

class ConsoleReporter : public Reporter {
 public:
  // Results go to `out` (stdout), progress and errors to `err` (stderr). `histogram`: print every
  // metric, not only the usual ones (--histogram).
  ConsoleReporter(std::FILE* out, std::FILE* err, bool histogram)
      : out_(out), err_(err), histogram_(histogram) {}

  void Begin(const RunContext& context) override;
  void Progress(const ProgressUpdate& update) override;
  void Add(const BenchmarkResult& result) override;
  void AddSummaries(const std::vector<RoleSummary>& summaries) override;
  void Fail(const std::string& message) override;
  // Prints what else the machine did during the run (env/noise.h), a WARNING when it was noisy.
  bool Finish() override;

 private:
  void AddRole(const BenchmarkResult& r, const RoleResult& role, const std::string& run_label);
  void AddGroupLines(const RoleResult& role);
  void AddBenchmarkLines(const BenchmarkResult& r);
  void AddProfileLines(const ProfileResult& p);

  std::FILE* const out_;
  std::FILE* const err_;
  const bool histogram_;
  bool reference_engine_ = false;
  const NoiseReport* noise_ = nullptr;  // RunContext::noise
  std::string profile_unavailable_;     // said once in the header, not again per benchmark
};

}  // namespace kvbench
