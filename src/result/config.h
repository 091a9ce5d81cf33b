// Everything one kvbench invocation was asked to do, already validated (cli/). Read by the runner
// and the reporters.
#pragma once

#include <string>
#include <vector>

#include "kv/engine.h"
#include "profile/profile.h"
#include "stats/perf_counters.h"
#include "workload/workload.h"

namespace kvbench {

// One entry of --benchmarks: `name`, or db_bench's `name[X5-W2]` (5 measured runs after 2
// discarded warm-ups).
struct BenchmarkPlan {
  std::string name;  // from AllBenchmarks()
  int repeats = 1;
  int warmups = 0;
};

struct RunConfig {
  // Whether the run removes the database it created when it ends.
  bool RemovesDatabase() const { return default_db && !keep_db && !use_existing_db; }

  std::string engine;  // a compiled-in engine of kv/registry.h
  std::vector<BenchmarkPlan> benchmarks;
  bool use_existing_db = false;
  // The database directory is kvbench's default (no --db given): a database this run creates
  // there is removed when the run ends, unless keep_db (--keep_db).
  bool default_db = false;
  bool keep_db = false;
  EngineOptions engine_options;  // path, cache, compression, sync, raw options
  WorkloadOptions workload;
  double report_interval_seconds = 1.0;  // 0 = no interval series, no progress lines
  bool histogram = false;                // print the full latency distribution
  std::string json_path;                 // empty = no JSON
  std::string hgrm_prefix;               // empty = no .hgrm files
  std::string ack_file;                  // --ack_file: fills record acknowledged writes here,
                                         // verifyacked reads them back; empty = none
  std::string command_line;              // as typed, for the record
  bool drop_caches = false;              // --drop_caches: before each benchmark on existing data
  std::string io_bound_mechanism;        // --io_bound: what bounds the engine's memory; "" = off
  PerfPlan perf_counters;                // --perf_counters, probed: what each worker counts
  std::vector<int> cpu_affinity;         // --cpu_affinity: the workers' CPUs; empty = unpinned
  ProfilePlan profile;                   // --profile, --profile_hz, probed
};

}  // namespace kvbench
