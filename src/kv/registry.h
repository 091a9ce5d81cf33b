// The table of engines kvbench knows, whether or not each was compiled in.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kv/engine.h"

namespace kvbench {

struct EngineInfo {
  const char* name;
  const char* description;
  bool compiled_in;     // false: the library was missing at configure time
  const char* missing;  // when !compiled_in: how to get it
  bool reference;       // memory/null: reference engines, labelled as such in output
  Status (*open)(const EngineOptions& options, std::unique_ptr<Engine>* engine);
  // The largest key the engine takes, in bytes; nullptr = no limit kvbench's keys reach.
  int (*max_key_size)() = nullptr;
};

// Every engine kvbench knows, compiled in or not, in display order.
const std::vector<EngineInfo>& AllEngines();
// nullptr if `name` is not a known engine.
const EngineInfo* FindEngine(const std::string& name);
// Opens `name` with `options`. InvalidArgument for an unknown engine, NotSupported for one that
// was not compiled in; otherwise the engine's own Status.
Status OpenEngine(const std::string& name, const EngineOptions& options,
                  std::unique_ptr<Engine>* engine);
// Every database directory kvbench creates holds this marker, naming the engine. kvbench only
// ever empties a directory that is empty or carries the marker, so a mistyped --db cannot
// delete someone's files.
constexpr const char* kDatabaseMarker = "KVBENCH-DATABASE";

// The lock file a run holds (flock, exclusive) in its database directory, with the holder's pid
// in it. Never removed (removing a lock file races with the next locker); it is not part of the
// database: emptying a directory keeps it, SizeOnDisk does not count it, and a directory holding
// only it is empty.
constexpr const char* kLockFile = ".kvbench.lock";

// An exclusive lock on a database directory, held until destruction (or the process ends).
class DatabaseLock {
 public:
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;
  ~DatabaseLock();

  // Locks `path` before kvbench empties or opens it. With `create`, makes the directory if
  // missing and refuses (InvalidArgument) a foreign one, as PrepareNewDatabase would, without
  // leaving a lock file in it. Without `create`, a missing directory or one without a kvbench
  // database is left alone (*lock stays null): CheckExistingDatabase reports it. Busy (IOError)
  // with the holder's pid if another process holds the lock.
  static Status Acquire(const std::string& path, bool create, std::unique_ptr<DatabaseLock>* lock);

 private:
  explicit DatabaseLock(int fd) : fd_(fd) {}
  int fd_;
};

// Empties `path` (creating it if missing) and writes the marker for `engine`. Refuses a path that
// is not a directory, or a non-empty directory without the marker. The lock file stays.
Status PrepareNewDatabase(const std::string& path, const std::string& engine);
// OK if `path` holds a kvbench database written by `engine`; otherwise says what is there.
Status CheckExistingDatabase(const std::string& path, const std::string& engine);

// Per-engine entry points, defined in each adapter file.
Status OpenMemoryEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenNullEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenRocksDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenWiredTigerEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
Status OpenLMDBEngine(const EngineOptions& options, std::unique_ptr<Engine>* engine);
int LMDBMaxKeySize();

}  // namespace kvbench
