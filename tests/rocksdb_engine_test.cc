// RocksDB-specific adapter behaviour that the engine-neutral conformance suite cannot see.
#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kv/registry.h"
#include "test_util.h"

namespace kvbench {
namespace {

// Runs a Put and a Get on a fresh thread (perf state is per thread) and returns how many memtable
// lookups RocksDB's perf_context counted there.
uint64_t MemtableGetsCounted(Engine* engine, bool attach) {
  uint64_t counted = ~0ull;
  std::thread t([&] {
    std::unique_ptr<Session> session;
    ASSERT_TRUE(engine->NewSession(&session).ok());
    if (attach) session->AttachToThread();
    ASSERT_TRUE(session->Put("k", "v").ok());
    std::string v;
    ASSERT_TRUE(session->Get("k", &v).ok());
    counted = rocksdb::get_perf_context()->get_from_memtable_count;
  });
  t.join();
  return counted;
}

class RocksDBEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions o;
    o.path = dir_.path();
    o.cache_size = 8 << 20;
    ASSERT_TRUE(OpenEngine("rocksdb", o, &engine_).ok());
  }
  void TearDown() override {
    if (engine_) {
      EXPECT_TRUE(engine_->Close().ok());
    }
  }

  test::TempDir dir_;
  std::unique_ptr<Engine> engine_;
};

// db_bench runs every benchmark thread at perf level kDisable; RocksDB's default, kEnableCount,
// costs ~4% of a readrandom op. A session attached to its thread must turn counting off.
TEST_F(RocksDBEngine, AttachedSessionDisablesPerfCounting) {
  // The control: without the hook RocksDB counts, so the assertion below can fail.
  EXPECT_EQ(MemtableGetsCounted(engine_.get(), false), 1u);
  EXPECT_EQ(MemtableGetsCounted(engine_.get(), true), 0u);
}

TEST_F(RocksDBEngine, ConfigRecordsPerfLevel) {
  bool found = false;
  for (const auto& [k, v] : engine_->Config()) {
    if (k == "perf_level") found = v.rfind("disable", 0) == 0;
  }
  EXPECT_TRUE(found);
}

double MetricValue(const std::vector<EngineMetric>& metrics, const std::string& name) {
  for (const auto& m : metrics) {
    if (m.name == name) return m.value;
  }
  ADD_FAILURE() << "no engine metric " << name;
  return -1;
}

// `settle` must leave no flush or compaction behind (the state db_bench's waitforcompaction waits
// for), or the next phase's timing includes whatever is still running. Small memtables and low
// level targets make the writes below cascade through several levels of compactions.
TEST(RocksDBSettle, LeavesNoBackgroundWork) {
  test::TempDir dir;
  EngineOptions o;
  o.path = dir.path();
  o.create = true;
  o.cache_size = 8 << 20;
  o.engine_options =
      "write_buffer_size=65536;level0_file_num_compaction_trigger=2;"
      "max_bytes_for_level_base=262144;target_file_size_base=65536;max_background_jobs=2";
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(OpenEngine("rocksdb", o, &engine).ok());
  {
    std::unique_ptr<Session> session;
    ASSERT_TRUE(engine->NewSession(&session).ok());
    const std::string value(100, 'v');
    for (int i = 0; i < 30000; ++i) {
      ASSERT_TRUE(session->Put("key" + std::to_string(i * 7919 % 30000), value).ok());
    }
  }
  ASSERT_TRUE(engine->Settle().ok());
  const std::vector<EngineMetric> settled = engine->Metrics();
  EXPECT_GT(MetricValue(settled, "compaction_bytes_read"), 0) << "no compaction to wait for";
  EXPECT_EQ(MetricValue(settled, "pending_compaction_bytes"), 0);
  // Nothing the settle left pending writes anything afterwards.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::vector<EngineMetric> later = engine->Metrics();
  EXPECT_EQ(MetricValue(later, "flush_compaction_bytes_written"),
            MetricValue(settled, "flush_compaction_bytes_written"));
  EXPECT_EQ(MetricValue(later, "compaction_bytes_read"),
            MetricValue(settled, "compaction_bytes_read"));
  EXPECT_TRUE(engine->Close().ok());
}

}  // namespace
}  // namespace kvbench
