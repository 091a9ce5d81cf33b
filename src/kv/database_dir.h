// The life of a database directory: kvbench's marker in it, the lock a run holds on it, emptying
// it for a new database, checking an existing one, and removing it after the run. Engine-neutral:
// the engines only ever see a directory that is ready for them.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace kvbench {

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

// Removes the database directory `path` (which holds a kvbench database) and everything in it,
// the lock file last. REQUIRES: the caller holds its DatabaseLock and no engine has it open.
Status RemoveDatabase(const std::string& path);

}  // namespace kvbench
