#include "stats/disk_stats.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <sstream>

namespace kvbench {

DiskSnapshot DiskSnapshot::Take(const std::string& path) {
  DiskSnapshot snap;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return snap;
  const unsigned want_major = major(st.st_dev), want_minor = minor(st.st_dev);
  std::ifstream in("/proc/diskstats");
  std::string line;
  while (std::getline(in, line)) {
    // major minor name reads merged sectors_read ms_reading writes ... (Documentation/iostats)
    std::istringstream fields(line);
    unsigned maj = 0, min = 0;
    std::string name;
    uint64_t reads = 0, merged = 0, sectors = 0;
    if (!(fields >> maj >> min >> name >> reads >> merged >> sectors)) continue;
    if (maj != want_major || min != want_minor) continue;
    snap.valid = true;
    snap.device = name;
    snap.reads = reads;
    snap.read_bytes = sectors * 512;  // diskstats sectors are 512 bytes whatever the device's
    break;
  }
  return snap;
}

DeviceCost DeviceCostPerOp(const DiskSnapshot& start, const DiskSnapshot& end, uint64_t ops) {
  DeviceCost c;
  if (!start.valid || !end.valid || start.device != end.device) return c;
  c.valid = true;
  c.device = end.device;
  c.read_bytes = end.read_bytes - start.read_bytes;
  if (ops > 0) {
    c.reads_per_op = static_cast<double>(end.reads - start.reads) / ops;
    c.read_kb_per_op = c.read_bytes / 1024.0 / ops;
  }
  return c;
}

}  // namespace kvbench
