#include "kv/database_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kvbench {

namespace {

// A directory kvbench may empty: empty but for the lock file, or carrying the marker.
bool OwnedOrEmpty(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir / kDatabaseMarker, ec)) return true;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename() != kLockFile) return false;
  }
  return !ec;
}

std::string ForeignDirectory(const std::string& path) {
  return "--db " + path +
         " is not empty and was not created by kvbench; refusing to delete its contents (choose "
         "an empty or new directory)";
}

}  // namespace

Status PrepareNewDatabase(const std::string& path, const std::string& engine) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(path);
  const fs::path marker = dir / kDatabaseMarker;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return Status::InvalidArgument("--db " + path + " exists and is not a directory");
    }
    if (!OwnedOrEmpty(dir)) return Status::InvalidArgument(ForeignDirectory(path));
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.path().filename() == kLockFile) continue;
      fs::remove_all(entry.path(), ec);
      if (ec)
        return Status::IOError("cannot remove " + entry.path().string() + ": " + ec.message());
    }
    if (ec) return Status::IOError("cannot list " + path + ": " + ec.message());
  } else {
    fs::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create --db directory " + path + ": " + ec.message());
  }
  std::FILE* f = std::fopen(marker.c_str(), "w");
  if (f == nullptr || std::fprintf(f, "%s\n", engine.c_str()) < 0 || std::fclose(f) != 0) {
    return Status::IOError("cannot write in --db directory " + path + ": " + std::strerror(errno));
  }
  return Status::OK();
}

DatabaseLock::~DatabaseLock() { ::close(fd_); }  // closing the descriptor releases the flock

Status DatabaseLock::Acquire(const std::string& path, bool create,
                             std::unique_ptr<DatabaseLock>* lock) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(path);
  lock->reset();
  if (create) {
    if (fs::exists(dir, ec)) {
      if (!fs::is_directory(dir, ec)) {
        return Status::InvalidArgument("--db " + path + " exists and is not a directory");
      }
      if (!OwnedOrEmpty(dir)) return Status::InvalidArgument(ForeignDirectory(path));
    } else {
      fs::create_directories(dir, ec);
      if (ec) return Status::IOError("cannot create --db directory " + path + ": " + ec.message());
    }
  } else if (!fs::exists(dir / kDatabaseMarker, ec)) {
    return Status::OK();
  }
  const std::string file = (dir / kLockFile).string();
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot create lock file " + file + ": " + strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {0};
    const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::IOError("cannot lock " + file + ": " + std::strerror(err));
    }
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Status::IOError("--db " + path + " is in use by another kvbench (" +
                           (pid.empty() ? std::string("pid unknown") : "pid " + pid) +
                           "); wait for it to finish or choose another --db");
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd);
    return Status::IOError("cannot write lock file " + file + ": " + std::strerror(err));
  }
  lock->reset(new DatabaseLock(fd));
  return Status::OK();
}

Status CheckExistingDatabase(const std::string& path, const std::string& engine) {
  std::FILE* f = std::fopen((path + "/" + kDatabaseMarker).c_str(), "r");
  if (f == nullptr) return Status::InvalidArgument("no kvbench database at " + path);
  char buf[64] = {0};
  const bool read = std::fgets(buf, sizeof(buf), f) != nullptr;
  std::fclose(f);
  std::string written = read ? std::string(buf) : "";
  while (!written.empty() && (written.back() == '\n' || written.back() == '\r')) written.pop_back();
  if (written != engine) {
    return Status::InvalidArgument("the database at " + path + " was written by engine '" +
                                   written + "', not '" + engine + "'");
  }
  return Status::OK();
}

Status RemoveDatabase(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir(path);
  if (!fs::exists(dir / kDatabaseMarker, ec)) {
    return Status::InvalidArgument("no kvbench database at " + path + " to remove");
  }
  // The lock file goes last: until then a second run finds the directory locked, not gone.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename() == kLockFile) continue;
    fs::remove_all(entry.path(), ec);
    if (ec) return Status::IOError("cannot remove " + entry.path().string() + ": " + ec.message());
  }
  if (ec) return Status::IOError("cannot list " + path + ": " + ec.message());
  fs::remove(dir / kLockFile, ec);
  if (!ec) fs::remove(dir, ec);
  if (ec) return Status::IOError("cannot remove " + path + ": " + ec.message());
  return Status::OK();
}

}  // namespace kvbench
