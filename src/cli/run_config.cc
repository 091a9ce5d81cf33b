#include "cli/run_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/cpu_affinity.h"
#include "common/file_output.h"
#include "common/limits.h"
#include "kv/registry.h"
#include "workload/benchmark.h"
#include "workload/keys.h"

namespace kvbench {

namespace {

Status Usage(const std::string& message) { return Status::InvalidArgument(message); }

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
// `name[W1]` (X = measured runs, W = warm-ups, either order).
Status ParseRepeatSuffix(const std::string& item, BenchmarkPlan* plan) {
  const auto open = item.find('[');
  if (open == std::string::npos) return Status::OK();
  plan->name = item.substr(0, open);
  Status malformed = Usage("malformed repeat syntax in '" + item + "' (expected name[X5-W2])");
  if (item.back() != ']') return malformed;
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
      return Usage("repeat count out of range in '" + item + "' (X: 1.." +
                   std::to_string(kMaxRepeats) + ", W: 0.." + std::to_string(kMaxRepeats) + ")");
    }
    if (repeat && n >= 1) {
      plan->repeats = static_cast<int>(n);
    } else if (warmup && n >= 0) {
      plan->warmups = static_cast<int>(n);
    } else {
      return malformed;
    }
    start = end + 1;
  }
  return Status::OK();
}

Status ParseBenchmarks(const KvbenchFlags& f, std::vector<BenchmarkPlan>* plans) {
  if (f.benchmarks.empty()) return Usage("--benchmarks is empty");
  for (const auto& item : SplitList(f.benchmarks)) {
    if (item.empty()) return Usage("empty item in --benchmarks '" + f.benchmarks + "'");
    BenchmarkPlan plan{item, f.repeats, f.warmups};
    Status s = ParseRepeatSuffix(item, &plan);
    if (!s.ok()) return s;
    if (plan.warmups + plan.repeats > kMaxRunsPerBenchmark) {
      return Usage("'" + item + "': warm-ups and repeats together must be at most " +
                   std::to_string(kMaxRunsPerBenchmark));
    }
    if (const Suite* suite = FindSuite(plan.name)) {  // each step with the item's repeats
      for (const auto& step : *suite->steps) plans->push_back({step, plan.repeats, plan.warmups});
      continue;
    }
    if (FindBenchmark(plan.name) == nullptr) {
      std::string known;
      for (const auto& b : AllBenchmarks()) known += std::string(" ") + b.name;
      for (const auto& suite : AllSuites()) known += std::string(" ") + suite.name;
      return Usage("unknown benchmark '" + plan.name + "' (known:" + known + ")");
    }
    plans->push_back(plan);
  }
  return Status::OK();
}

// --ack_file and verifyacked need each other; verifyacked reads a database that a fill earlier in
// the list or an earlier run wrote.
Status CheckAckFile(const KvbenchFlags& f, const std::vector<BenchmarkPlan>& plans) {
  bool fill_before = false, uses_ack = false;
  for (const auto& plan : plans) {
    const BenchmarkSpec* spec = FindBenchmark(plan.name);
    if (spec->checks_acks) {
      if (f.ack_file.empty()) {
        return Usage(plan.name + " needs --ack_file: the file the fill wrote with --ack_file");
      }
      if (!f.use_existing_db && !fill_before) {
        return Usage(plan.name + " reads what a fill wrote: add --use_existing_db, or run " +
                     "fillseq or fillrandom before it in --benchmarks (without it the database " +
                     "starts empty)");
      }
    }
    fill_before = fill_before || spec->acks != AckKind::kNone;
    uses_ack = uses_ack || spec->checks_acks || spec->acks != AckKind::kNone;
  }
  if (!f.ack_file.empty() && !uses_ack) {
    return Usage("--ack_file is only used by fillseq, fillrandom and verifyacked; --benchmarks='" +
                 f.benchmarks + "' has none of them");
  }
  return Status::OK();
}

Status CheckEngine(const KvbenchFlags& f, const EngineInfo** engine) {
  *engine = FindEngine(f.engine);
  if (*engine == nullptr) {
    std::string known;
    for (const auto& e : AllEngines()) known += std::string(" ") + e.name;
    return Usage("unknown engine '" + f.engine + "' (known:" + known + ")");
  }
  if (!(*engine)->compiled_in) {
    return Usage("engine '" + f.engine +
                 "' is not compiled into this kvbench: " + (*engine)->missing);
  }
  // The reference engines have no options: accepting some would suggest they had an effect.
  if ((*engine)->reference && !f.engine_options.empty()) {
    return Usage("the " + f.engine + " engine takes no --engine_options (it is a reference " +
                 "engine)");
  }
  if ((*engine)->reference && f.compression != "none") {
    return Usage("the " + f.engine + " engine does not compress (--compression=none)");
  }
  return Status::OK();
}

// Keys and values against each other, the engine and the key space.
Status CheckSizes(const KvbenchFlags& f, const EngineInfo& engine) {
  const std::string key_size = "--key_size=" + std::to_string(f.key_size);
  const int max_key = engine.adapter.max_key_size != nullptr ? engine.adapter.max_key_size() : 0;
  if (max_key > 0 && f.key_size > max_key) {
    return Usage(key_size + " is larger than " + engine.name + "'s maximum key size (" +
                 std::to_string(max_key) + " bytes)");
  }
  const uint64_t capacity = KeyFormat::Capacity(f.key_size);
  if (static_cast<uint64_t>(f.num) > capacity) {
    return Usage(key_size + " is too small for --num=" + std::to_string(f.num) + ": " +
                 std::to_string(f.key_size) + " bytes hold at most " + std::to_string(capacity) +
                 " keys");
  }
  // --num x (key + value) bytes is the size hint engines get; keep it far from 2^64.
  if (static_cast<double>(f.num) * (f.key_size + f.value_size) > kMaxDatabaseBytes) {
    return Usage("--num=" + std::to_string(f.num) + " keys of " +
                 std::to_string(f.key_size + f.value_size) +
                 " bytes is too large a database (over 2^62 bytes)");
  }
  return Status::OK();
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return path.back() == '/' || (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
}

// One file a run names besides the database: its flag, the path as given, the file it names.
struct NamedFile {
  std::string flag;
  std::string path;
  PathIdentity id;
  std::string Shown() const { return flag + "=" + path; }
};

// Whether `file` is one of the files --hgrm_prefix=`prefix` writes: PREFIX.<...>.hgrm.
bool IsHgrmFile(const PathIdentity& file, const std::string& prefix) {
  namespace fs = std::filesystem;
  const fs::path p(prefix);
  const PathIdentity dir = IdentifyPath(p.has_parent_path() ? p.parent_path().string() : ".");
  const fs::path name(file.name);
  const std::string base = p.filename().string() + ".", leaf = name.filename().string();
  return file.valid && dir.valid && name.parent_path().string() == dir.name &&
         leaf.size() > base.size() + 5 && leaf.compare(0, base.size(), base) == 0 &&
         leaf.compare(leaf.size() - 5, 5, ".hgrm") == 0;
}

// --ack_file, --json and the .hgrm files apart from each other and out of --db (emptied before a
// fill: the database's directory is kvbench's), compared by the file each path names
// (IdentifyPath: a link, a hard link or another spelling is the path itself), before anything
// runs or is written. The ack file is an output of a fill and the input of verifyacked.
Status CheckFilesApart(const KvbenchFlags& f, const std::string& db) {
  const PathIdentity database = IdentifyPath(db);
  std::vector<NamedFile> files;
  if (!f.ack_file.empty()) files.push_back({"--ack_file", f.ack_file, IdentifyPath(f.ack_file)});
  if (!f.json.empty()) files.push_back({"--json", f.json, IdentifyPath(f.json)});
  for (size_t i = 0; i < files.size(); ++i) {
    const NamedFile& file = files[i];
    if (file.id.Same(database)) return Usage(file.Shown() + " names the database, --db=" + db);
    if (file.id.Inside(database)) {
      return Usage(file.Shown() + " is inside --db=" + db +
                   "; put it beside the database, not in it");
    }
    for (size_t j = 0; j < i; ++j) {
      if (file.id.Same(files[j].id)) {
        return Usage(file.Shown() + " names the same file as " + files[j].Shown());
      }
    }
    if (!f.hgrm_prefix.empty() && IsHgrmFile(file.id, f.hgrm_prefix)) {
      return Usage(file.Shown() + " is one of the files --hgrm_prefix=" + f.hgrm_prefix +
                   " writes (" + f.hgrm_prefix + ".<benchmark>.<role>.hgrm)");
    }
  }
  if (!f.hgrm_prefix.empty()) {
    const PathIdentity file = IdentifyPath(f.hgrm_prefix + ".x.hgrm");
    if (file.Inside(database)) {
      return Usage("--hgrm_prefix=" + f.hgrm_prefix + " is inside --db=" + db +
                   "; put it beside the database, not in it");
    }
  }
  return Status::OK();
}

// --db (or its default), and the files that must not be inside it, one another or directories.
Status CheckPaths(const KvbenchFlags& f, bool db_given, std::string* db) {
  *db = db_given ? f.db : "/tmp/kvbench-" + std::to_string(getuid()) + "/" + f.engine;
  if (db->empty()) return Usage("--db is empty");
  if (!f.ack_file.empty() && IsDirectory(f.ack_file)) {
    return Usage("--ack_file=" + f.ack_file + " is a directory; give a file name");
  }
  if (!f.json.empty() && IsDirectory(f.json)) {
    return Usage("--json=" + f.json + " is a directory; give a file name");
  }
  if (!f.hgrm_prefix.empty() && f.hgrm_prefix.back() == '/') {
    return Usage("--hgrm_prefix=" + f.hgrm_prefix +
                 " ends with '/'; give the start of a file "
                 "name, e.g. " +
                 f.hgrm_prefix + "run");
  }
  return CheckFilesApart(f, *db);
}

void Fill(const KvbenchFlags& f, RunConfig* c) {
  c->engine = f.engine;
  c->use_existing_db = f.use_existing_db;
  c->engine_options.cache_size = static_cast<uint64_t>(f.cache_size);
  c->engine_options.compression = f.compression;
  c->engine_options.sync = f.sync;
  c->engine_options.engine_options = f.engine_options;
  WorkloadOptions& w = c->workload;
  w.num = static_cast<uint64_t>(f.num);
  w.reads = f.reads;
  w.writes = f.writes;
  w.key_size = f.key_size;
  w.value_size = f.value_size;
  w.compression_ratio = f.compression_ratio;
  w.seed = f.seed;
  w.duration_seconds = f.duration;
  w.threads = f.threads;
  w.seek_nexts = f.seek_nexts;
  w.latency_sample = f.latency_sample;
  w.write_rate_limit = static_cast<double>(f.benchmark_write_rate_limit);
  w.verify = f.verify;
  c->report_interval_seconds = f.report_interval_seconds;
  c->histogram = f.histogram;
  c->json_path = f.json;
  c->hgrm_prefix = f.hgrm_prefix;
  c->ack_file = f.ack_file;
}

}  // namespace

Status BuildConfig(const KvbenchFlags& f, bool db_given, int argc, char** argv, RunConfig* c) {
  const EngineInfo* engine = nullptr;
  Status s = CheckEngine(f, &engine);
  if (s.ok()) s = ParseBenchmarks(f, &c->benchmarks);
  if (s.ok()) s = CheckAckFile(f, c->benchmarks);
  if (s.ok()) s = CheckSizes(f, *engine);
  if (s.ok()) s = CheckPaths(f, db_given, &c->engine_options.path);
  if (s.ok()) s = ParsePerfCounters(f.perf_counters, &c->perf_counters);
  if (s.ok()) s = ParseCpuAffinity("cpu_affinity", f.cpu_affinity, &c->cpu_affinity);
  if (!s.ok()) return s;
  // Once, here: a kind the machine cannot count is said once, and no thread tries it again.
  if (c->perf_counters.enabled()) ProbePerfCounters(&c->perf_counters);
  c->profile.requested = f.profile;
  c->profile.hz = f.profile_hz;
  if (f.profile) ProbeProfiler(&c->profile);
  Fill(f, c);
  // A directory kvbench chose itself is its to remove; one the user named is the user's.
  c->default_db = !db_given;
  c->keep_db = f.keep_db;
  for (int i = 0; i < argc; ++i) c->command_line += (i ? " " : "") + std::string(argv[i]);
  return Status::OK();
}

}  // namespace kvbench
