#include "cli/kvbench_flags.h"

#include "common/limits.h"
#include "kv/registry.h"

namespace kvbench {

namespace {

// What to run, and where.
std::vector<Flag> RunFlags(KvbenchFlags* f) {
  return {
      Flag("benchmarks", &f->benchmarks, "fillseq,readrandom",
           "Comma-separated benchmarks to run in order (see the list above); `settle` waits for "
           "background work between phases"),
      Flag("repeats", &f->repeats, "1",
           "Measured runs of each benchmark; with more than one, prints mean, median, stddev, cv "
           "and a 95% confidence interval of ops/sec. name[X5-W2] in --benchmarks sets it per "
           "benchmark, as in db_bench")
          .Range(1, kMaxRepeats),
      Flag("warmups", &f->warmups, "0",
           "Discarded runs of each benchmark before the measured ones (warm-ups and repeats of one "
           "benchmark together at most 1024)")
          .Range(0, kMaxRepeats),
      Flag("engine", &f->engine, DefaultEngine(),
           "Engine: one of the list above (--list-engines prints those compiled in)"),
      Flag("db", &f->db, "",
           "Database directory (default /tmp/kvbench-<uid>/<engine>, removed after the run "
           "unless --keep_db). Emptied at start unless --use_existing_db; kvbench only empties "
           "directories it created. A run holds an exclusive lock on it (<db>/.kvbench.lock): a "
           "second run on the same directory fails with exit 1 naming the first one's pid"),
      Flag("use_existing_db", &f->use_existing_db, "false",
           "Open the existing database at --db instead of starting empty"),
      Flag("keep_db", &f->keep_db, "false",
           "Keep the default database directory after the run (a --db you name is always kept)"),
  };
}

// The keys, values and ops of the workloads.
std::vector<Flag> WorkloadFlags(KvbenchFlags* f) {
  return {
      Flag("num", &f->num, "1000000", "Key space: keys 0..num-1; fills write num keys in total")
          .Range(1, kMaxNum)
          .Unit("keys"),
      Flag("reads", &f->reads, "-1",
           "Read ops in total across threads (readrandom, readseq, fwdrange, ...). readseq stops "
           "at the end of the data, as db_bench's does")
          .Range(0, kMaxOps)
          .Or(-1, "= --num")
          .Unit("ops"),
      Flag("writes", &f->writes, "-1", "Overwrite ops in total across threads")
          .Range(0, kMaxOps)
          .Or(-1, "= --num")
          .Unit("ops"),
      Flag("key_size", &f->key_size, "16",
           "Key size, and at most the engine's own limit (docs/engines.md): big-endian key "
           "number, padded with '0'")
          .Range(1, kMaxKeySize)
          .Unit("bytes"),
      Flag("value_size", &f->value_size, "100", "Value size").Range(1, kMaxValueSize).Unit("bytes"),
      Flag("compression_ratio", &f->compression_ratio, "0.5",
           "Values compress to about this fraction of their size")
          .Range(0, 1)
          .LowOpen(),
      Flag("seed", &f->seed, "0",
           "Seed for keys and values: the same seed gives the same keys and values"),
      Flag("duration", &f->duration, "0",
           "0 = none; >0 ends each benchmark at this deadline (read and overwrite loops then "
           "ignore their op counts)")
          .Range(0, kMaxDurationSeconds)
          .Unit("seconds"),
      Flag("threads", &f->threads, "1",
           "Worker threads, each with its own session (a *whilewriting writer is one more)")
          .Range(1, kMaxThreads),
      Flag("seek_nexts", &f->seek_nexts, "10",
           "Entries read after each seek in fwdrange (db_bench seekrandom)")
          .Range(0, kMaxSeekNexts)
          .Unit("entries"),
      Flag("benchmark_write_rate_limit", &f->benchmark_write_rate_limit, "0",
           "Pace of the background writer of *whilewriting benchmarks; 0 = unpaced. The writer "
           "never waits past --duration or the readers' end")
          .Unit("bytes/s"),
      Flag("verify", &f->verify, "false",
           "Check every value read against the value the seed writes for its key (costs a few % "
           "of a range read, so off by default, as db_bench)"),
      Flag("ack_file", &f->ack_file, "",
           "Fills (fillseq, fillrandom) publish each thread's count of acknowledged writes in this "
           "file (memory-mapped: a SIGKILL loses none of it); verifyacked reads it back after a "
           "crash (docs/workloads.md). Not inside --db"),
  };
}

// The engine's settings, and what the run prints and writes.
std::vector<Flag> EngineAndOutputFlags(KvbenchFlags* f) {
  return {
      Flag("cache_size", &f->cache_size, "268435456",
           "The engine's own cache (docs/engines.md says which; some have none and use the OS "
           "page cache)")
          .Range(1)
          .Unit("bytes"),
      Flag("memory_budget", &f->memory_budget, "-1",
           "All the memory the engine may use, split by its adapter between its own settings "
           "(RocksDB block cache and write buffers; WiredTiger cache and eviction targets; LMDB "
           "the OS page cache) and recorded with the result; for comparing engines fairly "
           "(docs/engines.md). Not with --cache_size; not for the reference engines")
          .Range(kMinMemoryBudget)
          .Or(-1, "none: --cache_size and the engine's own defaults")
          .Unit("bytes"),
      Flag("io_bound", &f->io_bound, "false",
           "Keep the database out of memory beyond --memory_budget: O_DIRECT where the engine "
           "supports it, else a memory cgroup limit (root; exit 2 when neither is possible). "
           "Needs --memory_budget at most half of --num x (key_size + value_size)"),
      Flag("drop_caches", &f->drop_caches, "false",
           "sync and drop the OS page cache before each benchmark that reads an existing "
           "database (root only: exit 2 otherwise)"),
      Flag("compression", &f->compression, "none",
           "Compression where the engine supports it (the reference engines: none)")
          .Choices("none,snappy,lz4,zstd"),
      Flag("sync", &f->sync, "false", "Make every write durable (fsync) before it returns"),
      Flag("engine_options", &f->engine_options, "",
           "Passed raw to the engine, in its own syntax (docs/engines.md); the reference engines "
           "take none"),
      Flag("latency_sample", &f->latency_sample, "1",
           "Time one op in N for the latency histogram (at random gaps averaging N); 1 = every "
           "op. Throughput counts every op either way. Two clock reads cost ~24 ns per timed op "
           "on AMD Zen (docs/metrics.md): sampling takes that out of the untimed ops, for "
           "engines whose ops take tens of ns. With --duration the deadline is checked at timed "
           "ops. The output says when latency is sampled")
          .Range(1, kMaxLatencySample)
          .Unit("ops"),
      Flag("histogram", &f->histogram, "false",
           "Print every latency percentile, not only the usual ones"),
      Flag("report_interval_seconds", &f->report_interval_seconds, "1",
           "Seconds between progress lines on stderr and interval samples")
          .Range(kMinReportInterval, kMaxReportInterval)
          .Or(0, "none")
          .Unit("seconds"),
      Flag("perf_counters", &f->perf_counters, "auto",
           "perf_event_open counters per role, per op: auto (every event below), off, or a "
           "comma-separated list of instructions, cycles, branch-misses, L1-dcache-load-misses, "
           "cache-misses (hardware: recorded as unavailable, with the reason, where the machine "
           "has no PMU), task-clock, context-switches, cpu-migrations, minor-faults, "
           "major-faults (software)"),
      Flag("cpu_affinity", &f->cpu_affinity, "",
           "Pin the worker threads round-robin to these CPUs (0,1 or 0-3); the *whilewriting "
           "writer gets a CPU of its own when the list has one more than --threads. Every CPU "
           "must be one the process may run on. Empty = unpinned"),
      Flag("json", &f->json, "",
           "Write the results as one JSON document to this path (checked before the first "
           "benchmark; holds an incomplete document until the run ends)"),
      Flag("hgrm_prefix", &f->hgrm_prefix, "",
           "Write each benchmark's and role's latency distribution as HdrHistogram percentile "
           "text to PREFIX.<benchmark>.<role>.hgrm (docs/report.md)"),
  };
}

// --profile (docs/profile.md).
std::vector<Flag> ProfileFlags(KvbenchFlags* f) {
  return {
      Flag("profile", &f->profile, "false",
           "Sample each role's CPU time during the measured loops (perf_event_open cpu-clock, "
           "frame-pointer stacks; the engine's own threads as role 'background') and write the "
           "folded stacks, symbolized, into --json (docs/profile.md). Where perf_event_open is "
           "refused, says why in one line and runs unprofiled"),
      Flag("profile_hz", &f->profile_hz, "499",
           "--profile's rate: samples per second of each thread's CPU time. Each sample is a "
           "timer interrupt: ~20 us of CPU on this project's KVM guests, so 499 Hz costs ~1%, "
           "1000 Hz ~2% (docs/profile.md); 499, not 500, so samples do not keep step with "
           "250 Hz ticks")
          .Range(1, kMaxProfileHz)
          .Unit("Hz"),
  };
}

}  // namespace

std::vector<Flag> KvbenchFlagTable(KvbenchFlags* f) {
  std::vector<Flag> table;
  for (auto part : {RunFlags(f), WorkloadFlags(f), EngineAndOutputFlags(f), ProfileFlags(f)}) {
    table.insert(table.end(), part.begin(), part.end());
  }
  return table;
}

}  // namespace kvbench
