#include "env/io_bound.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kvbench {

namespace {

constexpr const char* kCgroupFs = "/sys/fs/cgroup";
constexpr const char* kDropCaches = "/proc/sys/vm/drop_caches";

std::string g_created;  // the cgroup directory this process made, for the atexit cleanup
std::string g_parent;

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  if (!out) return Status::IOError("cannot write " + path + ": " + strerror(errno));
  return Status::OK();
}

// The process's own memory cgroup directory: the v1 "memory" hierarchy if there is one, else the
// v2 unified one (the "0::" line). *v2 says which. Empty when neither is mounted where expected.
std::string OwnMemoryCgroup(bool* v2) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, unified;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::stringstream list(controllers);
    std::string c;
    while (std::getline(list, c, ',')) {
      if (c == "memory") {
        *v2 = false;
        return std::string(kCgroupFs) + "/memory" + path;
      }
    }
    if (line.compare(0, 3, "0::") == 0) unified = path;
  }
  *v2 = true;
  if (unified.empty()) return "";
  std::ifstream controllers(std::string(kCgroupFs) + unified + "/cgroup.controllers");
  std::string text;
  std::getline(controllers, text);
  return text.find("memory") == std::string::npos ? "" : std::string(kCgroupFs) + unified;
}

void RemoveCgroup() {
  if (g_created.empty()) return;
  // A cgroup with a process in it cannot be removed: move back to the parent first.
  WriteFile(g_parent + "/cgroup.procs", std::to_string(getpid()));
  rmdir(g_created.c_str());
}

}  // namespace

Status LimitMemoryWithCgroup(uint64_t limit, std::string* mechanism) {
  if (geteuid() != 0) {
    return Status::InvalidArgument("creating a memory cgroup needs root (this is uid " +
                                   std::to_string(geteuid()) + ")");
  }
  bool v2 = false;
  const std::string parent = OwnMemoryCgroup(&v2);
  if (parent.empty()) {
    return Status::InvalidArgument("no memory cgroup controller is available to this process");
  }
  const std::string dir = parent + "/kvbench-" + std::to_string(getpid());
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::InvalidArgument("cannot create the memory cgroup " + dir + ": " +
                                   strerror(errno));
  }
  const std::string file = dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes");
  Status s = WriteFile(file, std::to_string(limit));
  if (s.ok()) s = WriteFile(dir + "/cgroup.procs", std::to_string(getpid()));
  if (!s.ok()) {
    rmdir(dir.c_str());
    return Status::InvalidArgument("cannot use the memory cgroup " + dir + ": " + s.message());
  }
  g_created = dir;
  g_parent = parent;
  std::atexit(RemoveCgroup);
  *mechanism = std::string(v2 ? "cgroup v2 " : "cgroup v1 ") + file + "=" + std::to_string(limit);
  return Status::OK();
}

Status CheckDropCaches() {
  if (geteuid() != 0) {
    return Status::InvalidArgument("--drop_caches needs root: it writes " +
                                   std::string(kDropCaches) + " (this is uid " +
                                   std::to_string(geteuid()) + ")");
  }
  if (access(kDropCaches, W_OK) != 0) {
    return Status::InvalidArgument("--drop_caches: " + std::string(kDropCaches) +
                                   " is not writable here (" + strerror(errno) + ")");
  }
  return Status::OK();
}

Status DropCaches() {
  sync();
  return WriteFile(kDropCaches, "3");
}

}  // namespace kvbench
