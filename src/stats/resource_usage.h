// Process-wide resource counters, sampled at the start and end of a benchmark so that engine
// background threads (flush, compaction, eviction, checkpoints) are counted too.
#pragma once

#include <cstdint>

namespace kvbench {

struct ResourceSnapshot {
  double user_us = 0, sys_us = 0;  // getrusage(RUSAGE_SELF) CPU time
  uint64_t voluntary_cs = 0, involuntary_cs = 0;
  // /proc/self/io: bytes this process caused to be read from / sent to the storage layer
  // (read_bytes / write_bytes) and passed through read/write syscalls (rchar / wchar).
  uint64_t storage_read_bytes = 0, storage_write_bytes = 0;
  uint64_t syscall_read_bytes = 0, syscall_write_bytes = 0;
  bool have_io = false;                        // /proc/self/io was readable
  uint64_t rss_bytes = 0, peak_rss_bytes = 0;  // VmRSS / VmHWM from /proc/self/status

  static ResourceSnapshot Take();
};

// end - start, per operation.
struct ResourceCost {
  double cpu_user_us_per_op = 0, cpu_sys_us_per_op = 0;
  double storage_read_kb_per_op = 0, storage_write_kb_per_op = 0;
  double syscall_read_kb_per_op = 0, syscall_write_kb_per_op = 0;
  double voluntary_cs_per_op = 0, involuntary_cs_per_op = 0;
  bool have_io = false;
  double cpu_seconds = 0;  // user + sys over the whole benchmark
};

ResourceCost CostPerOp(const ResourceSnapshot& start, const ResourceSnapshot& end, uint64_t ops);

}  // namespace kvbench
