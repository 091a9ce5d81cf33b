// The reporters on a synthetic result: no engine, no run. What the console prints and what the
// JSON document holds come from the role's metric list; the "metrics" catalog describes it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "report/console_reporter.h"
#include "report/hgrm.h"
#include "report/hgrm_reporter.h"
#include "report/json_reporter.h"
#include "result/role_metrics.h"
#include "test_util.h"

namespace kvbench {
namespace {

using test::Contains;

// Captures what a reporter writes to a FILE*.
class Capture {
 public:
  Capture() : file_(open_memstream(&buf_, &size_)) {}
  ~Capture() {
    std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buf_, size_);
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  std::FILE* file_;
};

RoleResult Role(const char* name, bool background) {
  RoleResult r;
  r.role = name;
  r.background = background;
  r.threads = 1;
  r.ops = 1000;
  r.bytes = 116000;
  r.found = 990;
  r.not_found = 10;
  r.seconds = 0.5;
  for (uint64_t ns = 100; ns < 1100; ++ns) r.latency.Add(ns);
  r.cost.cpu_user_us_per_op = 1.25;
  r.cost.cpu_sys_us_per_op = 0.5;
  r.cost.have_io = true;
  r.cost.storage_write_kb_per_op = 0.125;
  r.series.Add({0.5, 0.5, 1000, 116000});
  r.stalls = r.series.Summarize(0.5);
  if (background) {
    r.target_bytes_per_sec = 200000;
    r.byte_stalls = r.series.Summarize(0.5, /*use_bytes=*/true);
    r.delivery.judged = true;
    r.delivery.run_seconds = 0.5;
    r.delivery.due_bytes = 100000;
    r.delivery.delivered_bytes = 116000;
    r.delivery.delivered_share = 0.996;
    r.delivery.windows = 1;
    r.delivery.slowest_window_share = 0.996;
    r.delivery.sustained = r.sustained = true;
  }
  AddRoleMetrics(&r);
  return r;
}

BenchmarkResult Result() {
  BenchmarkResult b;
  b.name = "readwhilewriting";
  b.count_note = "1000 reads total over 1 thread";
  b.roles.push_back(Role("reader", false));
  b.roles.push_back(Role("writer", true));
  b.warnings.push_back("readwhilewriting: a warning about this result");
  return b;
}

class ReporterTest : public ::testing::Test {
 protected:
  ReporterTest() {
    config_.engine = "memory";
    config_.command_line = "kvbench --benchmarks=readwhilewriting";
    env_.date_utc = "2026-01-01T00:00:00Z";
    env_.cpu_model = "Test CPU";
    env_.cpu_cores = 2;
    context_.config = &config_;
    context_.env = &env_;
    context_.engine = "memory";
    context_.reference_engine = true;
    context_.warnings = {"a run warning"};
  }

  std::string Console(bool histogram) {
    Capture out, err;
    ConsoleReporter r(out.file(), err.file(), histogram);
    r.Begin(context_);
    r.Add(Result());
    return out.text();
  }

  // The document without its line breaks and indentation: {"a": 1,"b": {"c": 2}}.
  std::string Json() {
    std::string document;
    JsonReporter r([&](const std::string& d) { return document = d, Status::OK(); }, stderr);
    EXPECT_TRUE(r.Start(context_));
    r.Begin(context_);
    r.Add(Result());
    EXPECT_TRUE(r.Finish());
    return Flat(document);
  }

  static std::string Flat(const std::string& doc) {
    std::string flat;
    for (size_t i = 0; i < doc.size(); ++i) {
      if (doc[i] != '\n') {
        flat += doc[i];
        continue;
      }
      while (i + 1 < doc.size() && doc[i + 1] == ' ') ++i;
    }
    return flat;
  }

  RunConfig config_;
  Environment env_;
  RunContext context_;
};

TEST_F(ReporterTest, ConsolePrintsTheDbBenchLineAndOneLinePerGroup) {
  const std::string text = Console(false);
  for (const char* part : {
           "readwhilewriting [reader]:     500.000 micros/op      2000 ops/sec",
           "(990 of 1000 found) [reference engine]",
           "(target 0.19 MB/s, achieved 0.22 MB/s: sustained; 99.6% of the bytes due from its "
           "first write)",
           // The writer's CPU is its own thread's; the process's is labelled as such.
           "    cost/op: own thread 0.00 us, process user 1.25 us, process sys 0.50 us, ",
           "    latency: p50 598ns  p99 1.09us  p99_9 1.10us  max 1.10us\n",
           "    cost/op: cpu user 1.25 us, cpu sys 0.50 us, own threads 0.00 us, "
           "storage read 0.000 KB, storage written 0.125 KB, syscall read 0.000 KB, "
           "syscall written 0.000 KB, voluntary cs",
           "    intervals: 1, median 2000 ops/s",
           "WARNING:    a run warning",
           "    WARNING: readwhilewriting: a warning about this result",
           // Beside the page-cache figures, so a cost the page cache hides is on the line
           // (issue 21).
           "syscall written",
       }) {
    EXPECT_TRUE(Contains(text, part));
  }
  EXPECT_TRUE(Contains(text, "CPU:        2 x Test CPU\n"))
      << "no empty parentheses when the caches are unknown";
  EXPECT_EQ(text.find("p75"), std::string::npos) << "p75 is --histogram's";
}

TEST_F(ReporterTest, CpuLineNamesTheCachesWhenKnown) {
  env_.cpu_caches = "L1d 48K, L2 1M";
  EXPECT_NE(Console(false).find("CPU:        2 x Test CPU (L1d 48K, L2 1M)\n"), std::string::npos);
}

TEST_F(ReporterTest, HistogramShowsEveryPercentile) {
  const std::string text = Console(true);
  EXPECT_TRUE(Contains(
      text,
      "p50 598ns  p75 850ns  p90 998ns  p95 1.05us  p99 1.09us  p99_9 1.10us  p99_99 1.10us"));
  EXPECT_TRUE(Contains(text, "syscall read 0.000 KB"));
}

TEST_F(ReporterTest, JsonKeepsTheRoleLayoutWithMetricsInTheirGroups) {
  const std::string doc = Json();
  for (const char* part : {
           "\"complete\": true",
           // Integers stay integers; each group is the object it always was.
           "\"background\": false,\"ops\": 1000,\"bytes\": 116000,\"seconds\": 0.5,",
           "\"latency_ns\": {\"count\": 1000,\"mean\": ",
           "\"p99\": 1091.5,",
           "\"cost\": {\"cpu_user_us_per_op\": 1.25,\"cpu_sys_us_per_op\": 0.5,",
           "\"below_half_median\": 0,\"series\": [{\"end_seconds\": 0.5,",
           "\"pacing\": {\"target_bytes_per_sec\": 200000,"
           "\"achieved_bytes_per_sec\": 232000,\"p99_exceeded_bytes_per_sec\": 232000,"
           "\"delivered_share\": 0.996,\"slowest_window_share\": 0.996,"
           "\"first_write_delay_seconds\": 0,\"run_seconds\": 0.5,\"due_bytes\": 100000,"
           "\"delivered_bytes\": 116000,\"windows\": 1,\"window_seconds\": 1,"
           "\"sustained\": true,\"held_back_by\": \"\",\"note\": \"\"}",
           "\"warnings\": [{\"message\": \"a run warning\"},"
           "{\"message\": \"readwhilewriting: a warning about this result\"}]",
       }) {
    EXPECT_TRUE(Contains(doc, part));
  }
  EXPECT_EQ(doc.find("\"pacing\""), doc.rfind("\"pacing\"")) << "only the writer is paced";
}

// --profile: the folded stacks per role in the JSON, and on the console the rate, the cost and
// each role's hottest functions by self time, named short.
TEST_F(ReporterTest, ProfileGoesIntoTheJsonAndTwoConsoleLines) {
  config_.profile.requested = config_.profile.enabled = true;
  BenchmarkResult b = Result();
  b.profile.requested = true;
  b.profile.period_ns = 2004008;
  b.profile.kernel = true;
  b.profile.seconds = 0.5;
  b.profile.collector_cpu_seconds = 0.001;
  RoleProfile reader{"reader", 1, 4, 0, {}};
  reader.stacks = {{"main;kvbench::Foo::Get(kvbench::Slice const&) const", 3},
                   {"main;std::vector<int, std::allocator<int> >::push_back(int&&)", 1}};
  b.profile.roles = {reader, RoleProfile{"background", 3, 0, 0, {}}};

  Capture out, err;
  ConsoleReporter console(out.file(), err.file(), false);
  console.Begin(context_);
  console.Add(b);
  const std::string text = out.text();
  EXPECT_TRUE(Contains(text, "Profile:    cpu-clock at 499 Hz"));
  EXPECT_TRUE(Contains(text,
                       "    profile: 8 samples/s over 0.50 s (reader 1 thread 4 samples, "
                       "background 3 threads 0 samples); collector 1.0 ms CPU (0.20% "
                       "of a CPU, "));
  EXPECT_TRUE(Contains(text,
                       "    profile reader self: 75.0% kvbench::Foo::Get, 25.0% "
                       "std::vector<>::push_back\n"));

  std::string document;
  JsonReporter json([&](const std::string& d) { return document = d, Status::OK(); }, stderr);
  ASSERT_TRUE(json.Start(context_));
  json.Begin(context_);
  json.Add(b);
  ASSERT_TRUE(json.Finish());
  const std::string doc = Flat(document);
  EXPECT_TRUE(Contains(doc,
                       "\"profile\": {\"event\": \"cpu-clock\",\"period_ns\": 2004008,"
                       "\"kernel_frames\": true,\"seconds\": 0.5,\"samples\": 4,"));
  EXPECT_TRUE(Contains(doc,
                       "{\"role\": \"reader\",\"threads\": 1,\"samples\": 4,"
                       "\"lost_samples\": 0,\"folded\": [[\"main;kvbench::Foo::Get("
                       "kvbench::Slice const&) const\", 3],"));
  EXPECT_TRUE(Contains(doc, "\"profile\": \"cpu-clock at 499 Hz"));
}

TEST_F(ReporterTest, JsonCatalogDescribesEveryRoleMetricOnce) {
  const std::string doc = Json();
  const size_t catalog = doc.find("\"metrics\": [");
  ASSERT_NE(catalog, std::string::npos) << doc;
  const std::string tail = doc.substr(catalog);
  for (const char* entry : {
           "{\"path\": \"ops_per_sec\",\"unit\": \"ops/s\",\"better\": \"higher\"}",
           "{\"path\": \"latency_ns.p99\",\"unit\": \"ns\",\"better\": \"lower\"}",
           "{\"path\": \"cost.cpu_user_us_per_op\",\"unit\": \"us/op\",\"better\": \"lower\"}",
           "\"path\": \"intervals.median_ops_per_sec\"",
           "\"path\": \"pacing.achieved_bytes_per_sec\"",
       }) {
    EXPECT_TRUE(Contains(tail, entry));
  }
  EXPECT_EQ(tail.find("\"path\": \"latency_ns.p99\""), tail.rfind("\"path\": \"latency_ns.p99\""))
      << "each path once, though two roles carry it";
  size_t n = 0;
  for (size_t at = tail.find("\"path\""); at != std::string::npos;
       at = tail.find("\"path\"", at + 1)) {
    ++n;
  }
  EXPECT_EQ(n, Result().roles[1].metrics.items().size()) << "the writer carries every metric";
}

TEST_F(ReporterTest, IncompleteDocumentSaysWhyAndKeepsWhatFinished) {
  std::string document;
  int writes = 0;
  JsonReporter r([&](const std::string& d) { return ++writes, document = Flat(d), Status::OK(); },
                 stderr);
  ASSERT_TRUE(r.Start(context_));
  r.Begin(context_);
  EXPECT_EQ(writes, 0) << "nothing is written before the run has a result";
  r.Add(Result());
  EXPECT_EQ(writes, 1);
  EXPECT_TRUE(Contains(document, "\"complete\": false"));
  EXPECT_TRUE(Contains(document, "it is still running, or it was killed"));
  r.Add(Result());
  EXPECT_EQ(writes, 1) << "rewritten at most every kRewriteSeconds";
  r.Fail("interrupted by SIGINT during readrandom");
  EXPECT_TRUE(Contains(document, "\"error\": \"interrupted by SIGINT during readrandom\""));
  EXPECT_TRUE(Contains(document, "\"benchmark\": \"readwhilewriting\""));
}

// Issue 38: a run refused before its first benchmark (a --db that is not kvbench's) replaced an
// older result at --json with an empty document. Without a result nothing is written.
TEST_F(ReporterTest, FailureBeforeAnyResultWritesNothing) {
  int writes = 0;
  JsonReporter r([&](const std::string&) { return ++writes, Status::OK(); }, stderr);
  ASSERT_TRUE(r.Start(context_));
  r.Fail("cannot open memory at /tmp/x: not a kvbench database");
  EXPECT_EQ(writes, 0);
  BenchmarkResult warmup = Result();
  warmup.warmup = true;
  r.Add(warmup);
  r.Fail("interrupted by SIGINT during readwhilewriting");
  EXPECT_EQ(writes, 0) << "a warm-up is no result";
}

TEST_F(ReporterTest, UnwritableOutputFailsStartWithoutWriting) {
  Capture err;
  int writes = 0;
  JsonReporter r(JsonOutput([&](const std::string&) { return ++writes, Status::OK(); },
                            [] { return Status::IOError("cannot write x.tmp: EROFS"); }),
                 err.file());
  EXPECT_FALSE(r.Start(context_));
  EXPECT_EQ(err.text(), "kvbench: error: cannot write x.tmp: EROFS\n");
  EXPECT_EQ(writes, 0);
}

// The .hgrm text: its rows at kvbench's percentiles hold the values Percentile reports, the last
// row and the footer the max and the count (scripts/kvbtools/core/hgrm.py writes the same text).
TEST(HgrmTest, RowsAtReportedPercentilesEqualThePercentiles) {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; v += 7) h.Add(v * 3);
  const std::string text = HgrmText(h);
  ASSERT_EQ(text.rfind("       Value     Percentile TotalCount 1/(1-Percentile)\n\n", 0), 0u);
  for (double p : {50.0, 99.0, 99.9}) {
    char want[64];
    std::snprintf(want, sizeof(want), "%12.3f %2.12f", h.Percentile(p) / 1e3, p / 100);
    EXPECT_TRUE(Contains(text, want));
  }
  char last[64];
  std::snprintf(last, sizeof(last), "%12.3f 1.000000000000 %10llu\n",
                static_cast<double>(h.max()) / 1e3, static_cast<unsigned long long>(h.count()));
  EXPECT_TRUE(Contains(text, last));
  EXPECT_TRUE(Contains(text, "#[Buckets =           57, SubBuckets     =          256]"));
  EXPECT_EQ(HgrmText(Histogram()), "");
}

TEST(HgrmTest, FileNamesTellEntriesRepeatsAndRoles) {
  BenchmarkResult r;
  r.name = "readrandom";
  EXPECT_EQ(HgrmReporter::FileName("out/rr", r, 1, "reader"), "out/rr.readrandom.reader.hgrm");
  EXPECT_EQ(HgrmReporter::FileName("out/rr", r, 2, "reader"), "out/rr.readrandom-2.reader.hgrm");
  r.repeat = 3;
  r.repeats = 5;
  EXPECT_EQ(HgrmReporter::FileName("rr", r, 1, "writer"), "rr.readrandom.r3.writer.hgrm");
}

}  // namespace
}  // namespace kvbench
