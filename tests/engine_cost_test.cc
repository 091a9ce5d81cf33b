// The engine-cost warnings decide from the engine's own figures whether a run measured a
// setting (dirty-eviction thrash, write stalls) rather than the engine: synthetic figures from
// the runs docs/engines.md records on each side of the line.
#include "result/engine_cost.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kvbench
