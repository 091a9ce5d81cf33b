// The benchmark table: one row per name, no if/else dispatch on names anywhere else. A new
// workload is its loop (workloads.cc) and one row here.
#include <memory>
#include <string>
#include <vector>

#include "workload/benchmark.h"
#include "workload/insertbench.h"

namespace kvbench {

namespace {

// insertbench's query steps: readers of one kind while a writer inserts (and deletes) at `rate`.
BenchmarkSpec IbQueries(const char* name, const char* kind, WorkFn work, int rate) {
  // The descriptions live as long as the table: one static string per row.
  static std::vector<std::unique_ptr<std::string>> texts;
  texts.push_back(std::make_unique<std::string>(
      std::string("insertbench: ") + kind +
      (work == &IbRangeQuery ? " queries (seek a random column of a random index, read 10 entries)"
                             : " queries (get a random live pk)") +
      " on --threads readers while one writer does l.i1's inserts and deletes at " +
      std::to_string(rate) + " rows/s"));
  return Step(
      ReadWhileInserting(name, texts.back()->c_str(), work, &IbPacedInsert, rate, &IbRowBytes),
      &IbSetup);
}

}  // namespace

const std::vector<BenchmarkSpec>& AllBenchmarks() {
  static const std::vector<BenchmarkSpec> table = {
      Fill("fillseq", "write keys 0..num-1 in ascending order; threads split the range", &FillSeq,
           AckKind::kFillSeq),
      Fill("fillrandom",
           "write every key 0..num-1 exactly once in a seeded random order (a permutation)",
           &FillRandom, AckKind::kFillRandom),
      Update("overwrite", "write --writes keys drawn uniformly with replacement from 0..num-1",
             &Overwrite),
      Read("readrandom", "read --reads keys drawn uniformly from 0..num-1; reports found/not-found",
           &ReadRandom),
      Read("readseq",
           "read up to --reads entries in key order with a cursor, stopping at the end of the data "
           "(as db_bench); thread i starts at key i*num/T",
           &ReadSeq),
      Read("fwdrange",
           "--reads times: seek to a uniform random key, then read --seek_nexts entries with Next "
           "(db_bench seekrandom)",
           &FwdRange),
      ReadWhileWriting(
          "readwhilewriting",
          "readrandom on --threads readers plus one writer paced at --benchmark_write_rate_limit",
          &ReadRandom),
      ReadWhileWriting(
          "fwdrangewhilewriting",
          "fwdrange on --threads readers plus one writer paced at --benchmark_write_rate_limit",
          &FwdRange),
      CheckAcks("verifyacked",
                "after a crash: read back every write the fill's --ack_file says was acknowledged "
                "and check its value; a missing one is a lost write (exit 1). Needs "
                "--use_existing_db (or a fill earlier in --benchmarks) and the fill's flags",
                &VerifyAcked),
      // The Insert Benchmark's steps (insertbench.h); `--benchmarks=insertbench` runs them all.
      Step(Fill("l.i0",
                "insertbench: load rows 0..num-1 in primary-key order, no secondary entries "
                "(8-byte pk; three seeded secondary columns in the value; needs --value_size>=24)",
                &IbLoad, AckKind::kNone),
           &IbSetup),
      Step(Pass("l.x",
                "insertbench: one scan of the rows building their three secondary indexes "
                "(entries (column, pk) with empty values)",
                Role::kWriter, &IbIndex),
           &IbSetup),
      Step(Update("l.i1",
                  "insertbench: --writes inserts of new rows, each with its 3 secondary entries "
                  "and the delete of the oldest row (and its entries) in one atomic batch",
                  &IbInsert),
           &IbSetup),
      IbQueries("qr100", "range", &IbRangeQuery, 100),
      IbQueries("qp100", "point", &IbPointQuery, 100),
      IbQueries("qr500", "range", &IbRangeQuery, 500),
      IbQueries("qp500", "point", &IbPointQuery, 500),
      IbQueries("qr1000", "range", &IbRangeQuery, 1000),
      IbQueries("qp1000", "point", &IbPointQuery, 1000),
      Step(Pass("ibcheck",
                "insertbench: check every secondary entry points at a live row with its column "
                "and every live row (exactly the window of --num) has its 3 entries; fails "
                "(exit 1) on any mismatch",
                Role::kReader, &IbCheck),
           &IbSetup),
      Settle("settle", "wait for the engine's background work (flush, compaction, checkpoint)"),
  };
  return table;
}

const std::vector<Suite>& AllSuites() {
  static const std::vector<Suite> suites = {
      {"insertbench",
       "the Insert Benchmark: l.i0, l.x, l.i1, qr100, qp100, qr500, qp500, qr1000, qp1000, "
       "then ibcheck (docs/workloads.md)",
       &InsertBenchSteps()},
  };
  return suites;
}

const Suite* FindSuite(const std::string& name) {
  for (const auto& s : AllSuites()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

const BenchmarkSpec* FindBenchmark(const std::string& name) {
  for (const auto& b : AllBenchmarks()) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

}  // namespace kvbench
