#include "stats/resource_usage.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kvbench {

namespace {

// Reads "Name: value" lines; calls f(name, value) for each.
template <typename F>
bool ReadProcKeyValues(const char* path, F f) {
  std::FILE* in = std::fopen(path, "r");
  if (in == nullptr) return false;
  char line[256];
  while (std::fgets(line, sizeof(line), in) != nullptr) {
    char* colon = std::strchr(line, ':');
    if (colon == nullptr) continue;
    *colon = '\0';
    f(line, std::strtoull(colon + 1, nullptr, 10));
  }
  std::fclose(in);
  return true;
}

}  // namespace

ResourceSnapshot ResourceSnapshot::Take() {
  ResourceSnapshot s;
  rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    s.user_us = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec;
    s.sys_us = ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec;
    s.voluntary_cs = static_cast<uint64_t>(ru.ru_nvcsw);
    s.involuntary_cs = static_cast<uint64_t>(ru.ru_nivcsw);
  }
  s.have_io = ReadProcKeyValues("/proc/self/io", [&s](const char* k, uint64_t v) {
    if (!std::strcmp(k, "read_bytes"))
      s.storage_read_bytes = v;
    else if (!std::strcmp(k, "write_bytes"))
      s.storage_write_bytes = v;
    else if (!std::strcmp(k, "rchar"))
      s.syscall_read_bytes = v;
    else if (!std::strcmp(k, "wchar"))
      s.syscall_write_bytes = v;
  });
  ReadProcKeyValues("/proc/self/status", [&s](const char* k, uint64_t v) {
    if (!std::strcmp(k, "VmRSS"))
      s.rss_bytes = v * 1024;
    else if (!std::strcmp(k, "VmHWM"))
      s.peak_rss_bytes = v * 1024;
  });
  return s;
}

ResourceCost CostPerOp(const ResourceSnapshot& a, const ResourceSnapshot& b, uint64_t ops) {
  ResourceCost c;
  c.cpu_seconds = ((b.user_us - a.user_us) + (b.sys_us - a.sys_us)) / 1e6;
  if (ops == 0) return c;
  const double n = static_cast<double>(ops);
  c.cpu_user_us_per_op = (b.user_us - a.user_us) / n;
  c.cpu_sys_us_per_op = (b.sys_us - a.sys_us) / n;
  c.voluntary_cs_per_op = static_cast<double>(b.voluntary_cs - a.voluntary_cs) / n;
  c.involuntary_cs_per_op = static_cast<double>(b.involuntary_cs - a.involuntary_cs) / n;
  c.have_io = a.have_io && b.have_io;
  if (c.have_io) {
    c.storage_read_kb_per_op =
        static_cast<double>(b.storage_read_bytes - a.storage_read_bytes) / 1024 / n;
    c.storage_write_kb_per_op =
        static_cast<double>(b.storage_write_bytes - a.storage_write_bytes) / 1024 / n;
    c.syscall_read_kb_per_op =
        static_cast<double>(b.syscall_read_bytes - a.syscall_read_bytes) / 1024 / n;
    c.syscall_write_kb_per_op =
        static_cast<double>(b.syscall_write_bytes - a.syscall_write_bytes) / 1024 / n;
  }
  return c;
}

}  // namespace kvbench
