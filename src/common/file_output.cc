#include "common/file_output.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace kvbench {
namespace {

constexpr int kMaxLinks = 40;  // as the kernel's own limit (ELOOP)

std::string Reason(int err) { return std::strerror(err); }

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool UnderProc(const std::string& path) { return path.rfind("/proc/", 0) == 0; }

// Where the link `link` points when its text is `text` (relative to the link's directory).
std::string LinkTarget(const std::string& link, const std::string& text) {
  if (!text.empty() && text[0] == '/') return text;
  std::string out = DirectoryOf(link);
  out += '/';
  out += text;
  return out;
}

// The descriptor a path names through its links (/dev/stdout -> /proc/self/fd/1: 1), or -1.
int DescriptorOf(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops <= kMaxLinks; ++hops) {
    for (const char* dir : {"/proc/self/fd/", "/dev/fd/"}) {
      const std::string d = dir;
      if (p.rfind(d, 0) == 0 && p.size() > d.size() &&
          p.find_first_not_of("0123456789", d.size()) == std::string::npos) {
        return std::stoi(p.substr(d.size()));
      }
    }
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return -1;
    p = LinkTarget(p, std::string(buf, static_cast<size_t>(n)));
  }
  return -1;
}

// Writes all of `content` to `fd`; false with errno set on a failure.
bool WriteAll(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Status WriteInPlace(const std::string& path, const std::string& content) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot write " + path + ": " + Reason(errno));
  const bool written = WriteAll(fd, content);
  const int err = errno;
  if (close(fd) != 0 || !written) {
    return Status::IOError("cannot write " + path + ": " + Reason(written ? errno : err));
  }
  return Status::OK();
}

Status ReplaceAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Status::IOError("cannot write " + tmp + ": " + Reason(errno));
  const bool written = WriteAll(fd, content);
  const int err = errno;
  if (close(fd) != 0 || !written) {
    const int reason = written ? errno : err;
    unlink(tmp.c_str());
    return Status::IOError("cannot write " + tmp + ": " + Reason(reason));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int reason = errno;
    unlink(tmp.c_str());
    return Status::IOError("cannot rename " + tmp + " to " + path + ": " + Reason(reason));
  }
  return Status::OK();
}

}  // namespace

Status ResolveOutput(const std::string& path, OutputTarget* target) {
  const int fd = DescriptorOf(path);
  if (fd >= 0) {
    *target = OutputTarget{path, true, fd};
    return Status::OK();
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::IOError("cannot write " + path + ": is a directory");
    if (!S_ISREG(st.st_mode) || UnderProc(path)) {
      *target = OutputTarget{path, true, -1};
      return Status::OK();
    }
  }
  // A regular file or none: the end of the chain of links is the file to replace.
  std::string p = path;
  for (int hops = 0; hops <= kMaxLinks; ++hops) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof(buf) - 1);
    if (n < 0) {
      if (errno != EINVAL && errno != ENOENT && errno != ENOTDIR) {
        std::string msg = "cannot write " + path;
        msg += ": ";
        msg += p;
        msg += ": ";
        msg += Reason(errno);
        return Status::IOError(msg);
      }
      *target = OutputTarget{p, false, -1};
      return Status::OK();
    }
    const std::string next = LinkTarget(p, std::string(buf, static_cast<size_t>(n)));
    if (UnderProc(next)) {  // a file of /proc: written as it is, never replaced
      *target = OutputTarget{path, true, -1};
      return Status::OK();
    }
    p = next;
  }
  return Status::IOError("cannot write " + path + ": " + Reason(ELOOP));
}

Status WriteOutputFile(const std::string& path, const std::string& content) {
  OutputTarget t;
  Status s = ResolveOutput(path, &t);
  if (!s.ok()) return s;
  if (t.fd >= 0) {
    std::fflush(stdout);  // what the console reporter wrote comes first
    std::fflush(stderr);
    if (!WriteAll(t.fd, content)) {
      return Status::IOError("cannot write " + path + ": " + Reason(errno));
    }
    return Status::OK();
  }
  return t.in_place ? WriteInPlace(t.path, content) : ReplaceAtomically(t.path, content);
}

Status CheckOutputWritable(const std::string& path) {
  OutputTarget t;
  Status s = ResolveOutput(path, &t);
  if (!s.ok() || t.fd >= 0) return s;
  if (t.in_place) {
    if (access(t.path.c_str(), W_OK) != 0) {
      return Status::IOError("cannot write " + t.path + ": " + Reason(errno));
    }
    return Status::OK();
  }
  const std::string tmp = t.path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  const bool created = fd >= 0;
  if (!created && errno == EEXIST) fd = open(tmp.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot write " + tmp + ": " + Reason(errno));
  close(fd);
  if (created) unlink(tmp.c_str());
  return Status::OK();
}

bool PathIdentity::Same(const PathIdentity& other) const {
  if (!valid || !other.valid) return false;
  if (exists && other.exists) return device == other.device && inode == other.inode;
  return name == other.name;
}

bool PathIdentity::Inside(const PathIdentity& dir) const {
  if (!valid || !dir.valid || name.size() <= dir.name.size()) return false;
  return name.compare(0, dir.name.size(), dir.name) == 0 &&
         (dir.name == "/" || name[dir.name.size()] == '/');
}

PathIdentity IdentifyPath(const std::string& path) {
  PathIdentity id;
  struct stat st;
  id.exists = stat(path.c_str(), &st) == 0;
  std::string end = path;
  if (!id.exists || !S_ISDIR(st.st_mode)) {  // a file: where a write to it goes
    OutputTarget target;
    if (!ResolveOutput(path, &target).ok() || target.fd >= 0 || target.in_place) return id;
    end = target.path;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(end, ec);
  if (ec) return id;
  const fs::path name = fs::weakly_canonical(absolute, ec);
  if (ec) return id;
  id.valid = true;
  id.name = name.lexically_normal().string();
  if (id.name.size() > 1 && id.name.back() == '/') id.name.pop_back();
  if (id.exists) {
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  return id;
}

}  // namespace kvbench
