// The benchmark table: one row per name, no if/else dispatch on names anywhere else. A new
// workload is its loop (workloads.cc) and one row here.
#include <string>
#include <vector>

#include "workload/benchmark.h"

namespace kvbench {

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
      Settle("settle", "wait for the engine's background work (flush, compaction, checkpoint)"),
  };
  return table;
}

const BenchmarkSpec* FindBenchmark(const std::string& name) {
  for (const auto& b : AllBenchmarks()) {
    if (name == b.name) return &b;
  }
  return nullptr;
}

}  // namespace kvbench
