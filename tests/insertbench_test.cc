// The Insert Benchmark's steps on every engine that stores data: the load, index build and
// inserts keep the live window and its secondary entries consistent, and the check fails, naming
// the damage, when a secondary entry or a row is broken on purpose.
#include "workload/insertbench.h"

#include <gtest/gtest.h>

#include "kv/registry.h"
#include "test_util.h"
#include "worker_harness.h"
#include "workload/benchmark.h"

namespace kvbench {
namespace {

std::vector<std::string> StorageEngines() {
  std::vector<std::string> names;
  for (const auto& e : AllEngines()) {
    if (e.compiled_in && std::string(e.name) != "null") names.push_back(e.name);
  }
  return names;
}

class InsertBenchTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Clock::Init();
    EngineOptions eo;
    eo.path = dir_.path();
    eo.expected_bytes = 64 << 20;
    ASSERT_TRUE(OpenEngine(GetParam(), eo, &engine_).ok());
    opt_.num = 2000;
    opt_.writes = 700;
    opt_.seed = 7;
  }

  // Runs one step on `threads` workers, as the runner does; the first worker error.
  Status RunStep(const char* name, int threads = 2) {
    const BenchmarkSpec* spec = FindBenchmark(name);
    EXPECT_NE(spec, nullptr) << name;
    std::shared_ptr<StepState> state;
    Status s = spec->setup(engine_.get(), opt_, &state);
    if (!s.ok()) return s;
    test::TestWorkers workers(engine_.get(), opt_, threads, 100);
    for (auto& w : workers.workers()) w->step = state.get();
    workers.Run([spec](Worker& w) { spec->work(w); });
    checked_ = mismatches_ = 0;
    Status first;
    for (auto& w : workers.workers()) {
      checked_ += w->stats.found;
      mismatches_ += w->stats.not_found;
      if (first.ok() && !w->error.ok()) first = w->error;
    }
    return first;
  }

  void Load() {
    ASSERT_TRUE(RunStep("l.i0").ok());
    ASSERT_TRUE(RunStep("l.x").ok());
    ASSERT_TRUE(RunStep("l.i1").ok());
  }

  // Counts the keys starting with `prefix`.
  uint64_t CountPrefix(char prefix) {
    std::unique_ptr<Session> s;
    EXPECT_TRUE(engine_->NewSession(&s).ok());
    auto c = s->NewCursor();
    EXPECT_TRUE(c->Seek(Slice(&prefix, 1)).ok());
    uint64_t n = 0;
    while (c->Valid() && c->key().data()[0] == prefix) {
      ++n;
      EXPECT_TRUE(c->Next().ok());
    }
    return n;
  }

  Status Apply(const WriteBatch& b) {
    std::unique_ptr<Session> s;
    EXPECT_TRUE(engine_->NewSession(&s).ok());
    return s->Write(b);
  }

  test::TempDir dir_;
  std::unique_ptr<Engine> engine_;
  WorkloadOptions opt_;
  uint64_t checked_ = 0, mismatches_ = 0;
};

TEST_P(InsertBenchTest, StepsKeepTheWindowAndItsEntries) {
  Load();
  // l.i1 inserted --writes rows and deleted as many: the window is still --num rows, each with
  // three entries, and it starts at the oldest live row.
  EXPECT_EQ(CountPrefix('p'), opt_.num);
  EXPECT_EQ(CountPrefix('x'), 3 * opt_.num);
  std::shared_ptr<StepState> state;
  ASSERT_TRUE(IbSetup(engine_.get(), opt_, &state).ok());
  EXPECT_EQ(state->lo, 700u);
  EXPECT_EQ(state->next.load(), 2700u);
  Status s = RunStep("ibcheck");
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(checked_, 4 * opt_.num);  // every row and every entry
  EXPECT_EQ(mismatches_, 0u);
}

TEST_P(InsertBenchTest, CheckFailsOnAMissingSecondaryEntry) {
  Load();
  char key[kIbSecondaryKeySize];
  const uint64_t pk = 1234;
  IbSecondaryKey(1, IbColumn(opt_.seed, pk, 1), pk, key);
  WriteBatch b;
  b.Delete(Slice(key, kIbSecondaryKeySize));
  ASSERT_TRUE(Apply(b).ok());
  Status s = RunStep("ibcheck");
  EXPECT_TRUE((s.code() == Status::Code::kCorruption)) << s.ToString();
  EXPECT_NE(s.ToString().find("1 mismatch "), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("row 1234 has no entry in index 1"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(mismatches_, 1u);
}

TEST_P(InsertBenchTest, CheckFailsOnAnEntryPointingAtNoRow) {
  Load();
  char key[kIbSecondaryKeySize];
  IbSecondaryKey(2, 42, 5, key);  // row 5 was deleted by l.i1
  WriteBatch b;
  b.Put(Slice(key, kIbSecondaryKeySize), Slice());
  ASSERT_TRUE(Apply(b).ok());
  Status s = RunStep("ibcheck", 1);
  EXPECT_TRUE((s.code() == Status::Code::kCorruption)) << s.ToString();
  EXPECT_NE(
      s.ToString().find("index 2 entry (column 000000000000002a, pk 5) points at no live row"),
      std::string::npos)
      << s.ToString();
}

TEST_P(InsertBenchTest, CheckFailsOnAMissingRow) {
  Load();
  char key[kIbPrimaryKeySize];
  IbPrimaryKey(1500, key);
  WriteBatch b;
  b.Delete(Slice(key, kIbPrimaryKeySize));
  ASSERT_TRUE(Apply(b).ok());
  Status s = RunStep("ibcheck");
  EXPECT_TRUE((s.code() == Status::Code::kCorruption)) << s.ToString();
  // The row's three entries now point at nothing, and the window has a hole.
  EXPECT_NE(s.ToString().find("rows 1500..1500 of the live window are missing"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(mismatches_, 4u);
}

TEST_P(InsertBenchTest, QueriesFindTheLiveRowsAndEntries) {
  Load();
  opt_.reads = 500;
  ASSERT_TRUE(RunStep("qp100").ok());
  EXPECT_EQ(checked_, 500u);  // no writer ran: every pick is live
  ASSERT_TRUE(RunStep("qr100").ok());
  EXPECT_EQ(checked_, 500u);  // every seek lands before some entry of a 2000-entry index
}

TEST_P(InsertBenchTest, ValueTooShortForTheColumnsIsRefused) {
  opt_.value_size = 16;
  Status s = RunStep("l.i0");
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("--value_size >= 24"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(AllEngines, InsertBenchTest, ::testing::ValuesIn(StorageEngines()),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kvbench
