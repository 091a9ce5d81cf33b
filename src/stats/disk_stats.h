// Completed reads of the block device that holds a directory, from /proc/diskstats: the
// write-ups' "r/q" (storage reads per query). Device-wide, so other processes' reads of the same
// device are counted too; the result says so when the device read more than this process.
#pragma once

#include <cstdint>
#include <string>

namespace kvbench {

struct DiskSnapshot {
  bool valid = false;  // the device was found in /proc/diskstats
  std::string device;  // "vda", "nvme0n1p2"
  uint64_t reads = 0, read_bytes = 0;

  // The counters of the device holding `path` (its st_dev), or !valid when that is no block
  // device (tmpfs, overlay) or /proc/diskstats is unreadable.
  static DiskSnapshot Take(const std::string& path);
};

// What the device did over a benchmark, per op of a role.
struct DeviceCost {
  bool valid = false;
  std::string device;
  double reads_per_op = 0, read_kb_per_op = 0;
  uint64_t read_bytes = 0;  // over the whole benchmark, for the shared-device check
};

DeviceCost DeviceCostPerOp(const DiskSnapshot& start, const DiskSnapshot& end, uint64_t ops);

}  // namespace kvbench
