// The benchmark table: one row per name, no if/else dispatch on names anywhere else.
#include <string>
#include <vector>

#include "workload/workload.h"

namespace kvbench {

const std::vector<BenchmarkSpec>& AllBenchmarks() {
  static const std::vector<BenchmarkSpec> table = {
      {"fillseq", "write keys 0..num-1 in ascending order; threads split the range", true, "writer",
       "num", &FillSeq, nullptr, AckKind::kFillSeq, false},
      {"fillrandom",
       "write every key 0..num-1 exactly once in a seeded random order (a permutation)", true,
       "writer", "num", &FillRandom, nullptr, AckKind::kFillRandom, false},
      {"overwrite", "write --writes keys drawn uniformly with replacement from 0..num-1", false,
       "writer", "writes", &Overwrite, nullptr, AckKind::kNone, false},
      {"readrandom", "read --reads keys drawn uniformly from 0..num-1; reports found/not-found",
       false, "reader", "reads", &ReadRandom, nullptr, AckKind::kNone, false},
      {"readseq",
       "read up to --reads entries in key order with a cursor, stopping at the end of the data "
       "(as db_bench); thread i starts at key i*num/T",
       false, "reader", "reads", &ReadSeq, nullptr, AckKind::kNone, false},
      {"fwdrange",
       "--reads times: seek to a uniform random key, then read --seek_nexts entries with Next "
       "(db_bench seekrandom)",
       false, "reader", "reads", &FwdRange, nullptr, AckKind::kNone, false},
      {"readwhilewriting",
       "readrandom on --threads readers plus one writer paced at --benchmark_write_rate_limit",
       false, "reader", "reads", &ReadRandom, &PacedWriter, AckKind::kNone, false},
      {"fwdrangewhilewriting",
       "fwdrange on --threads readers plus one writer paced at --benchmark_write_rate_limit", false,
       "reader", "reads", &FwdRange, &PacedWriter, AckKind::kNone, false},
      {"verifyacked",
       "after a crash: read back every write the fill's --ack_file says was acknowledged and "
       "check its value; a missing one is a lost write (exit 1). Needs --use_existing_db (or a "
       "fill earlier in --benchmarks) and the fill's flags",
       false, "reader", "acked", &VerifyAcked, nullptr, AckKind::kNone, true},
      {"settle", "wait for the engine's background work (flush, compaction, checkpoint)", false, "",
       "", nullptr, nullptr, AckKind::kNone, false},
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
