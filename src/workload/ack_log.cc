#include "workload/ack_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/enum_names.h"
#include "common/file_output.h"
#include "workload/workload.h"

namespace kvbench {

namespace {

constexpr char kMagic[8] = {'K', 'V', 'B', 'A', 'C', 'K', '\0', '\0'};
constexpr uint32_t kVersion = 1;

// The header as it lies in the file (see ack_log.h).
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t kind;
  uint64_t num;
  uint64_t seed;
  uint32_t threads;
  uint32_t key_size;
  uint32_t value_size;
  uint32_t reserved0;
  double compression_ratio;
  uint64_t reserved1;
};
static_assert(sizeof(FileHeader) == AckLog::kHeaderSize, "header layout");
static_assert(offsetof(FileHeader, compression_ratio) == 48, "header layout");

// Copies the fields that name a fill's keys and values, the same in WorkloadOptions, AckHeader
// and FileHeader (only their integer widths differ).
template <typename From, typename To>
void CopyKeyValueFields(const From& from, To* to) {
  to->num = from.num;
  to->seed = from.seed;
  to->threads = static_cast<uint32_t>(from.threads);
  to->key_size = static_cast<uint32_t>(from.key_size);
  to->value_size = static_cast<uint32_t>(from.value_size);
  to->compression_ratio = from.compression_ratio;
}

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + strerror(errno);
}

// Thread t's share of `num` positions, as Worker::ShareBegin/ShareEnd split them.
uint64_t ShareSize(uint64_t num, uint32_t threads, uint32_t t) {
  auto split = [&](uint32_t i) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(num) * i) / threads);
  };
  return split(t + 1) - split(t);
}

std::string FormatRatio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", r);
  return buf;
}

}  // namespace

const char* AckKindName(AckKind kind) {
  static constexpr EnumName<AckKind> kNames[] = {
      {AckKind::kFillSeq, "fillseq"},
      {AckKind::kFillRandom, "fillrandom"},
  };
  return NameOf(kind, kNames, "none");
}

AckHeader AckHeader::For(AckKind kind, const WorkloadOptions& o) {
  AckHeader h;
  h.kind = kind;
  CopyKeyValueFields(o, &h);
  return h;
}

AckLog::AckLog(std::string path, AckHeader header, void* map, size_t size)
    : path_(std::move(path)),
      header_(header),
      map_(map),
      size_(size),
      slots_(reinterpret_cast<AckSlot*>(static_cast<char*>(map) + kHeaderSize)) {}

AckLog::~AckLog() { munmap(map_, size_); }

Status AckLog::Create(const std::string& path, const AckHeader& header,
                      std::unique_ptr<AckLog>* log) {
  const size_t size = kHeaderSize + sizeof(AckSlot) * header.threads;
  OutputTarget target;
  Status resolved = ResolveOutput(path, &target);
  if (!resolved.ok()) return Status::IOError("--ack_file: " + resolved.message());
  if (target.in_place) {
    return Status::IOError("--ack_file: " + path +
                           " is not a regular file; the log is mapped "
                           "and renamed into place, so it needs a file of its own");
  }
  const std::string tmp = target.path + ".tmp";
  const int fd = open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(Errno("--ack_file: cannot create", tmp));
  FileHeader fh{};
  std::memcpy(fh.magic, kMagic, sizeof(kMagic));
  fh.version = kVersion;
  fh.kind = static_cast<uint32_t>(header.kind);
  CopyKeyValueFields(header, &fh);
  // ftruncate first: the slots read as zeros, and a full disk shows up here, not as a SIGBUS.
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      pwrite(fd, &fh, sizeof(fh), 0) != static_cast<ssize_t>(sizeof(fh))) {
    Status s = Status::IOError(Errno("--ack_file: cannot write", tmp));
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    unlink(tmp.c_str());
    return Status::IOError(Errno("--ack_file: cannot map", tmp));
  }
  if (rename(tmp.c_str(), target.path.c_str()) != 0) {
    Status s = Status::IOError(Errno("--ack_file: cannot rename " + tmp + " to", target.path));
    munmap(map, size);
    unlink(tmp.c_str());
    return s;
  }
  log->reset(new AckLog(path, header, map, size));
  return Status::OK();
}

Status AckLog::Open(const std::string& path, std::unique_ptr<AckLog>* log) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(Errno("--ack_file: cannot open", path));
  struct stat st;
  FileHeader fh{};
  if (fstat(fd, &st) != 0) {
    Status s = Status::IOError(Errno("--ack_file: cannot stat", path));
    close(fd);
    return s;
  }
  const auto size = static_cast<size_t>(st.st_size);
  const ssize_t got = size >= sizeof(fh) ? pread(fd, &fh, sizeof(fh), 0) : 0;
  const std::string not_ack = "--ack_file " + path + " is not a kvbench ack file";
  if (got != static_cast<ssize_t>(sizeof(fh)) || std::memcmp(fh.magic, kMagic, 8) != 0) {
    close(fd);
    return Status::Corruption(not_ack + " (no KVBACK header)");
  }
  if (fh.version != kVersion) {
    close(fd);
    return Status::Corruption(not_ack + " of version 1 (version " + std::to_string(fh.version) +
                              ")");
  }
  if ((fh.kind != 1 && fh.kind != 2) || fh.threads == 0 || fh.num == 0) {
    close(fd);
    return Status::Corruption(not_ack + " (kind " + std::to_string(fh.kind) + ", threads " +
                              std::to_string(fh.threads) + ", num " + std::to_string(fh.num) + ")");
  }
  const size_t want = kHeaderSize + sizeof(AckSlot) * fh.threads;
  if (size != want) {
    close(fd);
    return Status::Corruption(not_ack + ": " + std::to_string(size) + " bytes, but a header for " +
                              std::to_string(fh.threads) + " threads needs " +
                              std::to_string(want));
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return Status::IOError(Errno("--ack_file: cannot map", path));
  AckHeader h;
  h.kind = static_cast<AckKind>(fh.kind);
  CopyKeyValueFields(fh, &h);
  std::unique_ptr<AckLog> opened(new AckLog(path, h, map, size));
  // A count beyond the thread's share cannot come from a fill: the file was made some other way.
  for (uint32_t t = 0; t < h.threads; ++t) {
    const uint64_t count = opened->Slot(static_cast<int>(t))->Load();
    const uint64_t share = ShareSize(h.num, h.threads, t);
    if (count > share) {
      return Status::Corruption("--ack_file " + path + ": thread " + std::to_string(t) +
                                " claims " + std::to_string(count) +
                                " acknowledged writes, more than its share of " +
                                std::to_string(share) + " keys");
    }
  }
  *log = std::move(opened);
  return Status::OK();
}

uint64_t AckLog::TotalAcknowledged() const {
  uint64_t total = 0;
  for (uint32_t t = 0; t < header_.threads; ++t) total += Slot(static_cast<int>(t))->Load();
  return total;
}

Status AckLog::CheckMatches(const WorkloadOptions& o) const {
  const AckHeader& h = header_;
  std::string diff;
  auto check = [&diff](bool same, const std::string& flag, const std::string& logged,
                       const std::string& now) {
    if (same) return;
    diff += (diff.empty() ? "" : ", ") + flag + "=" + logged + " (this run: " + now + ")";
  };
  check(h.num == o.num, "--num", std::to_string(h.num), std::to_string(o.num));
  check(h.threads == static_cast<uint32_t>(o.threads), "--threads", std::to_string(h.threads),
        std::to_string(o.threads));
  check(h.key_size == static_cast<uint32_t>(o.key_size), "--key_size", std::to_string(h.key_size),
        std::to_string(o.key_size));
  check(h.value_size == static_cast<uint32_t>(o.value_size), "--value_size",
        std::to_string(h.value_size), std::to_string(o.value_size));
  check(h.compression_ratio == o.compression_ratio, "--compression_ratio",
        FormatRatio(h.compression_ratio), FormatRatio(o.compression_ratio));
  check(h.seed == o.seed, "--seed", std::to_string(h.seed), std::to_string(o.seed));
  if (diff.empty()) return Status::OK();
  return Status::InvalidArgument("--ack_file " + path_ + " was written by " + AckKindName(h.kind) +
                                 " with " + diff + "; run verifyacked with the flags of the fill");
}

}  // namespace kvbench
