// ibcheck: every live row has its three secondary entries, every secondary entry points at a live
// row whose column matches, and the live rows are exactly the window [lo, lo + num). Thread i of T
// checks its share of the rows and of each index's column space. An op is one row or one entry
// checked; found counts the consistent ones, not_found the mismatches. Any mismatch fails the step,
// naming the first one; the count is the whole share's, since the scan goes on after the first.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "workload/insertbench.h"

namespace kvbench {

namespace {

struct Mismatches {
  uint64_t count = 0;
  std::string first;

  void Add(const std::string& what, uint64_t n = 1) {
    if (count == 0) first = what;
    count += n;
  }
};

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Checks one chunk of rows (read with the cursor closed): their columns, and each one's entries.
bool CheckRowEntries(Worker& w, const std::vector<IbRow>& rows, Mismatches* bad) {
  char key[kIbSecondaryKeySize];
  std::string unused;
  for (const auto& row : rows) {
    const uint64_t before = bad->count;
    for (int j = 0; j < kIbIndexes; ++j) {
      if (row.second.size() < static_cast<size_t>(kIbColumnBytes)) {
        bad->Add("row " + std::to_string(row.first) + " has a value too short for its columns");
        break;
      }
      const uint64_t column = IbDecode64(row.second.data() + static_cast<size_t>(8) * j);
      if (column != IbColumn(w.options.seed, row.first, j)) {
        bad->Add("row " + std::to_string(row.first) + " column " + std::to_string(j) +
                 " differs from what --seed writes");
      }
      IbSecondaryKey(j, column, row.first, key);
      Status s = w.session->Get(Slice(key, kIbSecondaryKeySize), &unused);
      if (s.IsNotFound()) {
        bad->Add("row " + std::to_string(row.first) + " has no entry in index " +
                 std::to_string(j) + " (column " + Hex(column) + ")");
      } else if (!s.ok()) {
        w.error = s;
        return false;
      }
    }
    if (bad->count == before) ++w.stats.found;
  }
  return true;
}

// The rows with pk in [from, to): each present, consistent and indexed. `last`: this share ends
// the window, so rows past it (up to the end of the key space) are mismatches too.
bool CheckRows(Worker& w, uint64_t from, uint64_t to, bool last, Mismatches* bad) {
  std::vector<IbRow> rows;
  uint64_t expected = from;
  while (true) {
    const uint64_t t0 = Clock::Now();
    rows.clear();
    if (!IbReadRows(w, expected, last ? UINT64_MAX : to, &rows)) return false;
    if (rows.empty()) break;
    for (const auto& row : rows) {
      if (row.first > expected && expected < to) {
        bad->Add("rows " + std::to_string(expected) + ".." +
                     std::to_string(std::min(row.first, to) - 1) +
                     " of the live window are missing",
                 std::min(row.first, to) - expected);
      }
      if (row.first >= to) bad->Add("row " + std::to_string(row.first) + " is past the window");
      expected = row.first + 1;
    }
    if (!CheckRowEntries(w, rows, bad)) return false;
    if (!w.FinishMany(t0, rows.size(), rows.size() * kIbPrimaryKeySize)) return true;
  }
  if (expected < to) {
    bad->Add("rows " + std::to_string(expected) + ".." + std::to_string(to - 1) +
                 " of the live window are missing",
             to - expected);
  }
  return true;
}

// Reads up to kIbChunk entries of index `j` from (column, pk) on, below `end_column` unless
// `last`, into `entries` as (column, pk).
bool ReadEntries(Worker& w, int j, uint64_t column, uint64_t pk, uint64_t end_column, bool last,
                 std::vector<std::pair<uint64_t, uint64_t>>* entries) {
  char key[kIbSecondaryKeySize];
  IbSecondaryKey(j, column, pk, key);
  std::unique_ptr<Cursor> c = w.session->NewCursor();
  Status s = c->Seek(Slice(key, kIbSecondaryKeySize));
  while (s.ok() && c->Valid() && entries->size() < kIbChunk) {
    const Slice k = c->key();
    if (k.size() != kIbSecondaryKeySize || k.data()[0] != 'x' || k.data()[1] != key[1]) break;
    const uint64_t col = IbDecode64(k.data() + 2);
    if (!last && col >= end_column) break;
    entries->emplace_back(col, IbDecode64(k.data() + 10));
    s = c->Next();
  }
  if (!s.ok()) w.error = s;
  return s.ok();
}

// Index `j`'s entries with a column in [begin, end) (to the end when `last`): each points at a
// live row whose column j is the entry's.
bool CheckIndex(Worker& w, int j, uint64_t begin, uint64_t end, bool last, Mismatches* bad) {
  char key[kIbPrimaryKeySize];
  std::string value;
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  uint64_t column = begin, pk = 0;
  while (true) {
    const uint64_t t0 = Clock::Now();
    entries.clear();
    if (!ReadEntries(w, j, column, pk, end, last, &entries)) return false;
    if (entries.empty()) return true;
    for (const auto& e : entries) {
      const std::string what = "index " + std::to_string(j) + " entry (column " + Hex(e.first) +
                               ", pk " + std::to_string(e.second) + ")";
      IbPrimaryKey(e.second, key);
      Status s = w.session->Get(Slice(key, kIbPrimaryKeySize), &value);
      if (s.IsNotFound()) {
        bad->Add(what + " points at no live row");
      } else if (!s.ok()) {
        w.error = s;
        return false;
      } else if (value.size() < static_cast<size_t>(kIbColumnBytes) ||
                 IbDecode64(value.data() + static_cast<size_t>(8) * j) != e.first) {
        bad->Add(what + " points at a row whose column " + std::to_string(j) + " differs");
      } else {
        ++w.stats.found;
      }
    }
    column = entries.back().first;
    pk = entries.back().second + 1;
    if (pk == 0 && ++column == 0) return true;  // past the last possible key
    if (!w.FinishMany(t0, entries.size(), entries.size() * kIbSecondaryKeySize)) return true;
  }
}

}  // namespace

void IbCheck(Worker& w) {
  Mismatches bad;
  const uint64_t lo = w.step->lo, num = w.options.num;
  const bool last = w.index == w.count - 1;
  if (!CheckRows(w, lo + w.ShareBegin(num), lo + w.ShareEnd(num), last, &bad)) return;
  // The column space 0..2^64-1 split like the rows.
  const auto split = [&w](int i) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(1) << 64) * i / w.count);
  };
  for (int j = 0; j < kIbIndexes; ++j) {
    if (!CheckIndex(w, j, split(w.index), last ? 0 : split(w.index + 1), last, &bad)) return;
  }
  w.stats.not_found = bad.count;
  if (bad.count > 0) {
    w.error = Status::Corruption(
        "ibcheck: " + std::to_string(bad.count) + " mismatch" + (bad.count == 1 ? "" : "es") +
        " between rows and secondary entries (thread " + std::to_string(w.index) + " of " +
        std::to_string(w.count) + "'s share of the window [" + std::to_string(lo) + ", " +
        std::to_string(lo + num) + ")); the first: " + bad.first);
  }
}

}  // namespace kvbench
