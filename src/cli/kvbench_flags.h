// kvbench's flags: the values (KvbenchFlags) and the table that describes them once each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/flags.h"

namespace kvbench {

struct KvbenchFlags {
  std::string benchmarks, engine, db, json, hgrm_prefix, compression, engine_options, ack_file;
  std::string perf_counters, cpu_affinity;
  int32_t repeats = 0, warmups = 0, key_size = 0, value_size = 0, duration = 0, threads = 0;
  int32_t seek_nexts = 0;
  int32_t latency_sample = 1;
  int64_t num = 0, reads = 0, writes = 0, cache_size = 0, memory_budget = 0;
  uint64_t seed = 0, benchmark_write_rate_limit = 0;
  double compression_ratio = 0, report_interval_seconds = 0;
  bool use_existing_db = false, keep_db = false, histogram = false, sync = false, verify = false;
  bool io_bound = false, drop_caches = false, profile = false;
  int32_t profile_hz = 0;
};

// The table: name, type (from the field), default, range, unit and help of every flag, bound to
// the fields of `f`. docs/cli.md lists the same (tests/cli_test.py holds them equal).
std::vector<Flag> KvbenchFlagTable(KvbenchFlags* f);

}  // namespace kvbench
