// The engine-cost warnings decide from the engine's own figures whether a run measured a
// setting (dirty-eviction thrash, write stalls) rather than the engine: synthetic figures from
// the runs docs/evidence/engines.md records on each side of the line.
#include "result/engine_cost.h"

#include <gtest/gtest.h>

#include "result/pacing.h"

namespace kvbench {
namespace {

BenchmarkResult Overwrite(double evictions, double block_bytes) {
  BenchmarkResult r;
  r.name = "overwrite";
  r.seconds = 60;
  RoleResult writer;
  writer.role = "writer";
  writer.ops = 500000;
  writer.bytes = 500000ull * 116;
  r.roles.push_back(writer);
  r.engine_metrics = {
      {"cache_bytes", 48e6}, {"eviction_dirty", evictions}, {"block_written_bytes", block_bytes}};
  return r;
}

TEST(EngineWarnings, WiredTigerDirtyEvictionThrashNamesTheSetting) {
  // 256 MB cache, WiredTiger's default eviction targets: 292K dirty evictions, 7.6 GB written.
  const auto w = EngineWarnings(Overwrite(292352, 7629508608.0));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("eviction_dirty_trigger"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("overwrite: wiredtiger evicted 0.58 dirty pages per op"), std::string::npos)
      << w[0];
}

TEST(EngineWarnings, NoWarningWhenEvictionIsRareOrWritesAreFew) {
  // --memory_budget=256MB (eviction_dirty_trigger=80): 84 dirty evictions, 46 MB written.
  EXPECT_TRUE(EngineWarnings(Overwrite(84, 45891584.0)).empty());
  // Many evictions but little written (each page written once): no thrash.
  EXPECT_TRUE(EngineWarnings(Overwrite(292352, 500000.0 * 116 * 5)).empty());
  // A read-only benchmark: no data written, nothing to compare with.
  BenchmarkResult reads = Overwrite(292352, 7629508608.0);
  reads.roles[0].role = "reader";
  EXPECT_TRUE(EngineWarnings(reads).empty());
}

TEST(EngineWarnings, RocksDBStallsAboveATenthOfTheRun) {
  BenchmarkResult r = Overwrite(0, 0);
  r.engine_metrics = {{"write_stall_us", 12e6}};  // 12 s of 60
  const auto w = EngineWarnings(r);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("stalled writes for 20% of the run"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("level0_slowdown_writes_trigger"), std::string::npos) << w[0];
  r.engine_metrics = {{"write_stall_us", 3e6}};  // 5%
  EXPECT_TRUE(EngineWarnings(r).empty());
}

TEST(EngineKbPerOp, CumulativeByteFiguresOnlyPerOpOfAllRoles) {
  BenchmarkResult r = Overwrite(10, 1024.0 * 500000 * 2);
  const std::vector<EngineMetric> after = {
      {"cache_bytes", 48e6, false}, {"eviction_dirty", 10, true}, {"block_written_bytes", 0, true}};
  AddEngineKbPerOp(after, &r);
  ASSERT_EQ(r.engine_kb_per_op.size(), 1u);
  EXPECT_EQ(r.engine_kb_per_op[0].first, "block_written_kb_per_op");
  EXPECT_DOUBLE_EQ(r.engine_kb_per_op[0].second, 2.0);
}

// ---- Why a paced writer missed its target (result/pacing.h) ------------------------------------

// A writer of 116-byte writes paced at 512 KiB/s (4520 a second) over 10 s that delivered
// `share` of its bytes, with `latency_ns` per write and `cpu_wait` seconds of run-queue wait.
BenchmarkResult MissedWriter(double share, uint64_t latency_ns, double cpu_wait) {
  BenchmarkResult r;
  r.name = "fwdrangewhilewriting";
  r.seconds = 10;
  RoleResult w;
  w.role = "writer";
  w.background = true;
  w.target_bytes_per_sec = 524288;
  w.seconds = 10;
  w.delivery.judged = true;
  w.delivery.run_seconds = 10;
  w.delivery.due_bytes = 5242880;
  w.delivery.delivered_bytes = static_cast<uint64_t>(share * 5242880);
  w.delivery.delivered_share = share;
  w.bytes = w.delivery.delivered_bytes;
  w.ops = w.bytes / 116;
  for (uint64_t i = 0; i < w.ops; ++i) w.latency.Add(latency_ns);
  w.cpu_wait_seconds = cpu_wait;
  // About one voluntary context switch per write: the pacer's own sleep, the same on a writer
  // that keeps its target. It must not be read as the engine's doing.
  w.cost.voluntary_cs_per_op = 1.0;
  r.roles.push_back(w);
  return r;
}

TEST(PacingNote, CpuWaitBlamesTheMachine) {
  BenchmarkResult r = MissedWriter(0.9, 20000, 0.8);
  ExplainPacing("wiredtiger", &r);
  EXPECT_EQ(r.roles[0].held_back_by, "cpu");
  EXPECT_NE(r.roles[0].pacing_note.find("1.00 s of writing lost; it waited 0.80 s of 10.00 s for "
                                        "a CPU: the machine was busy"),
            std::string::npos)
      << r.roles[0].pacing_note;
}

TEST(PacingNote, SlowWritesBlameTheEngine) {
  // 40 ms per write against 0.22 ms between due writes: the engine's time, not the CPU's.
  BenchmarkResult r = MissedWriter(0.5, 40000000, 0.01);
  ExplainPacing("wiredtiger", &r);
  EXPECT_EQ(r.roles[0].held_back_by, "engine");
  EXPECT_NE(r.roles[0].pacing_note.find(": wiredtiger held it back"), std::string::npos)
      << r.roles[0].pacing_note;
  EXPECT_NE(r.roles[0].pacing_note.find("p99.9 40.0"), std::string::npos) << r.roles[0].pacing_note;
}

TEST(PacingNote, RocksDbWriteStallsAreEvidence) {
  BenchmarkResult r = MissedWriter(0.8, 20000, 0.0);
  r.engine_metrics = {{"write_stall_us", 1.9e6}};
  ExplainPacing("rocksdb", &r);
  EXPECT_EQ(r.roles[0].held_back_by, "engine");
  EXPECT_NE(r.roles[0].pacing_note.find("rocksdb stalled writes for 1.90 s: rocksdb held it back"),
            std::string::npos)
      << r.roles[0].pacing_note;
}

// Neither evidence: no blame, and the context switches of the pacer's sleep are no evidence.
TEST(PacingNote, WithoutEvidenceNothingIsBlamed) {
  BenchmarkResult r = MissedWriter(0.9, 20000, 0.0);
  ExplainPacing("wiredtiger", &r);
  EXPECT_EQ(r.roles[0].held_back_by, "");
  EXPECT_NE(r.roles[0].pacing_note.find("neither accounts for it"), std::string::npos)
      << r.roles[0].pacing_note;
  EXPECT_EQ(r.roles[0].pacing_note.find("held it back"), std::string::npos);
}

TEST(PacingNote, SustainedWritersGetNoNote) {
  BenchmarkResult r = MissedWriter(0.995, 20000, 5.0);
  r.roles[0].sustained = r.roles[0].delivery.sustained = true;
  ExplainPacing("wiredtiger", &r);
  EXPECT_EQ(r.roles[0].pacing_note, "");
}

TEST(PacingNote, OverrunCountsOnlyTheTimeBeyondThePace) {
  RoleResult w;
  w.ops = 400;                                           // one op in two timed (--latency_sample=2)
  for (int i = 0; i < 100; ++i) w.latency.Add(1000);     // within the pace
  for (int i = 0; i < 100; ++i) w.latency.Add(3000000);  // 2 ms beyond a 1 ms pace
  // 100 timed writes 2 ms over, and as many untimed ones: 2 x 0.2 s.
  EXPECT_NEAR(WriteOverrunSeconds(w, 0.001), 0.4, 0.01);
}

}  // namespace
}  // namespace kvbench
