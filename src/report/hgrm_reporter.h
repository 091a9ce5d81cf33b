// kvbench --hgrm_prefix=PATH: one HdrHistogram percentile file per benchmark and role,
// PATH.<benchmark>[-<n>][.r<k>].<role>.hgrm (report/hgrm.h, docs/report.md): -<n> for the n-th
// entry of a benchmark listed again in --benchmarks, .r<k> for repeat k when it has several.
// Warm-ups are not written. kvb export hgrm names the files it writes from a JSON the same way.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "report/reporter.h"

namespace kvbench {

class HgrmReporter : public Reporter {
 public:
  // Failures to write are reported on `err`; they fail the run at its end (Finish).
  HgrmReporter(std::string prefix, std::FILE* err) : prefix_(std::move(prefix)), err_(err) {}

  // False (reported) when the prefix's directory cannot be written: before anything runs.
  bool Start(const RunContext& context) override;
  void Begin(const RunContext& context) override {}
  void Add(const BenchmarkResult& result) override;
  void AddSummaries(const std::vector<RoleSummary>& summaries) override {}
  void Fail(const std::string& message) override {}
  bool Finish() override { return ok_; }

  // The file of one role of one result: prefix.<benchmark>[-<n>][.r<k>].<role>.hgrm.
  static std::string FileName(const std::string& prefix, const BenchmarkResult& r, int occurrence,
                              const std::string& role);

 private:
  std::string prefix_;
  std::FILE* const err_;
  std::map<std::string, int> occurrences_;  // entries of each benchmark seen so far
  bool ok_ = true;
};

}  // namespace kvbench
