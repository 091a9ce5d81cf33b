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
      Flag("compression", &f->compression, "none",
           "Compression where the engine supports it (the reference engines: none)")
          .Choices("none,snappy,lz4,zstd"),
      Flag("sync", &f->sync, "false", "Make every write durable (fsync) before it returns"),
      Flag("engine_options", &f->engine_options, "",
           "Passed raw to the engine, in its own syntax (docs/engines.md); the reference engines "
           "take none"),
      Flag("histogram", &f->histogram, "false",
           "Print every latency percentile and the syscall bytes per op, not only the usual ones"),
      Flag("report_interval_seconds", &f->report_interval_seconds, "1",
           "Seconds between progress lines on stderr and interval samples")
          .Range(kMinReportInterval, kMaxReportInterval)
          .Or(0, "none")
          .Unit("seconds"),
      Flag("json", &f->json, "",
           "Write the results as one JSON document to this path (checked before the first "
           "benchmark; holds an incomplete document until the run ends)"),
  };
}

}  // namespace

std::vector<Flag> KvbenchFlagTable(KvbenchFlags* f) {
  std::vector<Flag> table;
  for (auto part : {RunFlags(f), WorkloadFlags(f), EngineAndOutputFlags(f)}) {
    table.insert(table.end(), part.begin(), part.end());
  }
  return table;
}

}  // namespace kvbench
