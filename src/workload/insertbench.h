// The Insert Benchmark (Mark Callaghan's, as its write-ups run it) on a key-value engine: rows with
// a primary key and three secondary columns, kept as entries of one key space.
//
//   primary row       'p' + pk (8 bytes, big-endian)                  -> value: the three columns
//                                                                        (8 bytes each), then
//                                                                        padding to --value_size
//   secondary entry   'x' + index ('0'..'2') + column (8 bytes, BE)
//                         + pk (8 bytes, BE)                          -> empty
//
// A row's columns are a seeded hash of (--seed, pk, index): a delete knows the secondary entries
// to remove without reading the row, and the check can tell a damaged row from a damaged entry.
// The live rows are always the window [lo, lo + --num): l.i0 loads 0..num-1, and every later
// insert of row pk deletes row pk - num in the same atomic batch, so the database size stays
// constant. Each step finds `lo` from the database when it starts (StepState), so the steps also
// run one by one, in separate processes with --use_existing_db.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "kv/engine.h"
#include "workload/workload.h"

namespace kvbench {

constexpr int kIbIndexes = 3;
constexpr int kIbPrimaryKeySize = 9;            // 'p' + pk
constexpr int kIbSecondaryKeySize = 18;         // 'x' + index + column + pk
constexpr int kIbColumnBytes = 8 * kIbIndexes;  // the value's prefix
constexpr int kIbRangeEntries = 10;             // entries a range query reads
// Rows or entries a scan reads per cursor pass: the cursor is closed before the pass's writes or
// point reads, since a session has one cursor and an engine (LMDB) may not write under a read.
constexpr size_t kIbChunk = 1024;

// The state the threads of one step share, found in the database before they start.
struct StepState {
  uint64_t lo = 0;                // the oldest live row
  std::atomic<uint64_t> next{0};  // the next pk to insert (lo + num once loaded)
};

// The steps of `--benchmarks=insertbench`, in order.
const std::vector<std::string>& InsertBenchSteps();

// Bytes one insert counts (the primary row's key and value), the unit of a paced writer's rate.
uint64_t IbRowBytes(const WorkloadOptions& o);

// Finds the live window in the database: `lo` is the first primary key (0 in an empty database),
// `next` is lo + num when rows exist. InvalidArgument when --value_size cannot hold the columns.
Status IbSetup(Engine* engine, const WorkloadOptions& o, std::shared_ptr<StepState>* state);

// Keys and columns.
void IbPrimaryKey(uint64_t pk, char* out);
void IbSecondaryKey(int index, uint64_t column, uint64_t pk, char* out);
uint64_t IbColumn(uint64_t seed, uint64_t pk, int index);
uint64_t IbDecode64(const char* p);
// The row's value: its columns, then --value_size padding from the value source.
void IbRowValue(const Worker& w, uint64_t pk, std::string* value);

// A row as a scan reads it: its pk and the first kIbColumnBytes of its value.
using IbRow = std::pair<uint64_t, std::string>;
// Reads up to kIbChunk rows with pk in [pos, end) into `rows`. False (w.error set) on error.
bool IbReadRows(Worker& w, uint64_t pos, uint64_t end, std::vector<IbRow>* rows);

// The step loops (insertbench.cc, insertbench_check.cc).
void IbLoad(Worker& w);         // l.i0
void IbIndex(Worker& w);        // l.x
void IbInsert(Worker& w);       // l.i1
void IbPacedInsert(Worker& w);  // the writer of the query steps
void IbPointQuery(Worker& w);   // qp*
void IbRangeQuery(Worker& w);   // qr*
void IbCheck(Worker& w);        // ibcheck

}  // namespace kvbench
