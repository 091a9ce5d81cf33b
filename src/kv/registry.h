// The table of engines kvbench knows, whether or not each was compiled in: the storage engines of
// the manifest (cmake/deps.json, expanded from the generated kv/engines.def) and the reference
// engines memory and null. Each adapter defines its own piece of the table.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "kv/engine.h"

namespace kvbench {

// What each adapter file provides, defined there with KVBENCH_ENGINE_ADAPTER(<name>) = {...};
// for every engine the manifest (cmake/deps.json) lists and CMake found.
struct EngineAdapter {
  Status (*open)(const EngineOptions& options, std::unique_ptr<Engine>* engine);
  LibraryFacts (*library)();  // the library's own facts; nullptr: no library
  // The largest key the engine takes, in bytes; nullptr = no limit kvbench's keys reach.
  int (*max_key_size)();
};

// The adapter of engine <name>, for the engine table (registry.cc) to find by name.
#define KVBENCH_ENGINE_ADAPTER(name)                          \
  extern const ::kvbench::EngineAdapter kEngineAdapter_##name; \
  const ::kvbench::EngineAdapter kEngineAdapter_##name

struct EngineInfo {
  const char* name;
  const char* description;
  bool compiled_in;     // false: the library was missing at configure time
  const char* missing;  // when !compiled_in: how to get it
  bool reference;       // memory/null: reference engines, labelled as such in output
  EngineAdapter adapter;  // all nullptr when !compiled_in
};

// Every engine kvbench knows, compiled in or not, in display order.
const std::vector<EngineInfo>& AllEngines();
// --engine's default (the manifest's default_engine), compiled in or not.
const char* DefaultEngine();
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

// The facts of engine `name`'s library; empty for a reference engine or one not compiled in.
LibraryFacts EngineLibrary(const std::string& name);

}  // namespace kvbench
