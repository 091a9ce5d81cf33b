// Workload semantics: what each benchmark writes and reads, run against the memory reference
// engine, plus the key format, the permutation and the pacer.
#include "workload/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "kv/registry.h"
#include "test_util.h"
#include "worker_harness.h"
#include "workload/benchmark.h"

namespace kvbench {
namespace {

// The counters a test checks, summed over threads.
struct Counts {
  uint64_t ops = 0, found = 0, not_found = 0, entries = 0;
  Histogram latency;
};

// Runs `fn` on `threads` workers against `engine`, as the runner does (minus timing/reporting).
std::vector<Counts> RunWorkers(Engine* engine, WorkFn fn, const WorkloadOptions& o, int threads,
                               uint64_t deadline_ticks = 0) {
  test::TestWorkers harness(engine, o, threads, 1000, deadline_ticks);
  harness.Run(fn);
  const auto& workers = harness.workers();
  std::vector<Counts> out(threads);
  for (int i = 0; i < threads; ++i) {
    EXPECT_TRUE(workers[i]->error.ok()) << workers[i]->error.ToString();
    out[i].ops = workers[i]->stats.ops.load();
    out[i].found = workers[i]->stats.found;
    out[i].not_found = workers[i]->stats.not_found;
    out[i].entries = workers[i]->stats.entries;
    out[i].latency.Merge(workers[i]->stats.latency);
  }
  return out;
}

Counts Total(const std::vector<Counts>& v) {
  Counts t;
  for (const auto& s : v) {
    t.ops += s.ops;
    t.found += s.found;
    t.not_found += s.not_found;
    t.entries += s.entries;
    t.latency.Merge(s.latency);
  }
  return t;
}

class WorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Clock::Init();
    EngineOptions eo;
    eo.path = dir_.path();
    ASSERT_TRUE(OpenEngine("memory", eo, &engine_).ok());
    opt_.num = 3000;
    opt_.verify = true;  // every value read is checked in these tests
  }
  std::vector<std::string> AllKeys() {
    std::unique_ptr<Session> s;
    EXPECT_TRUE(engine_->NewSession(&s).ok());
    auto c = s->NewCursor();
    EXPECT_TRUE(c->Seek("").ok());
    std::vector<std::string> keys;
    while (c->Valid()) {
      keys.push_back(c->key().ToString());
      EXPECT_TRUE(c->Next().ok());
    }
    return keys;
  }
  test::TempDir dir_;
  std::unique_ptr<Engine> engine_;
  WorkloadOptions opt_;
};

TEST_F(WorkloadTest, FillSeqThenReadRandomFindsEveryKey) {
  const auto fill = Total(RunWorkers(engine_.get(), &FillSeq, opt_, 3));
  EXPECT_EQ(fill.ops, opt_.num);  // --num is a total, split between the threads
  const auto keys = AllKeys();
  ASSERT_EQ(keys.size(), opt_.num);
  KeyFormat kf(opt_.key_size);
  for (uint64_t i = 0; i < opt_.num; ++i) EXPECT_EQ(kf.Decode(keys[i]), i);
  opt_.reads = 20000;
  const auto read = Total(RunWorkers(engine_.get(), &ReadRandom, opt_, 2));
  EXPECT_EQ(read.ops, 20000u);
  EXPECT_EQ(read.found, 20000u);  // with verification on: every value checked too
  EXPECT_EQ(read.not_found, 0u);
  EXPECT_EQ(read.latency.count(), 20000u);
}

TEST_F(WorkloadTest, ReadRandomOnEmptyDatabaseReportsNotFound) {
  opt_.reads = 500;
  const auto read = Total(RunWorkers(engine_.get(), &ReadRandom, opt_, 1));
  EXPECT_EQ(read.found, 0u);
  EXPECT_EQ(read.not_found, 500u);
}

TEST_F(WorkloadTest, FillRandomWritesEveryKeyExactlyOnceInRandomOrder) {
  const auto fill = Total(RunWorkers(engine_.get(), &FillRandom, opt_, 2));
  EXPECT_EQ(fill.ops, opt_.num);          // num puts...
  EXPECT_EQ(AllKeys().size(), opt_.num);  // ...of num distinct keys: each exactly once
  Permutation p(opt_.num, opt_.seed);
  int in_place = 0;
  for (uint64_t i = 0; i < 100; ++i) in_place += p.At(i) == i;
  EXPECT_LT(in_place, 5);  // not sequential
}

TEST_F(WorkloadTest, OverwriteDrawsWithReplacementFromExistingRange) {
  opt_.writes = 3000;
  const auto w = Total(RunWorkers(engine_.get(), &Overwrite, opt_, 1));
  EXPECT_EQ(w.ops, 3000u);
  const size_t distinct = AllKeys().size();
  // Uniform draws with replacement: about 1 - 1/e = 63% distinct, never more than num.
  EXPECT_GT(distinct, 3000u * 55 / 100);
  EXPECT_LT(distinct, 3000u * 70 / 100);
}

TEST_F(WorkloadTest, ReadSeqStopsAtTheEndOfTheData) {
  RunWorkers(engine_.get(), &FillSeq, opt_, 1);
  opt_.reads = 4500;  // more than there is: stops after the last key, as db_bench's readseq
  const auto r = Total(RunWorkers(engine_.get(), &ReadSeq, opt_, 1));
  EXPECT_EQ(r.ops, 3000u);
  EXPECT_EQ(r.entries, 3000u);
  EXPECT_EQ(r.found, 3000u);
  opt_.reads = 1000;  // fewer: stops at the count
  EXPECT_EQ(Total(RunWorkers(engine_.get(), &ReadSeq, opt_, 1)).found, 1000u);
}

// Records the entries each cursor read after its Seek, around the real memory engine.
struct RecordingCursor : Cursor {
  RecordingCursor(std::unique_ptr<Cursor> c, std::vector<std::vector<std::string>>* log)
      : inner(std::move(c)), log(log) {}
  Status Seek(const Slice& t) override {
    log->push_back({t.ToString()});
    return inner->Seek(t);
  }
  Status Next() override { return inner->Next(); }
  bool Valid() const override { return inner->Valid(); }
  Slice key() const override { return inner->key(); }
  // The loop reads each entry's value once: log the key of every entry read.
  Slice value() const override {
    log->back().push_back(inner->key().ToString());
    return inner->value();
  }
  std::unique_ptr<Cursor> inner;
  std::vector<std::vector<std::string>>* log;
};

TEST_F(WorkloadTest, FwdRangeReadsSeekNextsOrderedKeysFromTheSeekPoint) {
  RunWorkers(engine_.get(), &FillSeq, opt_, 1);
  std::unique_ptr<Session> inner;
  ASSERT_TRUE(engine_->NewSession(&inner).ok());
  std::vector<std::vector<std::string>> log;
  struct RecordingSession : Session {
    Session* s;
    std::vector<std::vector<std::string>>* log;
    Status Put(const Slice& k, const Slice& v) override { return s->Put(k, v); }
    Status Get(const Slice& k, std::string* v) override { return s->Get(k, v); }
    Status Delete(const Slice& k) override { return s->Delete(k); }
    Status Write(const WriteBatch& b) override { return s->Write(b); }
    std::unique_ptr<Cursor> NewCursor() override {
      return std::make_unique<RecordingCursor>(s->NewCursor(), log);
    }
  } session;
  session.s = inner.get();
  session.log = &log;
  opt_.reads = 200;
  opt_.seek_nexts = 10;
  KeyFormat kf(opt_.key_size);
  ValueSource values(opt_.seed, opt_.compression_ratio, opt_.value_size);
  std::atomic<bool> stop{false};
  Worker w(0, 1, 7, &session, opt_, kf, values, &stop, 0, nullptr);
  FwdRange(w);
  ASSERT_TRUE(w.error.ok()) << w.error.ToString();
  ASSERT_EQ(log.size(), 200u);
  for (const auto& op : log) {
    const uint64_t target = kf.Decode(op[0]);
    const size_t expected = std::min<uint64_t>(10, opt_.num - target);
    ASSERT_EQ(op.size() - 1, expected) << "target " << target;
    for (size_t j = 1; j < op.size(); ++j) EXPECT_EQ(kf.Decode(op[j]), target + j - 1);
  }
  EXPECT_EQ(w.stats.found, 200u);
}

TEST_F(WorkloadTest, DurationEndsAnUnboundedLoop) {
  RunWorkers(engine_.get(), &FillSeq, opt_, 1);
  opt_.duration_seconds = 0.2;
  const uint64_t deadline = Clock::Now() + Clock::FromNanos(200'000'000);
  const auto r = Total(RunWorkers(engine_.get(), &ReadRandom, opt_, 2, deadline));
  EXPECT_GT(r.ops, 0u);  // ran, and returned: the deadline stopped a loop with no op limit
}

TEST(KeyFormatTest, BigEndianSoByteOrderIsNumericOrder) {
  KeyFormat kf(16);
  char a[16], b[16];
  kf.Encode(255, a);
  kf.Encode(256, b);
  EXPECT_LT(std::memcmp(a, b, 16), 0);
  EXPECT_EQ(std::string(a + 8, 8), "00000000");  // padded with ASCII '0', as db_bench
  EXPECT_EQ(kf.Decode(Slice(b, 16)), 256u);
  KeyFormat small(2);
  char c[2];
  small.Encode(0x1234, c);
  EXPECT_EQ(static_cast<unsigned char>(c[0]), 0x12);
  EXPECT_EQ(KeyFormat::Capacity(2), 65536u);
  EXPECT_EQ(KeyFormat::Capacity(8), UINT64_MAX);
}

TEST(PermutationTest, IsABijectionForManySizes) {
  for (uint64_t n : {1ull, 2ull, 3ull, 7ull, 64ull, 65ull, 1000ull, 1ull << 16, 1000003ull}) {
    Permutation p(n, 42);
    std::vector<bool> seen(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t k = p.At(i);
      ASSERT_LT(k, n);
      ASSERT_FALSE(seen[k]) << "n=" << n << " duplicate " << k;
      seen[k] = true;
    }
  }
}

TEST(PermutationTest, SameSeedSameOrderOtherSeedOtherOrder) {
  Permutation a(100000, 1), b(100000, 1), c(100000, 2);
  int same = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.At(i), b.At(i));
    same += a.At(i) == c.At(i);
  }
  EXPECT_LT(same, 10);
}

TEST(ValueSourceTest, SameSeedSameValuesAndRequestedSize) {
  ValueSource a(5, 0.5, 100), b(5, 0.5, 100), c(6, 0.5, 100);
  EXPECT_EQ(a.For(123).size(), 100u);
  EXPECT_EQ(a.For(123), b.For(123));
  EXPECT_NE(a.For(123), c.For(123));
  EXPECT_NE(a.For(123), a.For(124));
}

TEST(ValueGeneratorTest, CompressionRatioSetsDistinctBytesPerPiece) {
  ValueGenerator g(1, 0.25, 1 << 16);
  const std::string& d = g.buffer();
  // Each 100-byte piece repeats its first 25 bytes.
  for (size_t p = 0; p + 100 <= d.size(); p += 100) {
    ASSERT_EQ(d.substr(p, 25), d.substr(p + 25, 25));
  }
}

// A clock the test moves: sleeping advances it exactly to the wake-up time, unless `stop_at` comes
// first: then the stop flag is raised at that time and the sleep ends there.
class ManualClock : public PacerClock {
 public:
  uint64_t NowNanos() override { return now; }
  void SleepUntilNanos(uint64_t t, const std::atomic<bool>* stop) override {
    ++sleeps;
    if (stop != nullptr && stop_at != 0 && stop_at < t) {
      now = std::max(now, stop_at);
      raise->store(true);
      return;
    }
    if (t > now) now = t;
  }
  uint64_t now = 1'000'000'000;
  int sleeps = 0;
  uint64_t stop_at = 0;
  std::atomic<bool>* raise = nullptr;
};

TEST(RateLimiterTest, HoldsItsRateUnderATestClock) {
  ManualClock clock;
  RateLimiter limiter(1'000'000, &clock);  // 1 MB/s
  const uint64_t start = clock.now;
  for (int i = 0; i < 10000; ++i) limiter.Acquire(116);
  // 10000 x 116 bytes at 1e6 B/s: the last write is due at 9999 x 116 us.
  EXPECT_EQ(clock.now - start, 9999ull * 116 * 1000);
}

TEST(RateLimiterTest, SpreadsWritesEvenly) {
  ManualClock clock;
  RateLimiter limiter(2'000'000, &clock);
  limiter.Acquire(100);
  uint64_t last = clock.now;
  for (int i = 0; i < 100; ++i) {
    limiter.Acquire(100);
    EXPECT_EQ(clock.now - last, 50'000u);  // 100 B at 2 MB/s: one write every 50 us, no bursts
    last = clock.now;
  }
}

TEST(RateLimiterTest, CatchUpAfterAStallIsBounded) {
  ManualClock clock;
  RateLimiter limiter(1'000'000, &clock, /*max_credit_ns=*/10'000'000);
  limiter.Acquire(1000);
  clock.now += 5'000'000'000ull;  // the engine stalled the writer for 5 s
  const uint64_t resumed = clock.now;
  int immediate = 0;
  for (int i = 0; i < 100 && clock.now == resumed; ++i, ++immediate) limiter.Acquire(1000);
  // 10 ms of credit at 1 MB/s = 10 KB = 10 writes of 1000 B without waiting, not 5 s worth.
  EXPECT_LE(immediate, 12);
}

TEST(RateLimiterTest, DoesNotStartAWaitThatEndsAfterTheDeadline) {
  ManualClock clock;
  RateLimiter limiter(100, &clock);  // 100 B/s: 4016 bytes are due 40 s after the last ones
  limiter.StopAt(clock.now + 5'000'000'000ull);  // --duration=5
  EXPECT_TRUE(limiter.Acquire(4016));            // the first write is due at once
  const uint64_t before = clock.now;
  EXPECT_FALSE(limiter.Acquire(4016));  // due at +40 s, past the deadline: no wait at all
  EXPECT_EQ(clock.now, before);
  EXPECT_EQ(clock.sleeps, 0);
}

TEST(RateLimiterTest, WaitsThatEndBeforeTheDeadlineStillHappen) {
  ManualClock clock;
  RateLimiter limiter(1000, &clock);
  const uint64_t start = clock.now;
  limiter.StopAt(start + 1'000'000'000ull);
  int writes = 0;
  while (limiter.Acquire(100)) ++writes;
  EXPECT_EQ(writes, 11);  // at 0, 0.1, ..., 1.0 s: the rate holds right up to the deadline
  EXPECT_LE(clock.now, start + 1'000'000'000ull);
}

TEST(RateLimiterTest, StopEndsAWaitEarly) {
  ManualClock clock;
  std::atomic<bool> stop{false};
  clock.raise = &stop;
  clock.stop_at = clock.now + 2'000'000'000ull;  // the readers finish 2 s in
  RateLimiter limiter(1, &clock);                // 1 B/s, no deadline
  limiter.StopWhen(&stop);
  EXPECT_TRUE(limiter.Acquire(4016));
  EXPECT_FALSE(limiter.Acquire(4016));  // would wait 4016 s; the stop ends it at 2 s
  EXPECT_EQ(clock.now, clock.stop_at);
  EXPECT_FALSE(limiter.Acquire(1));  // and once stopped, it never waits again
}

TEST(RateLimiterTest, SystemClockSeesTheStopFlagWhileAsleep) {
  Clock::Init();
  std::atomic<bool> stop{false};
  RateLimiter limiter(1, SystemPacerClock());  // 1 B/s: the second write is due in 1000 s
  limiter.StopWhen(&stop);
  ASSERT_TRUE(limiter.Acquire(1000));
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  const uint64_t t0 = Clock::MonotonicNanos();
  EXPECT_FALSE(limiter.Acquire(1000));
  stopper.join();
  EXPECT_LT(Clock::MonotonicNanos() - t0, 30'000'000'000ull);  // woke for the stop, not at 1000 s
}

TEST(BenchmarkTableTest, EveryRowIsConsistent) {
  for (const auto& b : AllBenchmarks()) {
    SCOPED_TRACE(b.name);
    EXPECT_EQ(FindBenchmark(b.name), &b);
    EXPECT_EQ(b.work == nullptr, b.role == Role::kNone);
    EXPECT_EQ(b.work == nullptr, b.count == OpCount::kNone);
    if (b.fresh_db) {
      EXPECT_EQ(b.count, OpCount::kNum) << "a fill writes the --num keys";
    }
    if (b.setup == nullptr) {  // insertbench's index build and check are bounded passes
      EXPECT_EQ(b.fresh_db, b.count == OpCount::kNum) << "fills, and only fills, start empty";
    }
    EXPECT_EQ(b.checks_acks, b.count == OpCount::kAcked);
    if (b.background != nullptr) {
      EXPECT_EQ(b.role, Role::kReader);
    }
  }
  EXPECT_EQ(FindBenchmark("nosuch"), nullptr);
}

TEST(BenchmarkTableTest, CountsAndNotes) {
  WorkloadOptions o;
  o.num = 1000;
  o.reads = 50;
  o.threads = 2;
  const BenchmarkSpec& fill = *FindBenchmark("fillseq");
  const BenchmarkSpec& read = *FindBenchmark("readwhilewriting");
  const BenchmarkSpec& verify = *FindBenchmark("verifyacked");
  EXPECT_EQ(fill.MainCount(o, 0), 1000u);
  EXPECT_EQ(read.MainCount(o, 0), 50u);
  EXPECT_EQ(FindBenchmark("overwrite")->MainCount(o, 0), 1000u) << "--writes -1 = --num";
  EXPECT_EQ(verify.MainCount(o, 7), 7u);
  EXPECT_EQ(fill.CountNote(o, 0), "1000 keys total over 2 threads");
  EXPECT_EQ(verify.CountNote(o, 7), "7 acknowledged writes total over 2 threads");
  o.duration_seconds = 3;
  EXPECT_EQ(fill.CountNote(o, 0), "1000 keys total over 2 threads, or until --duration=3.000s");
  EXPECT_EQ(read.CountNote(o, 0),
            "50 reads total over 2 threads, ignored: runs for --duration=3.000s; plus 1 paced "
            "writer thread");
  EXPECT_TRUE(fill.Bounded());
  EXPECT_FALSE(read.Bounded());
  EXPECT_STREQ(RoleName(read.role), "reader");
  EXPECT_STREQ(RoleName(fill.role), "writer");
}

}  // namespace
}  // namespace kvbench
