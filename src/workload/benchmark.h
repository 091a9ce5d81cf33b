// What a benchmark is: a name, what its threads run, which count bounds them, and whether it starts
// from an empty database. The table of them is registry.cc's; rows are built by the named helpers
// below, so that each field is set by name and a typo fails to compile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workload/ack_log.h"
#include "workload/workload.h"

namespace kvbench {

// What the --threads workers of a benchmark do; `settle` has none.
enum class Role { kNone, kReader, kWriter };
// "reader", "writer", "" (the role's name in the output).
const char* RoleName(Role role);

// Which count the workers' loop runs to.
enum class OpCount {
  kNone,    // settle
  kNum,     // --num keys (fills)
  kReads,   // --reads
  kWrites,  // --writes
  kAcked,   // the writes --ack_file says were acknowledged (verifyacked)
};

// Makes the state the threads of one run share (insertbench.h's StepState), from the database as
// it is, before they start.
using SetupFn = Status (*)(Engine* engine, const WorkloadOptions& options,
                           std::shared_ptr<StepState>* state);

struct BenchmarkSpec {
  const char* name = "";
  const char* description = "";  // one line for --help
  bool fresh_db = false;         // starts from an empty database unless --use_existing_db
  Role role = Role::kNone;
  OpCount count = OpCount::kNone;
  WorkFn work = nullptr;          // run by each of the --threads workers; nullptr for `settle`
  WorkFn background = nullptr;    // *whilewriting: the paced writer (one extra thread)
  AckKind acks = AckKind::kNone;  // fills: the key order they record in --ack_file
  bool checks_acks = false;       // verifyacked: reads --ack_file; a missing key is a lost write
  // Its readers look for keys of 0..num-1, so a miss is a key the database lacks (readrandom,
  // fwdrange, the *whilewriting ones); insertbench's queries count other things as misses.
  bool misses_are_absent_keys = false;
  SetupFn setup = nullptr;  // insertbench's steps: their shared state (Worker::step)
  // A paced writer that counts rows (insertbench's query steps): its target in rows/s and the
  // bytes one row counts. 0: the writer's target is --benchmark_write_rate_limit bytes/s.
  double writer_rows_per_sec = 0;
  uint64_t (*row_bytes)(const WorkloadOptions& options) = nullptr;

  // The paced writer's target in bytes/s (0 = unpaced).
  double WriterBytesPerSec(const WorkloadOptions& options) const;

  // The number of ops the main workers' loop is given (`acked`: --ack_file's total).
  uint64_t MainCount(const WorkloadOptions& options, uint64_t acked) const;
  // Fills and verifyacked stop when their keys run out, --duration or not; the others run to the
  // deadline when there is one, ignoring their counts.
  bool Bounded() const { return count == OpCount::kNum || count == OpCount::kAcked; }
  // "1000000 reads total over 4 threads, ignored: runs for --duration=60.000s; plus 1 paced
  // writer thread".
  std::string CountNote(const WorkloadOptions& options, uint64_t acked) const;
  bool UsesAckFile() const { return acks != AckKind::kNone || checks_acks; }
};

// The rows of the table, by kind.
// Writes every key of 0..num-1 once into an empty database, recording `acks` in --ack_file.
BenchmarkSpec Fill(const char* name, const char* description, WorkFn work, AckKind acks);
// --writes writes into the existing database.
BenchmarkSpec Update(const char* name, const char* description, WorkFn work);
// --reads reads of the existing database.
BenchmarkSpec Read(const char* name, const char* description, WorkFn work);
// Read(...) plus one writer paced at --benchmark_write_rate_limit.
BenchmarkSpec ReadWhileWriting(const char* name, const char* description, WorkFn work);
// Reads back what --ack_file says a fill wrote.
BenchmarkSpec CheckAcks(const char* name, const char* description, WorkFn work);
// No threads: waits for the engine's background work.
BenchmarkSpec Settle(const char* name, const char* description);
// A pass of `role` over the --num keys of the existing database (insertbench's index build and
// check): bounded by the keys, like a fill, but without emptying the database.
BenchmarkSpec Pass(const char* name, const char* description, Role role, WorkFn work);
// One step of a multi-step workload: `spec` with the setup its threads share.
BenchmarkSpec Step(BenchmarkSpec spec, SetupFn setup);
// Read(...) plus one writer running `writer` at `rows_per_sec` rows of `row_bytes` each.
BenchmarkSpec ReadWhileInserting(const char* name, const char* description, WorkFn work,
                                 WorkFn writer, double rows_per_sec,
                                 uint64_t (*row_bytes)(const WorkloadOptions&));

// The benchmark table, in --help order.
const std::vector<BenchmarkSpec>& AllBenchmarks();
// nullptr if unknown.
const BenchmarkSpec* FindBenchmark(const std::string& name);

// A name in --benchmarks that stands for several benchmarks in order (insertbench).
struct Suite {
  const char* name;
  const char* description;
  const std::vector<std::string>* steps;
};
const std::vector<Suite>& AllSuites();
// nullptr if `name` is no suite.
const Suite* FindSuite(const std::string& name);

}  // namespace kvbench
