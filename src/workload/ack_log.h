// The acknowledged-write log of a fill (--ack_file), read back by `verifyacked` after a crash.
//
// While fillseq or fillrandom runs, each worker thread publishes how many of its writes the
// engine has acknowledged (Put returned ok) into its own slot of a memory-mapped file. Thread t of
// T writes the positions [ShareBegin(t), ShareBegin(t) + count) of the fill's split of [0, num),
// and a position is the key itself (fillseq) or Permutation(num, seed).At(position)
// (fillrandom); values are a function of (key, seed). So a count per thread names every
// acknowledged key and value: O(threads) memory and no system call per write.
//
// The file is MAP_SHARED: a store lands in a page of the page cache, which belongs to the kernel,
// so a SIGKILL of the writer loses nothing that was stored. It is not power-loss safe (nothing is
// ever fsync'd) and need not be: it records what the engine promised, and a crash test kills
// processes, not machines.
//
// File layout, host byte order (checked through the magic and version):
//   offset  0  char[8]  magic "KVBACK\0\0"
//           8  uint32   version (1)
//          12  uint32   kind: 1 fillseq, 2 fillrandom
//          16  uint64   num
//          24  uint64   seed
//          32  uint32   threads
//          36  uint32   key_size
//          40  uint32   value_size
//          44  uint32   reserved, 0
//          48  double   compression_ratio (IEEE-754 binary64)
//          56  8 bytes  reserved, 0
//          64  threads slots of 64 bytes: a uint64 count of acknowledged writes, then padding,
//              so no two threads ever write the same cache line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace kvbench {

struct WorkloadOptions;

// Which fill wrote a log, and so which order its positions map to keys in.
enum class AckKind : uint32_t { kNone = 0, kFillSeq = 1, kFillRandom = 2 };

const char* AckKindName(AckKind kind);

// What a fill was run with: everything needed to name its keys and values again.
struct AckHeader {
  AckKind kind = AckKind::kNone;
  uint64_t num = 0;
  uint64_t seed = 0;
  uint32_t threads = 0;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  double compression_ratio = 0;

  // The header a fill of `kind` writes for `options`.
  static AckHeader For(AckKind kind, const WorkloadOptions& options);
};

// One thread's count in the mapped file, alone in its cache line (the alignment pads it to 64
// bytes, the file's slot size), so no two threads ever write the same line.
class alignas(64) AckSlot {
 public:
  // Called by the slot's own thread after each acknowledged write, with the number of its writes
  // acknowledged so far. A plain store on x86 (release order on ARM): no lock, no system call.
  void Publish(uint64_t acknowledged) { __atomic_store_n(&count_, acknowledged, __ATOMIC_RELEASE); }
  uint64_t Load() const { return __atomic_load_n(&count_, __ATOMIC_ACQUIRE); }

 private:
  uint64_t count_;
};
static_assert(sizeof(AckSlot) == 64, "one slot per cache line");

// An open ack file. Not copyable; unmaps on destruction. Slot(t) is used by thread t only while
// writing; reading is thread-safe.
class AckLog {
 public:
  static constexpr size_t kHeaderSize = 64;

  AckLog(const AckLog&) = delete;
  AckLog& operator=(const AckLog&) = delete;
  ~AckLog();

  // Replaces `path` with a log for `header` whose counts are all 0, and maps it for writing. The
  // new file is written beside `path` and renamed over it, so `path` always holds a whole file:
  // either the older log or this one, never a header without its slots. A symbolic link is
  // followed and its target replaced (the link stays); a device or FIFO is refused, never
  // replaced (common/file_output.h).
  // REQUIRES: header.threads >= 1.
  static Status Create(const std::string& path, const AckHeader& header,
                       std::unique_ptr<AckLog>* log);
  // Maps an existing log for reading. Corruption if it is not a whole version-1 ack file.
  static Status Open(const std::string& path, std::unique_ptr<AckLog>* log);

  const AckHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  // REQUIRES: 0 <= thread < header().threads.
  AckSlot* Slot(int thread) { return &slots_[thread]; }
  const AckSlot* Slot(int thread) const { return &slots_[thread]; }
  // The sum of every thread's count.
  uint64_t TotalAcknowledged() const;

  // OK if `options` name the same keys and values as the fill that wrote this log; otherwise
  // InvalidArgument listing each flag that differs, the log's value first.
  Status CheckMatches(const WorkloadOptions& options) const;

 private:
  AckLog(std::string path, AckHeader header, void* map, size_t size);

  std::string path_;
  AckHeader header_;
  void* map_;
  size_t size_;
  AckSlot* slots_;
};

}  // namespace kvbench
