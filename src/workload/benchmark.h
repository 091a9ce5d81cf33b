// What a benchmark is: a name, what its threads run, which count bounds them, and whether it starts
// from an empty database. The table of them is registry.cc's; rows are built by the named helpers
// below, so that each field is set by name and a typo fails to compile.
#pragma once

#include <cstdint>
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

// The benchmark table, in --help order.
const std::vector<BenchmarkSpec>& AllBenchmarks();
// nullptr if unknown.
const BenchmarkSpec* FindBenchmark(const std::string& name);

}  // namespace kvbench
