// One conformance suite, run against every engine compiled into this build (the `null`
// reference engine, which stores nothing by design, has its own small test at the end).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "kv/database_dir.h"
#include "kv/registry.h"
#include "test_util.h"

namespace kvbench {
namespace {

std::vector<std::string> StorageEngines() {
  std::vector<std::string> names;
  for (const auto& e : AllEngines()) {
    if (e.compiled_in && std::string(e.name) != "null") {
      names.push_back(e.name);
    }
  }
  return names;
}

std::string Key(int i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "key%08d", i);
  return buf;
}

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { ASSERT_TRUE(Open(true).ok()); }
  void TearDown() override {
    session_.reset();
    if (engine_) {
      EXPECT_TRUE(engine_->Close().ok());
    }
  }
  Status Open(bool create) {
    session_.reset();
    if (engine_) {
      Status s = engine_->Close();
      if (!s.ok()) return s;
      engine_.reset();
    }
    EngineOptions o;
    o.path = dir_.path();
    o.create = create;
    o.cache_size = 8 << 20;
    o.expected_bytes = 64 << 20;
    Status s = OpenEngine(GetParam(), o, &engine_);
    if (!s.ok()) return s;
    return engine_->NewSession(&session_);
  }
  std::string Get(const std::string& k) {
    std::string v;
    Status s = session_->Get(k, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    EXPECT_TRUE(s.ok()) << s.ToString();
    return v;
  }
  std::vector<std::string> ScanKeys(const std::string& from, int n) {
    std::vector<std::string> keys;
    auto c = session_->NewCursor();
    EXPECT_TRUE(c->Seek(from).ok());
    while (c->Valid() && static_cast<int>(keys.size()) < n) {
      keys.push_back(c->key().ToString());
      EXPECT_TRUE(c->Next().ok());
    }
    return keys;
  }

  test::TempDir dir_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Session> session_;
};

TEST_P(Conformance, NameAndVersionAndConfig) {
  EXPECT_EQ(engine_->Name(), GetParam());
  EXPECT_FALSE(engine_->Version().empty());
  EXPECT_FALSE(engine_->Config().empty());
}

TEST_P(Conformance, PutThenGet) {
  ASSERT_TRUE(session_->Put("a", "1").ok());
  ASSERT_TRUE(session_->Put("b", "22").ok());
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "22");
}

TEST_P(Conformance, MissingKeyIsNotFound) {
  EXPECT_EQ(Get("absent"), "NOT_FOUND");
  ASSERT_TRUE(session_->Put("present", "x").ok());
  EXPECT_EQ(Get("absen"), "NOT_FOUND");
  EXPECT_EQ(Get("presentt"), "NOT_FOUND");
}

TEST_P(Conformance, OverwriteReplacesValue) {
  ASSERT_TRUE(session_->Put("k", "old value").ok());
  ASSERT_TRUE(session_->Put("k", "new").ok());
  EXPECT_EQ(Get("k"), "new");
}

TEST_P(Conformance, DeleteRemovesAndAbsentDeleteIsOk) {
  ASSERT_TRUE(session_->Put("k", "v").ok());
  ASSERT_TRUE(session_->Delete("k").ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_TRUE(session_->Delete("never-written").ok());
}

TEST_P(Conformance, BinaryKeysAndValuesRoundTrip) {
  const std::string k("\x00\x01\xff\x00z", 5), v("\x00\xfe\x00\x7f", 4);
  ASSERT_TRUE(session_->Put(k, v).ok());
  EXPECT_EQ(Get(k), v);
  EXPECT_EQ(Get(std::string("\x00\x01\xff", 3)), "NOT_FOUND");
}

TEST_P(Conformance, LargeValueRoundTrips) {
  std::string v(1 << 20, 'x');
  for (size_t i = 0; i < v.size(); i += 97) v[i] = static_cast<char>(i);
  ASSERT_TRUE(session_->Put("big", v).ok());
  EXPECT_EQ(Get("big"), v);
}

TEST_P(Conformance, CursorScansInByteOrderFromSeekPoint) {
  std::vector<int> order(500);
  for (int i = 0; i < 500; ++i) order[i] = (i * 7919) % 500;  // a shuffled insert order
  for (int i : order) ASSERT_TRUE(session_->Put(Key(i), "v" + std::to_string(i)).ok());
  const auto keys = ScanKeys(Key(100), 50);
  ASSERT_EQ(keys.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(keys[i], Key(100 + i));
  auto c = session_->NewCursor();
  ASSERT_TRUE(c->Seek(Key(250)).ok());
  ASSERT_TRUE(c->Valid());
  EXPECT_EQ(c->value().ToString(), "v250");
}

TEST_P(Conformance, SeekBetweenKeysLandsOnNextAndPastEndIsInvalid) {
  for (int i = 0; i < 10; i += 2) ASSERT_TRUE(session_->Put(Key(i), "v").ok());
  auto keys = ScanKeys(Key(3), 10);
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys[0], Key(4));
  EXPECT_EQ(keys[2], Key(8));
  auto c = session_->NewCursor();
  ASSERT_TRUE(c->Seek(Key(9)).ok());
  EXPECT_FALSE(c->Valid());
}

TEST_P(Conformance, CursorOnEmptyDatabaseIsInvalid) {
  auto c = session_->NewCursor();
  ASSERT_TRUE(c->Seek("").ok());
  EXPECT_FALSE(c->Valid());
}

TEST_P(Conformance, WriteBatchAppliesPutsAndDeletesInOrder) {
  ASSERT_TRUE(session_->Put("gone", "x").ok());
  WriteBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  b.Delete("gone");
  b.Put("a", "3");
  ASSERT_TRUE(session_->Write(b).ok());
  EXPECT_EQ(Get("a"), "3");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("gone"), "NOT_FOUND");
}

TEST_P(Conformance, ReopenKeepsData) {
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(session_->Put(Key(i), std::to_string(i)).ok());
  ASSERT_TRUE(session_->Delete(Key(5)).ok());
  ASSERT_TRUE(engine_->Settle().ok());
  ASSERT_TRUE(Open(/*create=*/false).ok());
  EXPECT_EQ(Get(Key(0)), "0");
  EXPECT_EQ(Get(Key(999)), "999");
  EXPECT_EQ(Get(Key(5)), "NOT_FOUND");
  EXPECT_EQ(ScanKeys("", 2000).size(), 999u);
}

TEST_P(Conformance, OpenExistingOnEmptyDirectoryFails) {
  session_.reset();
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  test::TempDir empty;
  EngineOptions o;
  o.path = empty.path();
  o.create = false;
  std::unique_ptr<Engine> e;
  Status s = OpenEngine(GetParam(), o, &e);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find(empty.path()), std::string::npos) << s.ToString();
}

TEST_P(Conformance, SettleAndSizeOnDisk) {
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(session_->Put(Key(i), std::string(100, 'v')).ok());
  ASSERT_TRUE(engine_->Settle().ok());
  if (GetParam() != "memory") {
    EXPECT_GT(engine_->SizeOnDisk(), 2000u * 100 / 4);
  }
}

TEST_P(Conformance, OneSessionPerThreadConcurrently) {
  constexpr int kThreads = 4, kPerThread = 2000;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<Session> s;
      if (!engine_->NewSession(&s).ok()) {
        ++failures;
        return;
      }
      std::string v;
      for (int i = 0; i < kPerThread; ++i) {
        const std::string k = Key(t * kPerThread + i);
        if (!s->Put(k, k).ok()) ++failures;
        if (!s->Get(k, &v).ok() || v != k) ++failures;
        if (i % 100 == 0) {  // a reader's cursor while the others write
          auto c = s->NewCursor();
          if (!c->Seek(Key(0)).ok()) ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ScanKeys("", kThreads * kPerThread + 10).size(),
            static_cast<size_t>(kThreads * kPerThread));
}

// The runner's pattern: sessions are opened on the main thread, then each is attached to and
// used by its own worker thread.
TEST_P(Conformance, SessionsOpenedOnOneThreadWorkOnTheirWorkers) {
  constexpr int kThreads = 3, kPerThread = 500;
  std::vector<std::unique_ptr<Session>> sessions(kThreads);
  for (auto& s : sessions) ASSERT_TRUE(engine_->NewSession(&s).ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session* s = sessions[t].get();
      s->AttachToThread();
      std::string v;
      for (int i = 0; i < kPerThread; ++i) {
        const std::string k = Key(t * kPerThread + i);
        if (!s->Put(k, k).ok()) ++failures;
        if (!s->Get(k, &v).ok() || v != k) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  sessions.clear();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(ScanKeys("", kThreads * kPerThread + 10).size(),
            static_cast<size_t>(kThreads * kPerThread));
}

INSTANTIATE_TEST_SUITE_P(AllEngines, Conformance, ::testing::ValuesIn(StorageEngines()),
                         [](const auto& info) { return info.param; });

TEST(Registry, UnknownAndMissingEnginesAreReportedByName) {
  EngineOptions o;
  std::unique_ptr<Engine> e;
  Status s = OpenEngine("nosuchengine", o, &e);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("nosuchengine"), std::string::npos);
  for (const auto& info : AllEngines()) {
    if (info.compiled_in) continue;
    s = OpenEngine(info.name, o, &e);
    EXPECT_TRUE(s.IsNotSupported()) << info.name;
  }
}

TEST(Registry, RefusesToEmptyForeignDirectory) {
  test::TempDir dir;
  std::FILE* f = std::fopen((dir.path() + "/precious.txt").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Status s = PrepareNewDatabase(dir.path(), "memory");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/precious.txt"));
}

TEST(DatabaseLock, SecondLockerIsRefusedWithTheHoldersPid) {
  test::TempDir dir;
  const std::string db = dir.path() + "/db";
  std::unique_ptr<DatabaseLock> first, second;
  ASSERT_TRUE(DatabaseLock::Acquire(db, /*create=*/true, &first).ok());
  ASSERT_NE(first, nullptr);
  // flock locks belong to the open file description: a second open in the same process conflicts
  // as another process's would.
  Status s = DatabaseLock::Acquire(db, /*create=*/true, &second);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("in use by another kvbench (pid " + std::to_string(getpid()) + ")"),
            std::string::npos)
      << s.ToString();
  first.reset();
  EXPECT_TRUE(DatabaseLock::Acquire(db, /*create=*/true, &second).ok());
}

TEST(DatabaseLock, LockFileSurvivesEmptyingAndIsNotCountedAsData) {
  test::TempDir dir;
  const std::string db = dir.path() + "/db";
  std::unique_ptr<DatabaseLock> lock;
  ASSERT_TRUE(DatabaseLock::Acquire(db, /*create=*/true, &lock).ok());
  ASSERT_TRUE(PrepareNewDatabase(db, "null").ok());  // a directory with only the lock is empty
  EXPECT_TRUE(std::filesystem::exists(db + "/" + kLockFile));
  EngineOptions eo;
  eo.path = db;
  std::unique_ptr<Engine> engine;
  ASSERT_TRUE(OpenEngine("null", eo, &engine).ok());
  std::filesystem::remove(db + "/" + kDatabaseMarker);
  std::filesystem::remove(db + "/NULL-ENGINE");
  EXPECT_EQ(engine->SizeOnDisk(), 0u);  // only the lock file (with a pid in it) is left
}

TEST(DatabaseLock, ForeignDirectoryGetsNoLockFile) {
  test::TempDir dir;
  std::FILE* f = std::fopen((dir.path() + "/thesis.tex").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  std::unique_ptr<DatabaseLock> lock;
  EXPECT_FALSE(DatabaseLock::Acquire(dir.path(), /*create=*/true, &lock).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/" + kLockFile));
}

TEST(Registry, ExistingDatabaseMustMatchEngine) {
  test::TempDir dir;
  ASSERT_TRUE(PrepareNewDatabase(dir.path(), "memory").ok());
  EXPECT_TRUE(CheckExistingDatabase(dir.path(), "memory").ok());
  EXPECT_FALSE(CheckExistingDatabase(dir.path(), "rocksdb").ok());
  ASSERT_TRUE(PrepareNewDatabase(dir.path(), "null").ok());  // a kvbench dir may be reused
}

TEST(NullEngine, StoresNothing) {
  test::TempDir dir;
  EngineOptions o;
  o.path = dir.path();
  std::unique_ptr<Engine> e;
  ASSERT_TRUE(OpenEngine("null", o, &e).ok());
  std::unique_ptr<Session> s;
  ASSERT_TRUE(e->NewSession(&s).ok());
  EXPECT_TRUE(s->Put("k", "v").ok());
  std::string v;
  EXPECT_TRUE(s->Get("k", &v).IsNotFound());
  auto c = s->NewCursor();
  EXPECT_TRUE(c->Seek("").ok());
  EXPECT_FALSE(c->Valid());
}

}  // namespace
}  // namespace kvbench
