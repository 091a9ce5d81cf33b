// The JSON reporter (docs/json.md, schema version 1). A document is written only once the run has
// a result to put in it: an older document at the path (another run's result) is never replaced
// by one that holds nothing, so a run refused before its first benchmark leaves it as it was. From
// the first result on, the document is rewritten (marked incomplete, "the run did not finish")
// after a result at most every kRewriteSeconds, and at the end, each time whole, through the
// output: with AtomicFile a temporary file renamed into place, so a run killed after its first
// result leaves a document that says it is incomplete and holds what finished, never a complete
// one (an older run's or its own half-written one).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "report/reporter.h"

namespace kvbench {

// Where a finished document goes: `write` it, not OK (with the reason) if it could not be
// written; `check`, if set, says whether it could be, without writing (Start asks it).
struct JsonOutput {
  using Write = std::function<Status(const std::string& document)>;
  using Check = std::function<Status()>;
  // Any callable taking the document: an output with nothing to check first.
  template <typename F,
            typename = std::enable_if_t<std::is_invocable_r_v<Status, F&, const std::string&>>>
  JsonOutput(F f) : write(std::move(f)) {}  // NOLINT(google-explicit-constructor)
  JsonOutput(Write w, Check c) : write(std::move(w)), check(std::move(c)) {}
  Status operator()(const std::string& document) const { return write(document); }

  Write write;
  Check check;
};

// Writes `path` by common/file_output.h's rule: a regular file (or none) through `path`.tmp renamed
// over it, a symbolic link's target the same way (the link stays), a device or FIFO in place. Its
// check creates and removes `path`.tmp (common/file_output.h CheckOutputWritable).
JsonOutput AtomicFile(const std::string& path);

// The least time between two rewrites of the incomplete document during a run: a run of many
// short benchmarks does not spend its time writing ever longer documents.
constexpr double kRewriteSeconds = 5;

class JsonReporter : public Reporter {
 public:
  // Failures to write are reported on `err`. Without `rewritable` the document is written once,
  // at the end (or at a failure after a result): for an output that cannot take a document back
  // (a FIFO, standard output), which would otherwise receive several.
  JsonReporter(JsonOutput output, std::FILE* err, bool rewritable = true)
      : output_(std::move(output)), err_(err), rewritable_(rewritable) {}

  bool Start(const RunContext& context) override;
  void Begin(const RunContext& context) override { context_ = context; }
  void Add(const BenchmarkResult& result) override;
  void AddSummaries(const std::vector<RoleSummary>& summaries) override;
  // Writes the incomplete document with `message`, if there is a result to write.
  void Fail(const std::string& message) override;
  bool Finish() override { return Write(true, ""); }

  // The document for what was reported so far (complete, or incomplete with `error`).
  std::string Document(bool complete, const std::string& error) const;

 private:
  bool Write(bool complete, const std::string& error);

  JsonOutput output_;
  std::FILE* const err_;
  const bool rewritable_;
  double last_write_ = -1;  // CLOCK_MONOTONIC seconds of the last incomplete document; -1: none
  RunContext context_;
  std::vector<BenchmarkResult> results_;  // measured runs only: warm-ups are not recorded
  std::vector<RoleSummary> summaries_;
};

}  // namespace kvbench
