// kvbench: db_bench-style benchmarks over RocksDB, WiredTiger and LMDB behind one KV interface.
//
// Flags are gflags definitions, but parsed here rather than by gflags so that every usage error
// exits with status 2 and a message naming the problem (gflags exits with 1). Runtime failures
// exit with 1, success with 0.
#include <gflags/gflags.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/build_info.h"
#include "env/environment.h"
#include "kv/registry.h"
#include "report/console_reporter.h"
#include "report/json_reporter.h"
#include "result/config.h"
#include "runner/runner.h"
#include "workload/key_generator.h"

DEFINE_string(benchmarks, "fillseq,readrandom",
              "Comma-separated benchmarks to run in order (see the list above); `settle` waits "
              "for background work between phases");
DEFINE_int32(repeats, 1,
             "Measured runs of each benchmark (1..1000); with more than one, prints mean, "
             "median, stddev, cv and a 95% confidence interval of ops/sec. name[X5-W2] in "
             "--benchmarks sets it per benchmark, as in db_bench");
DEFINE_int32(warmups, 0,
             "Discarded runs of each benchmark before the measured ones (0..1000; warm-ups "
             "and repeats of one benchmark together at most 1024)");
DEFINE_string(engine, kvbench::DefaultEngine(),
              "Engine: one of the list above (--list-engines prints those compiled in)");
DEFINE_string(db, "",
              "Database directory (default /tmp/kvbench-<uid>/<engine>). Emptied at start "
              "unless --use_existing_db; kvbench only empties directories it created. A run "
              "holds an exclusive lock on it (<db>/.kvbench.lock): a second run on the same "
              "directory fails with exit 1 naming the first one's pid");
DEFINE_bool(use_existing_db, false, "Open the existing database at --db instead of starting empty");
DEFINE_int64(num, 1000000,
             "Key space: keys 0..num-1 (at most 10^12); fills write num keys in total");
DEFINE_int64(reads, -1,
             "Read ops in total across threads (readrandom, readseq, fwdrange, ...; at most "
             "10^15); -1 = --num. readseq stops at the end of the data, as db_bench's does");
DEFINE_int64(writes, -1, "Overwrite ops in total across threads (at most 10^15); -1 = --num");
DEFINE_int32(key_size, 16,
             "Key size in bytes (1..1024, and at most the engine's limit: lmdb 511): "
             "big-endian key number, padded with '0'");
DEFINE_int32(value_size, 100, "Value size in bytes");
DEFINE_double(compression_ratio, 0.5, "Values compress to about this fraction of their size");
DEFINE_uint64(seed, 0, "Seed for keys and values: the same seed gives the same keys and values");
DEFINE_int32(duration, 0,
             "Seconds (at most 2592000 = 30 days); >0 ends each benchmark at this deadline "
             "(read and overwrite loops then ignore their op counts)");
DEFINE_int32(threads, 1,
             "Worker threads, each with its own session (a *whilewriting writer is "
             "one more)");
DEFINE_int32(seek_nexts, 10,
             "Entries read after each seek in fwdrange (db_bench seekrandom); 0..1000000");
DEFINE_uint64(benchmark_write_rate_limit, 0,
              "Bytes/s for the background writer of *whilewriting benchmarks; 0 = unpaced. "
              "The writer never waits past --duration or the readers' end");
DEFINE_bool(histogram, false, "Print all latency percentiles, cost per op and interval stalls");
DEFINE_double(report_interval_seconds, 1.0,
              "Seconds between progress lines on stderr and interval samples: 0.01..86400, "
              "or 0 = none");
DEFINE_string(json, "",
              "Write the results as one JSON document to this path (checked before the first "
              "benchmark; holds an incomplete document until the run ends)");
DEFINE_int64(cache_size, 256ll << 20,
             "Engine cache bytes (RocksDB block cache, WiredTiger cache; "
             "LMDB uses the OS page cache)");
DEFINE_string(compression, "none",
              "none, snappy, lz4 or zstd, where the engine supports it (memory/null: none)");
DEFINE_bool(sync, false, "Make every write durable (fsync) before it returns");
DEFINE_string(engine_options, "",
              "Passed raw to the engine: a RocksDB options string, a "
              "WiredTiger config string, LMDB map_size=N,flags=A|B (memory/null take none)");
DEFINE_string(
    ack_file, "",
    "Fills (fillseq, fillrandom) publish each thread's count of acknowledged writes in this "
    "file (memory-mapped: a SIGKILL loses none of it); verifyacked reads it back after "
    "a crash (docs/workloads.md). Not inside --db");
DEFINE_bool(verify, false,
            "Check every value read against the value the seed writes for its key "
            "(costs ~4% of a RocksDB fwdrange op, so off by default, as db_bench)");

namespace {

constexpr int kUsageError = 2;

// Bounds on counts and intervals, so that no arithmetic on them can overflow (see docs/cli.md).
constexpr int kMaxRepeats = 1000;           // per benchmark, and the same for warm-ups
constexpr int kMaxRunsPerBenchmark = 1024;  // warm-ups + repeats: each run has its own seed stream
constexpr int64_t kMaxNum = 1000000000000;  // 10^12 keys
constexpr int64_t kMaxOps = 1000000000000000;    // 10^15 reads or writes
constexpr int kMaxDurationSeconds = 30 * 86400;  // 30 days
constexpr double kMinInterval = 0.01, kMaxInterval = 86400;
constexpr int kMaxSeekNexts = 1000000;

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
  for (const auto& l : kvbench::Environment::Collect(&kvbench::EngineLibrary).libraries) {
    if (l.version.empty() && l.path.empty() && l.origin.empty()) continue;
    std::printf("  %-10s %-8s %s\n", l.name.c_str(), l.version.c_str(),
                kvbench::DescribeLibrary(l).c_str());
  }
}

// One compiled-in engine per line, "name<TAB>storage" or "name<TAB>reference", for scripts.
void PrintEngineList() {
  for (const auto& e : kvbench::AllEngines()) {
    if (e.compiled_in) std::printf("%s\t%s\n", e.name, e.reference ? "reference" : "storage");
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
  std::printf("  --help, --version, --list-engines\n");
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
    if (name == "list-engines" || name == "list_engines") {
      PrintEngineList();
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

// Splits a comma-separated list; every item, empty ones included, in order.
std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A count written as plain decimal digits (no sign, no spaces): its value if at most `max`, -2 if
// larger, -1 if it is not plain digits.
long ParseSmallCount(const std::string& digits, long max) {
  if (digits.empty()) return -1;
  long n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    if (n <= max) n = n * 10 + (c - '0');  // stops growing past max: no overflow
  }
  return n <= max ? n : -2;
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
    const long n = part.empty() ? -1 : ParseSmallCount(part.substr(1), kMaxRepeats);
    const char kind = part.empty() ? '\0' : part[0];
    const bool repeat = kind == 'X' || kind == 'x', warmup = kind == 'W' || kind == 'w';
    if (n == -2 && (repeat || warmup)) {
      *error = "repeat count out of range in '" + item + "' (X: 1.." + std::to_string(kMaxRepeats) +
               ", W: 0.." + std::to_string(kMaxRepeats) + ")";
      return false;
    }
    if (repeat && n >= 1) {
      plan->repeats = static_cast<int>(n);
    } else if (warmup && n >= 0) {
      plan->warmups = static_cast<int>(n);
    } else {
      *error = "malformed repeat syntax in '" + item + "' (expected name[X5-W2])";
      return false;
    }
    start = end + 1;
  }
  return true;
}

// --ack_file and verifyacked need each other; verifyacked reads a database that a fill earlier in
// the list or an earlier run wrote. Returns -1 when valid, else the exit status.
int CheckAckFile(const kvbench::RunConfig& c) {
  bool fill_before = false, uses_ack = false;
  for (const auto& plan : c.benchmarks) {
    const kvbench::BenchmarkSpec* spec = kvbench::FindBenchmark(plan.name);
    if (spec->checks_acks) {
      if (FLAGS_ack_file.empty()) {
        return Usage(plan.name + " needs --ack_file: the file the fill wrote with --ack_file");
      }
      if (!FLAGS_use_existing_db && !fill_before) {
        return Usage(plan.name + " reads what a fill wrote: add --use_existing_db, or run " +
                     "fillseq or fillrandom before it in --benchmarks (without it the database " +
                     "starts empty)");
      }
    }
    fill_before = fill_before || spec->acks != kvbench::AckKind::kNone;
    uses_ack = uses_ack || spec->checks_acks || spec->acks != kvbench::AckKind::kNone;
  }
  if (FLAGS_ack_file.empty()) return -1;
  if (!uses_ack) {
    return Usage("--ack_file is only used by fillseq, fillrandom and verifyacked; --benchmarks='" +
                 FLAGS_benchmarks + "' has none of them");
  }
  return -1;
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
  if (FLAGS_repeats > kMaxRepeats) {
    return Usage("--repeats must be at most " + std::to_string(kMaxRepeats));
  }
  if (FLAGS_warmups < 0 || FLAGS_warmups > kMaxRepeats) {
    return Usage("--warmups must be 0.." + std::to_string(kMaxRepeats));
  }
  if (FLAGS_benchmarks.empty()) return Usage("--benchmarks is empty");
  const std::vector<std::string> names = SplitList(FLAGS_benchmarks);
  for (const auto& item : names) {
    if (item.empty()) return Usage("empty item in --benchmarks '" + FLAGS_benchmarks + "'");
    kvbench::BenchmarkPlan plan{item, FLAGS_repeats, FLAGS_warmups};
    std::string error;
    if (!ParseRepeatSuffix(item, &plan, &error)) return Usage(error);
    if (plan.warmups + plan.repeats > kMaxRunsPerBenchmark) {
      return Usage("'" + item + "': warm-ups and repeats together must be at most " +
                   std::to_string(kMaxRunsPerBenchmark));
    }
    if (kvbench::FindBenchmark(plan.name) == nullptr) {
      std::string known;
      for (const auto& s : kvbench::AllBenchmarks()) known += std::string(" ") + s.name;
      return Usage("unknown benchmark '" + plan.name + "' (known:" + known + ")");
    }
    c->benchmarks.push_back(plan);
  }
  int rc = CheckAckFile(*c);
  if (rc >= 0) return rc;
  if (FLAGS_num <= 0) return Usage("--num must be positive, got " + std::to_string(FLAGS_num));
  if (FLAGS_num > kMaxNum) {
    return Usage("--num must be at most " + std::to_string(kMaxNum) + ", got " +
                 std::to_string(FLAGS_num));
  }
  if (FLAGS_reads < -1 || FLAGS_reads > kMaxOps) {
    return Usage("--reads must be 0.." + std::to_string(kMaxOps) + " (or -1 for --num)");
  }
  if (FLAGS_writes < -1 || FLAGS_writes > kMaxOps) {
    return Usage("--writes must be 0.." + std::to_string(kMaxOps) + " (or -1 for --num)");
  }
  if (FLAGS_key_size < 1 || FLAGS_key_size > 1024) return Usage("--key_size must be 1..1024");
  const int max_key = engine->adapter.max_key_size != nullptr ? engine->adapter.max_key_size() : 0;
  if (max_key > 0 && FLAGS_key_size > max_key) {
    return Usage("--key_size=" + std::to_string(FLAGS_key_size) + " is larger than " +
                 engine->name + "'s maximum key size (" + std::to_string(max_key) + " bytes)");
  }
  if (static_cast<uint64_t>(FLAGS_num) > kvbench::KeyFormat::Capacity(FLAGS_key_size)) {
    return Usage("--key_size=" + std::to_string(FLAGS_key_size) +
                 " is too small for --num=" + std::to_string(FLAGS_num) + ": " +
                 std::to_string(FLAGS_key_size) + " bytes hold at most " +
                 std::to_string(kvbench::KeyFormat::Capacity(FLAGS_key_size)) + " keys");
  }
  if (FLAGS_value_size < 1 || FLAGS_value_size > (64 << 20)) {
    return Usage("--value_size must be 1..67108864");
  }
  // --num x (key + value) bytes is the size hint engines get; keep it far from 2^64.
  if (static_cast<double>(FLAGS_num) * (FLAGS_key_size + FLAGS_value_size) > 0x1p62) {
    return Usage("--num=" + std::to_string(FLAGS_num) + " keys of " +
                 std::to_string(FLAGS_key_size + FLAGS_value_size) +
                 " bytes is too large a database (over 2^62 bytes)");
  }
  if (!(FLAGS_compression_ratio > 0 && FLAGS_compression_ratio <= 1)) {
    return Usage("--compression_ratio must be in (0, 1]");
  }
  if (FLAGS_threads < 1 || FLAGS_threads > 1024) return Usage("--threads must be 1..1024");
  if (FLAGS_duration < 0 || FLAGS_duration > kMaxDurationSeconds) {
    return Usage("--duration must be 0.." + std::to_string(kMaxDurationSeconds) +
                 " seconds (30 days)");
  }
  if (FLAGS_seek_nexts < 0 || FLAGS_seek_nexts > kMaxSeekNexts) {
    return Usage("--seek_nexts must be 0.." + std::to_string(kMaxSeekNexts));
  }
  const double interval = FLAGS_report_interval_seconds;
  if (!(interval == 0 || (interval >= kMinInterval && interval <= kMaxInterval))) {
    return Usage("--report_interval_seconds must be 0 (no progress) or 0.01..86400, got " +
                 gflags::GetCommandLineFlagInfoOrDie("report_interval_seconds").current_value);
  }
  if (FLAGS_cache_size <= 0) return Usage("--cache_size must be positive");
  const std::string comp = FLAGS_compression;
  if (comp != "none" && comp != "snappy" && comp != "lz4" && comp != "zstd") {
    return Usage("unknown --compression '" + comp + "' (none, snappy, lz4, zstd)");
  }
  // The reference engines have no options: accepting some would suggest they had an effect.
  if (engine->reference && !FLAGS_engine_options.empty()) {
    return Usage("the " + FLAGS_engine + " engine takes no --engine_options (it is a reference " +
                 "engine)");
  }
  if (engine->reference && comp != "none") {
    return Usage("the " + FLAGS_engine + " engine does not compress (--compression=none)");
  }
  std::string db = FLAGS_db;
  if (gflags::GetCommandLineFlagInfoOrDie("db").is_default) {
    db = "/tmp/kvbench-" + std::to_string(getuid()) + "/" + FLAGS_engine;
  } else if (db.empty()) {
    return Usage("--db is empty");
  }
  if (!FLAGS_ack_file.empty()) {
    // Emptying the database would delete it from under the fill.
    std::error_code ec;
    const auto parent = std::filesystem::weakly_canonical(
        std::filesystem::absolute(FLAGS_ack_file, ec).parent_path(), ec);
    if (!ec && parent == std::filesystem::weakly_canonical(std::filesystem::absolute(db, ec), ec)) {
      return Usage("--ack_file=" + FLAGS_ack_file + " is inside --db=" + db +
                   "; put it beside the database, not in it");
    }
    struct stat st;
    if (FLAGS_ack_file.back() == '/' ||
        (::stat(FLAGS_ack_file.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
      return Usage("--ack_file=" + FLAGS_ack_file + " is a directory; give a file name");
    }
  }
  if (!FLAGS_json.empty()) {
    struct stat st;
    if (FLAGS_json.back() == '/' || (::stat(FLAGS_json.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
      return Usage("--json=" + FLAGS_json + " is a directory; give a file name");
    }
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
  c->ack_file = FLAGS_ack_file;
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
  kvbench::ReporterList reporters;
  reporters.Append(std::make_unique<kvbench::ConsoleReporter>(stdout, stderr, config.histogram));
  if (!config.json_path.empty()) {
    reporters.Append(std::make_unique<kvbench::JsonReporter>(kvbench::AtomicFile(config.json_path),
                                                             stderr));
  }
  return kvbench::RunBenchmarks(config, reporters);
}
