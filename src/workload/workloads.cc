// The workload loops. Each times every engine call with Worker::Finish and stops at the first
// error, leaving it in Worker::error.
#include <string>

#include "workload/op_share.h"
#include "workload/workload.h"

namespace kvbench {

namespace {

// Writes key `k`; false when the loop must stop. With an `ack` slot (fills under --ack_file),
// publishes `acknowledged` in it once the engine has acknowledged the write, after the op's
// clock stopped (with every op timed, the store counts in the next op's time, as the rest of the
// loop's per-op work does: Worker::Start) and whether or not the loop goes on; without
// a slot that costs one predictable branch. A crash between the Put and the store only makes the
// count one short, which the check allows: it never claims more than was acknowledged.
inline bool PutKey(Worker& w, uint64_t k, KeyBuffer& key, AckSlot* ack = nullptr,
                   uint64_t acknowledged = 0) {
  const Slice key_slice = key.Set(k);
  const Slice value = w.values.For(k);
  const uint64_t t0 = w.Start();
  Status s = w.session->Put(key_slice, value);
  if (!s.ok()) {
    w.error = s;
    return false;
  }
  const bool go_on = w.Finish(t0, key_slice.size() + value.size());
  if (ack != nullptr) ack->Publish(acknowledged);
  return go_on;
}

// This thread's slot of --ack_file, or nullptr.
AckSlot* AckSlotOf(Worker& w) { return w.ack_log != nullptr ? w.ack_log->Slot(w.index) : nullptr; }

bool CheckValue(Worker& w, uint64_t k, const Slice& got) {
  if (got == w.values.For(k)) return true;
  w.error = Status::Corruption(
      "value read for key " + std::to_string(k) + " (" + std::to_string(got.size()) +
      " bytes) differs from what --seed=" + std::to_string(w.options.seed) +
      " --value_size=" + std::to_string(w.options.value_size) +
      " writes; was the database written with other settings? (--verify=false skips the check)");
  return false;
}

// Reads key `k` into `value` and counts it found or not; false when the loop must stop. On a
// hit `check_found()` judges the value (false: it set w.error); on NotFound `not_found()` counts
// the miss. Both run before the op's clock stops, as the checks always have. A template, so the
// lambdas inline into the loop: no indirect call per op.
template <typename CheckFound, typename NotFound>
inline bool GetKey(Worker& w, uint64_t k, KeyBuffer& key, std::string& value,
                   CheckFound check_found, NotFound not_found) {
  const Slice key_slice = key.Set(k);
  const uint64_t t0 = w.Start();
  Status s = w.session->Get(key_slice, &value);
  uint64_t bytes = key_slice.size();
  if (s.ok()) {
    ++w.stats.found;
    bytes += value.size();
    if (!check_found()) return false;
  } else if (s.IsNotFound()) {
    not_found();
  } else {
    w.error = s;
    return false;
  }
  return w.Finish(t0, bytes);
}

// Visits up to `n` entries from the cursor's position; counts them. False on error.
bool VisitEntries(Worker& w, Cursor* c, int n, uint64_t* bytes) {
  for (int j = 0; j < n && c->Valid(); ++j) {
    const Slice key = c->key();
    const Slice value = c->value();
    if (w.options.verify && !CheckValue(w, w.keys.Decode(key), value)) return false;
    *bytes += key.size() + value.size();
    ++w.stats.entries;
    Status s = c->Next();
    if (!s.ok()) {
      w.error = s;
      return false;
    }
  }
  return true;
}

}  // namespace

void FillSeq(Worker& w) {
  KeyBuffer key(w.keys);
  AckSlot* const ack = AckSlotOf(w);
  const uint64_t begin = w.ShareBegin(w.options.num), end = w.ShareEnd(w.options.num);
  for (uint64_t k = begin; k < end; ++k) {
    if (!PutKey(w, k, key, ack, k - begin + 1)) return;
  }
}

void FillRandom(Worker& w) {
  KeyBuffer key(w.keys);
  AckSlot* const ack = AckSlotOf(w);
  const Permutation perm(w.options.num, w.options.seed);
  const uint64_t begin = w.ShareBegin(w.options.num), end = w.ShareEnd(w.options.num);
  for (uint64_t i = begin; i < end; ++i) {
    if (!PutKey(w, perm.At(i), key, ack, i - begin + 1)) return;
  }
}

void Overwrite(Worker& w) {
  KeyBuffer key(w.keys);
  Random64 rnd = w.rnd;  // see ReadRandom
  const uint64_t n = OpsToRun(w, w.options.TotalWrites());
  for (uint64_t i = 0; i < n; ++i) {
    if (!PutKey(w, rnd.Uniform(w.options.num), key)) return;
  }
}

void ReadRandom(Worker& w) {
  KeyBuffer key(w.keys);
  std::string value;
  // A copy the loop owns: the generator's state in the Worker is reloaded after every (opaque)
  // engine call, and gcc merges its four stores into one vector store the next op's loads stall on.
  Random64 rnd = w.rnd;
  const uint64_t n = OpsToRun(w, w.options.TotalReads());
  const bool verify = w.options.verify;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = rnd.Uniform(w.options.num);
    const auto valid = [&] { return !verify || CheckValue(w, k, value); };
    if (!GetKey(w, k, key, value, valid, [&] { ++w.stats.not_found; })) return;
  }
}

// Like db_bench's readseq, a thread stops at the end of the data instead of wrapping around, so it
// never reads an entry twice and --reads is an upper bound: "found" is what was really there.
void ReadSeq(Worker& w) {
  KeyBuffer key(w.keys);
  uint64_t n = OpsToRun(w, w.options.TotalReads());
  std::unique_ptr<Cursor> c = w.session->NewCursor();
  Status s = c->Seek(key.Set(w.ShareBegin(w.options.num)));
  while (s.ok() && n > 0 && c->Valid()) {
    const uint64_t t0 = w.Start();
    uint64_t bytes = 0;
    if (!VisitEntries(w, c.get(), 1, &bytes)) return;
    ++w.stats.found;
    --n;
    if (!w.Finish(t0, bytes)) return;
  }
  if (!s.ok()) w.error = s;
}

void FwdRange(Worker& w) {
  KeyBuffer key(w.keys);
  Random64 rnd = w.rnd;  // see ReadRandom
  const uint64_t n = OpsToRun(w, w.options.TotalReads());
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t k = rnd.Uniform(w.options.num);
    const Slice target = key.Set(k);
    const uint64_t t0 = w.Start();
    // A new cursor per op, as db_bench's seekrandom creates a new iterator per seek.
    std::unique_ptr<Cursor> c = w.session->NewCursor();
    Status s = c->Seek(target);
    if (!s.ok()) {
      w.error = s;
      return;
    }
    if (c->Valid() && c->key() == target) {
      ++w.stats.found;
    } else {
      ++w.stats.not_found;
    }
    uint64_t bytes = 0;
    if (!VisitEntries(w, c.get(), w.options.seek_nexts, &bytes)) return;
    c.reset();
    if (!w.Finish(t0, bytes)) return;
  }
}

// Every check runs whatever --verify says: checking values is the point. A lost write is
// counted, not an error, so that one run tells how many were lost; the runner fails the run.
void VerifyAcked(Worker& w) {
  KeyBuffer key(w.keys);
  std::string value;
  const AckLog& log = *w.ack_log;
  const bool random_order = log.header().kind == AckKind::kFillRandom;
  const Permutation perm(w.options.num, w.options.seed);
  const uint64_t begin = w.ShareBegin(w.options.num);
  const uint64_t end = begin + log.Slot(w.index)->Load();
  for (uint64_t i = begin; i < end; ++i) {
    const uint64_t k = random_order ? perm.At(i) : i;
    const auto acked_value = [&] {
      if (Slice(value) == w.values.For(k)) return true;
      w.error = Status::Corruption(
          "the value of acknowledged key " + std::to_string(k) + " (" +
          std::to_string(value.size()) +
          " bytes) differs from what --seed=" + std::to_string(w.options.seed) +
          " --value_size=" + std::to_string(w.options.value_size) + " writes for it: corrupted");
      return false;
    };
    const auto lost = [&] {
      if (w.stats.not_found++ == 0) w.stats.first_not_found = k;
    };
    if (!GetKey(w, k, key, value, acked_value, lost)) return;
  }
}

void PacedWriter(Worker& w) {
  KeyBuffer key(w.keys);
  Random64 rnd = w.rnd;  // see ReadRandom
  const uint64_t op_bytes =
      static_cast<uint64_t>(w.keys.size()) + static_cast<uint64_t>(w.options.value_size);
  while (!w.Stopped()) {
    // False: the run stops (or its deadline passes) before the next write is due.
    if (w.limiter != nullptr && !w.limiter->Acquire(op_bytes)) return;
    if (w.Stopped()) return;
    const bool go_on = PutKey(w, rnd.Uniform(w.options.num), key);
    if (w.limiter != nullptr && w.error.ok()) w.limiter->Delivered(op_bytes);
    if (!go_on) return;
  }
}

}  // namespace kvbench
