// RocksDB-specific adapter behaviour that the engine-neutral conformance suite cannot see.
#include <gtest/gtest.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <memory>
#include <string>
#include <thread>

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

}  // namespace
}  // namespace kvbench
