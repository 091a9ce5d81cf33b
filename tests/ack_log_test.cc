// The --ack_file log: what a fill publishes is what verifyacked reads back, and anything that is
// not a whole log written for the same keys and values is refused.
#include "workload/ack_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "kv/registry.h"
#include "test_util.h"
#include "workload/workload.h"

namespace kvbench {
namespace {

WorkloadOptions Options() {
  WorkloadOptions o;
  o.num = 1000;
  o.threads = 3;
  o.key_size = 16;
  o.value_size = 100;
  o.compression_ratio = 0.5;
  o.seed = 7;
  return o;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(AckLogTest, CountsAndHeaderSurviveTheWriter) {
  test::TempDir dir;
  const std::string path = dir.path() + "/acks";
  const WorkloadOptions o = Options();
  {
    std::unique_ptr<AckLog> log;
    ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillRandom, o), &log).ok());
    log->Slot(0)->Publish(333);
    log->Slot(2)->Publish(12);
    // The writer's mapping goes away without any sync or close call, as after a SIGKILL.
  }
  std::unique_ptr<AckLog> read;
  Status s = AckLog::Open(path, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const AckHeader& h = read->header();
  EXPECT_EQ(h.kind, AckKind::kFillRandom);
  EXPECT_EQ(h.num, 1000u);
  EXPECT_EQ(h.seed, 7u);
  EXPECT_EQ(h.threads, 3u);
  EXPECT_EQ(h.key_size, 16u);
  EXPECT_EQ(h.value_size, 100u);
  EXPECT_EQ(h.compression_ratio, 0.5);
  EXPECT_EQ(read->Slot(0)->Load(), 333u);
  EXPECT_EQ(read->Slot(1)->Load(), 0u);
  EXPECT_EQ(read->Slot(2)->Load(), 12u);
  EXPECT_EQ(read->TotalAcknowledged(), 345u);
  EXPECT_TRUE(read->CheckMatches(o).ok());
  EXPECT_EQ(ReadAll(path).size(), AckLog::kHeaderSize + 3 * 64);
  EXPECT_FALSE(std::ifstream(path + ".tmp").good());
}

TEST(AckLogTest, ALinkIsFollowedAndKeptAndAFifoIsRefused) {
  test::TempDir dir;
  const std::string link = dir.path() + "/acks";
  ASSERT_EQ(symlink("acks-target", link.c_str()), 0);
  std::unique_ptr<AckLog> log;
  ASSERT_TRUE(AckLog::Create(link, AckHeader::For(AckKind::kFillSeq, Options()), &log).ok());
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ReadAll(dir.path() + "/acks-target").size(), AckLog::kHeaderSize + 3 * 64);
  const std::string fifo = dir.path() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Status s = AckLog::Create(fifo, AckHeader::For(AckKind::kFillSeq, Options()), &log);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not a regular file"), std::string::npos) << s.message();
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(AckLogTest, AReaderSeesCountsWhileTheWriterRuns) {
  test::TempDir dir;
  const std::string path = dir.path() + "/acks";
  std::unique_ptr<AckLog> writer, reader;
  ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillSeq, Options()), &writer).ok());
  ASSERT_TRUE(AckLog::Open(path, &reader).ok());
  EXPECT_EQ(reader->Slot(1)->Load(), 0u);
  writer->Slot(1)->Publish(5);
  EXPECT_EQ(reader->Slot(1)->Load(), 5u);  // the same page of the page cache
}

TEST(AckLogTest, CreateStartsAgainFromZero) {
  test::TempDir dir;
  const std::string path = dir.path() + "/acks";
  std::unique_ptr<AckLog> log;
  ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillSeq, Options()), &log).ok());
  log->Slot(0)->Publish(300);
  log.reset();
  WorkloadOptions one = Options();
  one.threads = 1;
  ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillSeq, one), &log).ok());
  log.reset();
  ASSERT_TRUE(AckLog::Open(path, &log).ok());
  EXPECT_EQ(log->header().threads, 1u);
  EXPECT_EQ(log->TotalAcknowledged(), 0u);
}

TEST(AckLogTest, MismatchedFlagsAreNamedWithBothValues) {
  test::TempDir dir;
  const std::string path = dir.path() + "/acks";
  std::unique_ptr<AckLog> log;
  ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillRandom, Options()), &log).ok());
  const std::vector<std::pair<void (*)(WorkloadOptions*), std::string>> cases = {
      {[](WorkloadOptions* o) { o->num = 2000; }, "--num=1000 (this run: 2000)"},
      {[](WorkloadOptions* o) { o->threads = 2; }, "--threads=3 (this run: 2)"},
      {[](WorkloadOptions* o) { o->key_size = 20; }, "--key_size=16 (this run: 20)"},
      {[](WorkloadOptions* o) { o->value_size = 10; }, "--value_size=100 (this run: 10)"},
      {[](WorkloadOptions* o) { o->compression_ratio = 0.25; },
       "--compression_ratio=0.5 (this run: 0.25)"},
      {[](WorkloadOptions* o) { o->seed = 8; }, "--seed=7 (this run: 8)"},
  };
  for (const auto& [change, message] : cases) {
    WorkloadOptions o = Options();
    change(&o);
    Status s = log->CheckMatches(o);
    EXPECT_TRUE(s.IsInvalidArgument()) << message;
    EXPECT_NE(s.message().find("was written by fillrandom with " + message), std::string::npos)
        << s.message();
  }
}

TEST(AckLogTest, RefusesWhatIsNotAWholeAckFile) {
  test::TempDir dir;
  const std::string path = dir.path() + "/acks";
  std::unique_ptr<AckLog> log;
  EXPECT_EQ(AckLog::Open(path, &log).code(), Status::Code::kIOError);  // missing
  ASSERT_TRUE(AckLog::Create(path, AckHeader::For(AckKind::kFillSeq, Options()), &log).ok());
  log.reset();
  const std::string good = ReadAll(path);

  auto expect_corrupt = [&](const std::string& bytes, const std::string& message) {
    WriteAll(path, bytes);
    std::unique_ptr<AckLog> l;
    Status s = AckLog::Open(path, &l);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << message;
    EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
    EXPECT_EQ(l, nullptr);
  };
  expect_corrupt("", "not a kvbench ack file (no KVBACK header)");
  expect_corrupt(std::string(200, 'x'), "not a kvbench ack file (no KVBACK header)");
  expect_corrupt(good.substr(0, good.size() - 64), "a header for 3 threads needs 256");
  std::string bad = good;
  bad[8] = 2;  // version
  expect_corrupt(bad, "of version 1 (version 2)");
  bad = good;
  bad[12] = 9;  // kind
  expect_corrupt(bad, "(kind 9,");
  // Thread 1's share of 1000 keys over 3 threads is [333, 666): 333 keys.
  bad = good;
  const uint64_t too_many = 334;
  bad.replace(AckLog::kHeaderSize + 64, sizeof(too_many),
              std::string(reinterpret_cast<const char*>(&too_many), sizeof(too_many)));
  expect_corrupt(bad, "thread 1 claims 334 acknowledged writes, more than its share of 333");
}

}  // namespace
}  // namespace kvbench
