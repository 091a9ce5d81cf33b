// kvbench: db_bench-style benchmarks over RocksDB, WiredTiger and LMDB behind one KV interface.
//
// Flags are gflags definitions, but parsed here rather than by gflags so that every usage error
// exits with status 2 and a message naming the problem (gflags exits with 1). Runtime failures
// exit with 1, success with 0.
#include <gflags/gflags.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "kv/registry.h"
#include "runner/config.h"
#include "runner/environment.h"
#include "workload/key_generator.h"

DEFINE_string(benchmarks, "fillseq,readrandom",
              "Comma-separated benchmarks to run in order (see the list above); `settle` waits "
              "for background work between phases");
DEFINE_int32(repeats, 1,
             "Measured runs of each benchmark; with more than one, prints mean, median, "
             "stddev, cv and a 95% confidence interval of ops/sec. name[X5-W2] in "
             "--benchmarks sets it per benchmark, as in db_bench");
DEFINE_int32(warmups, 0, "Discarded runs of each benchmark before the measured ones");
DEFINE_string(engine, "rocksdb",
              "Engine: rocksdb, wiredtiger, lmdb, or the references memory/null");
DEFINE_string(db, "",
              "Database directory (default /tmp/kvbench-<uid>/<engine>). Emptied at start "
              "unless --use_existing_db; kvbench only empties directories it created");
DEFINE_bool(use_existing_db, false, "Open the existing database at --db instead of starting empty");
DEFINE_int64(num, 1000000, "Key space: keys 0..num-1; fills write num keys in total");
DEFINE_int64(reads, -1,
             "Read ops in total across threads (readrandom, readseq, fwdrange, ...); "
             "-1 = --num");
DEFINE_int64(writes, -1, "Overwrite ops in total across threads; -1 = --num");
DEFINE_int32(key_size, 16, "Key size in bytes: big-endian key number, padded with '0'");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_double(compression_ratio, 0.5, "Values compress to about this fraction of their size");
DEFINE_uint64(seed, 0, "Seed for keys and values: the same seed gives the same keys and values");
DEFINE_int32(duration, 0,
             "Seconds; >0 ends each benchmark at this deadline (read and overwrite "
             "loops then ignore their op counts)");
DEFINE_int32(threads, 1,
             "Worker threads, each with its own session (a *whilewriting writer is "
             "one more)");
DEFINE_int32(seek_nexts, 10, "Entries read after each seek in fwdrange (db_bench seekrandom)");
DEFINE_uint64(benchmark_write_rate_limit, 0,
              "Bytes/s for the background writer of *whilewriting benchmarks; 0 = unpaced");
DEFINE_bool(histogram, false, "Print all latency percentiles, cost per op and interval stalls");
DEFINE_double(report_interval_seconds, 1.0,
              "Seconds between progress lines on stderr and interval samples; 0 = none");
DEFINE_string(json, "", "Write the results as one JSON document to this path");
DEFINE_int64(cache_size, 256ll << 20,
             "Engine cache bytes (RocksDB block cache, WiredTiger cache; "
             "LMDB uses the OS page cache)");
DEFINE_string(compression, "none", "none, snappy, lz4 or zstd, where the engine supports it");
DEFINE_bool(sync, false, "Make every write durable (fsync) before it returns");
DEFINE_string(engine_options, "",
              "Passed raw to the engine: a RocksDB options string, a "
              "WiredTiger config string, LMDB map_size=N,flags=A|B");
DEFINE_bool(verify, false,
            "Check every value read against the value the seed writes for its key "
            "(costs ~4% of a RocksDB fwdrange op, so off by default, as db_bench)");

namespace {

constexpr int kUsageError = 2;

int Usage(const std::string& message) {
  std::fprintf(stderr, "kvbench: %s\nRun 'kvbench --help' for usage.\n", message.c_str());
  return kUsageError;
}

void PrintVersion() {
  const kvbench::BuildInfo& b = kvbench::GetBuildInfo();
  std::printf(
      "kvbench %s (git %s)\npreset: %s\ncompiler: %s %s\nbuild type: %s\nflags: %s\n"
      "target: %s\nassertions: %s\nengines:",
      b.kvbench_version, b.git_revision, b.preset, b.compiler_id, b.compiler_version, b.build_type,
      b.cxx_flags, b.target_arch, b.assertions ? "on" : "off");
  for (const auto& e : kvbench::AllEngines()) {
    std::printf(" %s%s", e.name, e.compiled_in ? "" : "(not compiled in)");
  }
  std::printf("\nlibraries:\n");
  // The same audit as the run header: origin, version, the file loaded and how it was built.
  for (const auto& l : kvbench::Environment::Collect().libraries) {
    if (l.version.empty() && l.path.empty() && l.origin.empty()) continue;
    std::printf("  %-10s %-8s %s\n", l.name.c_str(), l.version.c_str(),
                kvbench::DescribeLibrary(l).c_str());
  }
}

void PrintHelp() {
  std::printf(
      "Usage: kvbench [--flag=value ...]\n\n"
      "Runs db_bench-style benchmarks against one engine and prints one line per benchmark\n"
      "(and per role for *whilewriting). Op counts are totals across threads. Exit status:\n"
      "0 success, 2 usage error, 1 runtime failure. See docs/ for definitions.\n\nBenchmarks:\n");
  for (const auto& b : kvbench::AllBenchmarks()) std::printf("  %-22s %s\n", b.name, b.description);
  std::printf("\nEngines:\n");
  for (const auto& e : kvbench::AllEngines()) {
    std::printf("  %-22s %s%s\n", e.name, e.description,
                e.compiled_in ? "" : "  [not compiled in]");
  }
  std::printf("\nFlags:\n");
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const auto& f : flags) {
    if (f.filename.find("main.cc") == std::string::npos) continue;
    std::printf(
        "  --%s (%s, default %s)\n      %s\n", f.name.c_str(), f.type.c_str(),
        f.type == "string" ? ("\"" + f.default_value + "\"").c_str() : f.default_value.c_str(),
        f.description.c_str());
  }
  std::printf("  --help, --version\n");
}

// Applies argv to the gflags definitions. Returns -1 to go on, or an exit status.
int ParseFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') return Usage("unexpected argument '" + arg + "'");
    arg = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = arg, value;
    bool has_value = false;
    const auto eq = arg.find('=');
    if (eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    if (name == "help" || name == "h" || name == "helpfull") {
      PrintHelp();
      return 0;
    }
    if (name == "version") {
      PrintVersion();
      return 0;
    }
    gflags::CommandLineFlagInfo info;
    if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info) ||
        info.filename.find("main.cc") == std::string::npos) {
      if (!has_value && name.rfind("no", 0) == 0 &&
          gflags::GetCommandLineFlagInfo(name.c_str() + 2, &info) && info.type == "bool") {
        name = name.substr(2);
        value = "false";
        has_value = true;
      } else {
        return Usage("unknown flag --" + name);
      }
    }
    if (!has_value) {
      if (info.type == "bool") {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return Usage("flag --" + name + " needs a value");
      }
    }
    if (gflags::SetCommandLineOption(name.c_str(), value.c_str()).empty()) {
      return Usage("invalid value '" + value + "' for --" + name + " (expects " + info.type + ")");
    }
  }
  return -1;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
  return out;
}

// Splits db_bench's repeat syntax off a --benchmarks item: `name[X5-W2]`, `name[X5]`,
// `name[W1]` (X = measured runs, W = warm-ups, either order). False with `error` if malformed.
bool ParseRepeatSuffix(const std::string& item, kvbench::BenchmarkPlan* plan, std::string* error) {
  const auto open = item.find('[');
  if (open == std::string::npos) return true;
  plan->name = item.substr(0, open);
  if (item.back() != ']') {
    *error = "malformed repeat syntax in '" + item + "' (expected name[X5-W2])";
    return false;
  }
  const std::string inner = item.substr(open + 1, item.size() - open - 2);
  size_t start = 0;
  while (start <= inner.size()) {
    size_t end = inner.find('-', start);
    if (end == std::string::npos) end = inner.size();
    const std::string part = inner.substr(start, end - start);
    char* rest = nullptr;
    const long n = part.size() >= 2 ? std::strtol(part.c_str() + 1, &rest, 10) : -1;
    const bool digits = rest != nullptr && *rest == '\0';
    if (digits && (part[0] == 'X' || part[0] == 'x') && n >= 1) {
      plan->repeats = static_cast<int>(n);
    } else if (digits && (part[0] == 'W' || part[0] == 'w') && n >= 0) {
      plan->warmups = static_cast<int>(n);
    } else {
      *error = "malformed repeat syntax in '" + item + "' (expected name[X5-W2])";
      return false;
    }
    start = end + 1;
  }
  return true;
}

// Checks the flags and fills `c`. Returns -1 when valid, else the exit status.
int BuildConfig(int argc, char** argv, kvbench::RunConfig* c) {
  using kvbench::FindEngine;
  const kvbench::EngineInfo* engine = FindEngine(FLAGS_engine);
  if (engine == nullptr) {
    std::string known;
    for (const auto& e : kvbench::AllEngines()) known += std::string(" ") + e.name;
    return Usage("unknown engine '" + FLAGS_engine + "' (known:" + known + ")");
  }
  if (!engine->compiled_in) {
    return Usage("engine '" + FLAGS_engine +
                 "' is not compiled into this kvbench: " + engine->missing);
  }
  c->engine = FLAGS_engine;
  if (FLAGS_repeats < 1) return Usage("--repeats must be >= 1");
  if (FLAGS_warmups < 0) return Usage("--warmups must be >= 0");
  const std::vector<std::string> names = SplitList(FLAGS_benchmarks);
  if (names.empty()) return Usage("--benchmarks is empty");
  for (const auto& item : names) {
    kvbench::BenchmarkPlan plan{item, FLAGS_repeats, FLAGS_warmups};
    std::string error;
    if (!ParseRepeatSuffix(item, &plan, &error)) return Usage(error);
    if (kvbench::FindBenchmark(plan.name) == nullptr) {
      std::string known;
      for (const auto& s : kvbench::AllBenchmarks()) known += std::string(" ") + s.name;
      return Usage("unknown benchmark '" + plan.name + "' (known:" + known + ")");
    }
    c->benchmarks.push_back(plan);
  }
  if (FLAGS_num <= 0) return Usage("--num must be positive, got " + std::to_string(FLAGS_num));
  if (FLAGS_reads < -1) return Usage("--reads must be >= 0 (or -1 for --num)");
  if (FLAGS_writes < -1) return Usage("--writes must be >= 0 (or -1 for --num)");
  if (FLAGS_key_size < 1 || FLAGS_key_size > 1024) return Usage("--key_size must be 1..1024");
  if (static_cast<uint64_t>(FLAGS_num) > kvbench::KeyFormat::Capacity(FLAGS_key_size)) {
    return Usage("--key_size=" + std::to_string(FLAGS_key_size) +
                 " is too small for --num=" + std::to_string(FLAGS_num) + ": " +
                 std::to_string(FLAGS_key_size) + " bytes hold at most " +
                 std::to_string(kvbench::KeyFormat::Capacity(FLAGS_key_size)) + " keys");
  }
  if (FLAGS_value_size < 1 || FLAGS_value_size > (64 << 20)) {
    return Usage("--value_size must be 1..67108864");
  }
  if (!(FLAGS_compression_ratio > 0 && FLAGS_compression_ratio <= 1)) {
    return Usage("--compression_ratio must be in (0, 1]");
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 1024) return Usage("--threads must be 1..1024");
  if (FLAGS_duration < 0) return Usage("--duration must be >= 0");
  if (FLAGS_seek_nexts < 0) return Usage("--seek_nexts must be >= 0");
  if (!(FLAGS_report_interval_seconds >= 0)) return Usage("--report_interval_seconds must be >= 0");
  if (FLAGS_cache_size <= 0) return Usage("--cache_size must be positive");
  const std::string comp = FLAGS_compression;
  if (comp != "none" && comp != "snappy" && comp != "lz4" && comp != "zstd") {
    return Usage("unknown --compression '" + comp + "' (none, snappy, lz4, zstd)");
  }
  std::string db = FLAGS_db;
  if (gflags::GetCommandLineFlagInfoOrDie("db").is_default) {
    db = "/tmp/kvbench-" + std::to_string(getuid()) + "/" + FLAGS_engine;
  } else if (db.empty()) {
    return Usage("--db is empty");
  }

  c->use_existing_db = FLAGS_use_existing_db;
  c->engine_options.path = db;
  c->engine_options.cache_size = static_cast<uint64_t>(FLAGS_cache_size);
  c->engine_options.compression = comp;
  c->engine_options.sync = FLAGS_sync;
  c->engine_options.engine_options = FLAGS_engine_options;
  auto& w = c->workload;
  w.num = static_cast<uint64_t>(FLAGS_num);
  w.reads = FLAGS_reads;
  w.writes = FLAGS_writes;
  w.key_size = FLAGS_key_size;
  w.value_size = FLAGS_value_size;
  w.compression_ratio = FLAGS_compression_ratio;
  w.seed = FLAGS_seed;
  w.duration_seconds = FLAGS_duration;
  w.threads = FLAGS_threads;
  w.seek_nexts = FLAGS_seek_nexts;
  w.write_rate_limit = static_cast<double>(FLAGS_benchmark_write_rate_limit);
  w.verify = FLAGS_verify;
  c->report_interval_seconds = FLAGS_report_interval_seconds;
  c->histogram = FLAGS_histogram;
  c->json_path = FLAGS_json;
  for (int i = 0; i < argc; ++i) c->command_line += (i ? " " : "") + std::string(argv[i]);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int rc = ParseFlags(argc, argv);
  if (rc >= 0) return rc;
  kvbench::RunConfig config;
  rc = BuildConfig(argc, argv, &config);
  if (rc >= 0) return rc;
  return kvbench::RunBenchmarks(config);
}
