// The one KV interface every engine implements, at two levels.
//
//   Engine  — one per open database (RocksDB DB, WiredTiger WT_CONNECTION, LMDB MDB_env).
//             Thread-safe: any thread may call any method concurrently.
//   Session — one per thread (WiredTiger session + cursors, LMDB transactions, RocksDB options).
//             NOT thread-safe: a Session is used by one thread at a time; sessions of the same
//             Engine may be used concurrently from different threads.
//
// Every fallible call returns a Status: ok, not-found, or an error whose message carries the
// engine's own text. Adapters never throw across this interface, never time anything (the workload
// loop times each call), and are the only files that include an engine's headers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/slice.h"
#include "common/status.h"

namespace kvbench {

// Options common to all engines. Engine-specific settings travel raw in `engine_options`.
struct EngineOptions {
  std::string path;    // database directory; created if missing
  bool create = true;  // true: start a new database (the directory must be empty or
                       // hold no database); false: open an existing one (error if none)
  uint64_t cache_size = 256ull << 20;  // bytes of engine cache (see docs/engines.md per engine)
  std::string compression = "none";    // none | snappy | lz4 | zstd (NotSupported where absent)
  bool sync = false;                   // true: each write is durable (fsync) before it returns
  std::string engine_options;   // passed through raw: RocksDB options string, WiredTiger config
                                // string, LMDB "map_size=N,flags=..." (docs/engines.md)
  int max_sessions = 64;        // upper bound on concurrently open sessions (LMDB readers)
  uint64_t expected_bytes = 0;  // hint: key+value bytes the run will write (LMDB map sizing)
  uint64_t expected_keys = 0;   // hint: keys the run will write (the memory engine's arena)
  // --memory_budget: bytes the adapter splits between its memory settings (its plan_memory in
  // kv/registry.h) instead of using cache_size; 0 = none, cache_size and the engine's defaults.
  uint64_t memory_budget = 0;
  bool io_bound = false;  // --io_bound: read data with O_DIRECT where the engine can
};

// One entry of a WriteBatch.
struct BatchOp {
  enum class Type { kPut, kDelete } type;
  std::string key;
  std::string value;
};

// A group of writes applied atomically by Session::Write.
class WriteBatch {
 public:
  void Put(const Slice& key, const Slice& value) {
    ops_.push_back({BatchOp::Type::kPut, key.ToString(), value.ToString()});
  }
  void Delete(const Slice& key) { ops_.push_back({BatchOp::Type::kDelete, key.ToString(), {}}); }
  void Clear() { ops_.clear(); }
  size_t Count() const { return ops_.size(); }
  const std::vector<BatchOp>& ops() const { return ops_; }

 private:
  std::vector<BatchOp> ops_;
};

// A forward iterator over the keys of a database, in byte-wise order.
//
// A Cursor belongs to the Session that created it and is used by the same thread. It reads a
// consistent view as of Seek (writes made after Seek may or may not be seen). The Slices returned
// by key() and value() stay valid until the next call on the Cursor or its destruction.
class Cursor {
 public:
  virtual ~Cursor() = default;
  // Positions at the first key >= target. Not finding one is not an error: Valid() is false.
  virtual Status Seek(const Slice& target) = 0;
  // REQUIRES: Valid(). Advances to the next key; Valid() is false past the last one.
  virtual Status Next() = 0;
  virtual bool Valid() const = 0;
  // REQUIRES: Valid().
  virtual Slice key() const = 0;
  virtual Slice value() const = 0;
};

class Session {
 public:
  virtual ~Session() = default;
  // Inserts or replaces. Durable before return only if EngineOptions::sync.
  virtual Status Put(const Slice& key, const Slice& value) = 0;
  // Copies the value into *value. NotFound if the key is absent (then *value is unspecified).
  virtual Status Get(const Slice& key, std::string* value) = 0;
  // Removes the key. Deleting an absent key is OK.
  virtual Status Delete(const Slice& key) = 0;
  // Applies every op of the batch atomically, in order.
  virtual Status Write(const WriteBatch& batch) = 0;
  // A new cursor, unpositioned. At most one cursor per session is open at a time.
  virtual std::unique_ptr<Cursor> NewCursor() = 0;
  // Called once on the thread that will use this session, before its first operation: sessions
  // may be opened on another thread. Engines with thread-local state set it up here (RocksDB's
  // perf level).
  virtual void AttachToThread() {}
};

// One engine-internal figure. Cumulative ones (bytes written so far) are reported as the change
// over a benchmark; the others (cache bytes in use now) as their value at its end.
struct EngineMetric {
  std::string name;  // with its unit: "user_bytes_written", "write_stall_us", "cache_bytes"
  double value;
  bool cumulative;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Registry name: "rocksdb", "wiredtiger", "lmdb", "memory", "null".
  virtual std::string Name() const = 0;
  // Version of the engine library actually loaded, e.g. "7.8.3".
  virtual std::string Version() const = 0;
  // The effective configuration: every option kvbench set, and the raw engine strings, as
  // (name, value) pairs in a stable order. Printed and recorded with every result.
  virtual std::vector<std::pair<std::string, std::string>> Config() const = 0;
  // Known-bad facts about how the loaded engine library was built, each saying what it does to
  // the numbers (e.g. a software-only checksum path). Printed as warnings before the results.
  virtual std::vector<std::string> BuildWarnings() const { return {}; }
  // Engine-internal figures the engine offers cheaply, read at the start and end of every
  // benchmark. Thread-safe. See docs/metrics.md for each engine's list.
  virtual std::vector<EngineMetric> Metrics() const { return {}; }
  // Opens a session, used by one thread at a time; that thread calls AttachToThread() before its
  // first operation (without it the session works, but may not be tuned for the thread).
  // Thread-safe.
  virtual Status NewSession(std::unique_ptr<Session>* session) = 0;
  // Waits for background work (flushes, compactions, checkpoints) so the next phase starts from a
  // repeatable state. What it does per engine is in docs/engines.md.
  virtual Status Settle() = 0;
  // Bytes the database occupies on disk now (allocated blocks, as `du` counts them).
  virtual uint64_t SizeOnDisk() const;
  // Closes the database. Called before destruction to report errors; the destructor also closes.
  // REQUIRES: every Session and Cursor of this engine has been destroyed.
  virtual Status Close() = 0;

 protected:
  explicit Engine(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kvbench
