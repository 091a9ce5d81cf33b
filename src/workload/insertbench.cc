// The Insert Benchmark's steps (insertbench.h): the load, the index build, the inserts with deletes
// and the queries. The check is insertbench_check.cc.
#include "workload/insertbench.h"

#include <algorithm>
#include <cstring>

#include "common/random.h"
#include "workload/op_share.h"

namespace kvbench {

namespace {

void Put64(uint64_t v, char* p) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

// One l.i1 op: inserts row `pk` with its three entries and, once the window is full, deletes row
// pk - num with its entries, in one atomic batch. False when the loop must stop.
bool InsertAndDelete(Worker& w, uint64_t pk, WriteBatch* batch, std::string* value) {
  const uint64_t num = w.options.num, seed = w.options.seed;
  char key[kIbSecondaryKeySize];
  batch->Clear();
  IbRowValue(w, pk, value);
  IbPrimaryKey(pk, key);
  batch->Put(Slice(key, kIbPrimaryKeySize), *value);
  for (int j = 0; j < kIbIndexes; ++j) {
    IbSecondaryKey(j, IbColumn(seed, pk, j), pk, key);
    batch->Put(Slice(key, kIbSecondaryKeySize), Slice());
  }
  if (pk >= num) {
    const uint64_t old = pk - num;
    IbPrimaryKey(old, key);
    batch->Delete(Slice(key, kIbPrimaryKeySize));
    for (int j = 0; j < kIbIndexes; ++j) {
      IbSecondaryKey(j, IbColumn(seed, old, j), old, key);
      batch->Delete(Slice(key, kIbSecondaryKeySize));
    }
  }
  const uint64_t t0 = w.Start();
  Status s = w.session->Write(*batch);
  if (!s.ok()) {
    w.error = s;
    return false;
  }
  return w.Finish(t0, IbRowBytes(w.options));
}

}  // namespace

bool IbReadRows(Worker& w, uint64_t pos, uint64_t end, std::vector<IbRow>* rows) {
  char key[kIbPrimaryKeySize];
  IbPrimaryKey(pos, key);
  std::unique_ptr<Cursor> c = w.session->NewCursor();
  Status s = c->Seek(Slice(key, kIbPrimaryKeySize));
  while (s.ok() && c->Valid() && rows->size() < kIbChunk) {
    const Slice k = c->key();
    if (k.size() != kIbPrimaryKeySize || k.data()[0] != 'p') break;
    const uint64_t pk = IbDecode64(k.data() + 1);
    if (pk >= end) break;
    const Slice v = c->value();
    rows->emplace_back(pk, std::string(v.data(), std::min<size_t>(v.size(), kIbColumnBytes)));
    s = c->Next();
  }
  if (!s.ok()) w.error = s;
  return s.ok();
}

const std::vector<std::string>& InsertBenchSteps() {
  static const std::vector<std::string> steps = {"l.i0",  "l.x",   "l.i1",   "qr100",  "qp100",
                                                 "qr500", "qp500", "qr1000", "qp1000", "ibcheck"};
  return steps;
}

uint64_t IbRowBytes(const WorkloadOptions& o) {
  return kIbPrimaryKeySize + static_cast<uint64_t>(o.value_size);
}

Status IbSetup(Engine* engine, const WorkloadOptions& o, std::shared_ptr<StepState>* state) {
  if (o.value_size < kIbColumnBytes) {
    return Status::InvalidArgument(
        "insertbench needs --value_size >= " + std::to_string(kIbColumnBytes) +
        " (a row's value holds its three 8-byte secondary columns)");
  }
  auto st = std::make_shared<StepState>();
  std::unique_ptr<Session> session;
  Status s = engine->NewSession(&session);
  if (!s.ok()) return s;
  std::unique_ptr<Cursor> c = session->NewCursor();
  s = c->Seek(Slice("p"));
  if (!s.ok()) return s;
  if (c->Valid() && c->key().size() == kIbPrimaryKeySize && c->key().data()[0] == 'p') {
    st->lo = IbDecode64(c->key().data() + 1);
    st->next.store(st->lo + o.num);
  }
  *state = std::move(st);
  return Status::OK();
}

void IbPrimaryKey(uint64_t pk, char* out) {
  out[0] = 'p';
  Put64(pk, out + 1);
}

void IbSecondaryKey(int index, uint64_t column, uint64_t pk, char* out) {
  out[0] = 'x';
  out[1] = static_cast<char>('0' + index);
  Put64(column, out + 2);
  Put64(pk, out + 10);
}

uint64_t IbColumn(uint64_t seed, uint64_t pk, int index) {
  return Mix64(seed ^ Mix64(pk * kIbIndexes + static_cast<uint64_t>(index) + 1));
}

uint64_t IbDecode64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void IbRowValue(const Worker& w, uint64_t pk, std::string* value) {
  const Slice padding = w.values.For(pk);
  value->assign(padding.data(), padding.size());
  for (int j = 0; j < kIbIndexes; ++j)
    Put64(IbColumn(w.options.seed, pk, j), &(*value)[static_cast<size_t>(8) * j]);
}

void IbLoad(Worker& w) {
  char key[kIbPrimaryKeySize];
  std::string value;
  const uint64_t end = w.ShareEnd(w.options.num);
  for (uint64_t pk = w.ShareBegin(w.options.num); pk < end; ++pk) {
    IbPrimaryKey(pk, key);
    IbRowValue(w, pk, &value);
    const uint64_t t0 = w.Start();
    Status s = w.session->Put(Slice(key, kIbPrimaryKeySize), value);
    if (!s.ok()) {
      w.error = s;
      return;
    }
    if (!w.Finish(t0, IbRowBytes(w.options))) return;
  }
}

// One scan of this thread's share of the rows; an op is one row indexed (its three entries).
void IbIndex(Worker& w) {
  const uint64_t lo = w.step->lo;
  uint64_t pos = lo + w.ShareBegin(w.options.num);
  const uint64_t end = lo + w.ShareEnd(w.options.num);
  std::vector<IbRow> rows;
  WriteBatch batch;
  char key[kIbSecondaryKeySize];
  while (pos < end) {
    const uint64_t t0 = Clock::Now();
    rows.clear();
    if (!IbReadRows(w, pos, end, &rows)) return;
    if (rows.empty()) return;
    batch.Clear();
    for (const auto& row : rows) {
      for (int j = 0; j < kIbIndexes && 8 * j + 8 <= static_cast<int>(row.second.size()); ++j) {
        IbSecondaryKey(j, IbDecode64(row.second.data() + static_cast<size_t>(8) * j), row.first,
                       key);
        batch.Put(Slice(key, kIbSecondaryKeySize), Slice());
      }
    }
    Status s = w.session->Write(batch);
    if (!s.ok()) {
      w.error = s;
      return;
    }
    pos = rows.back().first + 1;
    if (!w.FinishMany(t0, rows.size(), batch.Count() * kIbSecondaryKeySize)) return;
  }
}

void IbInsert(Worker& w) {
  const uint64_t n = OpsToRun(w, w.options.TotalWrites());
  WriteBatch batch;
  std::string value;
  for (uint64_t i = 0; i < n; ++i) {
    if (!InsertAndDelete(w, w.step->next.fetch_add(1), &batch, &value)) return;
  }
}

void IbPacedInsert(Worker& w) {
  WriteBatch batch;
  std::string value;
  const uint64_t op_bytes = IbRowBytes(w.options);
  while (!w.Stopped()) {
    if (w.limiter != nullptr && !w.limiter->Acquire(op_bytes)) return;
    if (w.Stopped()) return;
    const bool go_on = InsertAndDelete(w, w.step->next.fetch_add(1), &batch, &value);
    if (w.limiter != nullptr && w.error.ok()) w.limiter->Delivered(op_bytes);
    if (!go_on) return;
  }
}

// A uniform pick from the live window as it is now: rows the writer has just deleted, or not yet
// written, count as not found.
void IbPointQuery(Worker& w) {
  char key[kIbPrimaryKeySize];
  std::string value, expected;
  const uint64_t n = OpsToRun(w, w.options.TotalReads());
  const uint64_t num = w.options.num;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t hi = w.step->next.load(std::memory_order_relaxed);
    const uint64_t span = std::min(num, hi);
    const uint64_t pk = hi - span + w.rnd.Uniform(std::max<uint64_t>(span, 1));
    IbPrimaryKey(pk, key);
    const uint64_t t0 = w.Start();
    Status s = w.session->Get(Slice(key, kIbPrimaryKeySize), &value);
    if (s.ok()) {
      ++w.stats.found;
      if (w.options.verify) {
        IbRowValue(w, pk, &expected);
        if (value != expected) {
          w.error = Status::Corruption("row " + std::to_string(pk) +
                                       " differs from what --seed and --value_size write");
          return;
        }
      }
    } else if (s.IsNotFound()) {
      ++w.stats.not_found;
    } else {
      w.error = s;
      return;
    }
    if (!w.Finish(t0, kIbPrimaryKeySize + value.size())) return;
  }
}

// Seek to a random column value of a random index, then read up to 10 of its entries.
void IbRangeQuery(Worker& w) {
  char key[kIbSecondaryKeySize];
  const uint64_t n = OpsToRun(w, w.options.TotalReads());
  for (uint64_t i = 0; i < n; ++i) {
    const int index = static_cast<int>(w.rnd.Uniform(kIbIndexes));
    IbSecondaryKey(index, w.rnd.Next(), 0, key);
    const uint64_t t0 = w.Start();
    std::unique_ptr<Cursor> c = w.session->NewCursor();
    Status s = c->Seek(Slice(key, kIbSecondaryKeySize));
    int read = 0;
    while (s.ok() && read < kIbRangeEntries && c->Valid() && c->key().size() > 2 &&
           std::memcmp(c->key().data(), key, 2) == 0) {
      ++read;
      s = c->Next();
    }
    c.reset();
    if (!s.ok()) {
      w.error = s;
      return;
    }
    w.stats.entries += read;
    ++(read > 0 ? w.stats.found : w.stats.not_found);
    if (!w.Finish(t0, static_cast<uint64_t>(read) * kIbSecondaryKeySize)) return;
  }
}

}  // namespace kvbench
