// The JSON reporter (docs/json.md, schema version 1). The document is written at Start, marked
// incomplete ("the run did not finish"), and again at the end, each time whole, through the
// output: with AtomicFile a temporary file renamed into place, so a run killed at any point
// leaves a document that says it is incomplete, never a complete one (an older run's or its own
// half-written one).
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "report/reporter.h"

namespace kvbench {

// Where a finished document goes; not OK (with the reason) if it could not be written.
using JsonOutput = std::function<Status(const std::string& document)>;
// Writes `path` by common/file_output.h's rule: a regular file (or none) through `path`.tmp renamed
// over it, a symbolic link's target the same way (the link stays), a device or FIFO in place.
JsonOutput AtomicFile(const std::string& path);

class JsonReporter : public Reporter {
 public:
  // Failures to write are reported on `err`. Without `placeholder` nothing is written at Start:
  // for an output that cannot be rewritten (a FIFO, standard output), which would otherwise
  // receive two documents.
  JsonReporter(JsonOutput output, std::FILE* err, bool placeholder = true)
      : output_(std::move(output)), err_(err), placeholder_(placeholder) {}

  bool Start(const RunContext& context) override;
  void Begin(const RunContext& context) override { context_ = context; }
  void Add(const BenchmarkResult& result) override;
  void AddSummaries(const std::vector<RoleSummary>& summaries) override;
  void Fail(const std::string& message) override { Write(false, message); }
  bool Finish() override { return Write(true, ""); }

  // The document for what was reported so far (complete, or incomplete with `error`).
  std::string Document(bool complete, const std::string& error) const;

 private:
  bool Write(bool complete, const std::string& error);

  JsonOutput output_;
  std::FILE* const err_;
  const bool placeholder_;
  RunContext context_;
  std::vector<BenchmarkResult> results_;  // measured runs only: warm-ups are not recorded
  std::vector<RoleSummary> summaries_;
};

}  // namespace kvbench
