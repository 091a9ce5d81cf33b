// crc32c correctness: the RFC 3720 test vectors, and every implementation (plus crc32c::Extend and,
// when found, RocksDB's) against the table implementation for every length 0..4096 at every
// offset 0..7 from an 8-byte boundary. An implementation this CPU or build cannot run is skipped
// with the reason Resolve() gives.
#include "common/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/random.h"
#ifdef KVBENCH_HAVE_ROCKSDB
#include "rocksdb_crc32c.h"
#endif

namespace kvbench {
namespace {

// Bit-at-a-time crc32c straight from the definition: the reference the table one is checked
// against, so no implementation is only checked against itself.
uint32_t ReferenceExtend(uint32_t crc, const unsigned char* p, size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
  }
  return ~crc;
}

struct Candidate {
  std::string name;
  crc32c::ExtendFn fn;  // nullptr: skipped, for `why`
  std::string why;
};

std::vector<Candidate> Candidates() {
  std::vector<Candidate> out;
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  for (size_t i = 0; i < count; ++i) {
    Candidate c{impls[i].name, nullptr, ""};
    c.fn = crc32c::Resolve(impls[i], &c.why);
    out.push_back(c);
  }
  out.push_back({"extend", crc32c::Extend, ""});
#ifdef KVBENCH_HAVE_ROCKSDB
  out.push_back({"rocksdb_lib", rocksdb::crc32c::Extend, ""});
#endif
  return out;
}

class Crc32cTest : public testing::TestWithParam<Candidate> {
 protected:
  void SetUp() override {
    if (GetParam().fn == nullptr) GTEST_SKIP() << GetParam().why;
  }
  uint32_t Value(const void* p, size_t n) {
    return GetParam().fn(0, static_cast<const char*>(p), n);
  }
};

// RFC 3720 (iSCSI), appendix B.4, plus the customary "123456789" check value.
TEST_P(Crc32cTest, Rfc3720Vectors) {
  unsigned char buf[48];
  std::memset(buf, 0, 32);
  EXPECT_EQ(0x8a9136aau, Value(buf, 32)) << "32 bytes of zeros";
  std::memset(buf, 0xff, 32);
  EXPECT_EQ(0x62a8ab43u, Value(buf, 32)) << "32 bytes of 0xff";
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(0x46dd794eu, Value(buf, 32)) << "32 incrementing bytes";
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<unsigned char>(31 - i);
  EXPECT_EQ(0x113fdb5cu, Value(buf, 32)) << "32 decrementing bytes";
  const unsigned char iscsi_read[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
                                        0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(0xd9963a56u, Value(iscsi_read, 48)) << "iSCSI SCSI read (10) command PDU";
  EXPECT_EQ(0xe3069283u, Value("123456789", 9));
  EXPECT_EQ(0u, Value("", 0));
}

// Every length 0..4096 at offsets 0..7 from an 8-byte boundary, against the table
// implementation (itself checked against the bit-at-a-time reference in TableMatchesReference).
TEST_P(Crc32cTest, MatchesTableForEveryLengthAndOffset) {
  constexpr size_t kMaxLen = 4096;
  alignas(64) static unsigned char buf[kMaxLen + 64];
  Random64 rnd(42);
  for (auto& b : buf) b = static_cast<unsigned char>(rnd.Next());
  const crc32c::ExtendFn table = crc32c::Find("table")->extend;
  for (size_t offset = 0; offset < 8; ++offset) {
    const char* p = reinterpret_cast<const char*>(buf) + offset;
    for (size_t len = 0; len <= kMaxLen; ++len) {
      const uint32_t want = table(0, p, len);
      const uint32_t got = GetParam().fn(0, p, len);
      if (got != want) {
        FAIL() << GetParam().name << ": length " << len << " offset " << offset << ": got 0x"
               << std::hex << got << ", table gives 0x" << want;
      }
    }
  }
}

// Extend(Value(a), b) == Value(a + b) for split points that cross every alignment and the
// 3-stream block sizes.
TEST_P(Crc32cTest, ExtendComposes) {
  std::vector<char> data(20000);
  Random64 rnd(7);
  for (auto& c : data) c = static_cast<char>(rnd.Next());
  const crc32c::ExtendFn fn = GetParam().fn;
  for (size_t total :
       {size_t{0}, size_t{1}, size_t{100}, size_t{4096}, size_t{6200}, size_t{19999}}) {
    const uint32_t whole = fn(0, data.data(), total);
    for (size_t split = 0; split <= total; split += 1 + split / 3) {
      const uint32_t a = fn(0, data.data(), split);
      EXPECT_EQ(whole, fn(a, data.data() + split, total - split))
          << "total " << total << " split " << split;
    }
  }
}

// Names are what kvbench_micro's benchmark names are built from.
std::string Name(const testing::TestParamInfo<Candidate>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(AllImplementations, Crc32cTest, testing::ValuesIn(Candidates()), Name);

TEST(Crc32cTableTest, TableMatchesReference) {
  std::vector<unsigned char> data(1100);
  Random64 rnd(3);
  for (auto& b : data) b = static_cast<unsigned char>(rnd.Next());
  const crc32c::ExtendFn table = crc32c::Find("table")->extend;
  for (size_t offset = 0; offset < 8; ++offset) {
    uint32_t ref = 0;  // extended one byte at a time
    for (size_t len = 0; offset + len <= 1024 + 8; ++len) {
      ASSERT_EQ(ref, table(0, reinterpret_cast<const char*>(data.data() + offset), len))
          << "length " << len << " offset " << offset;
      ref = ReferenceExtend(ref, data.data() + offset + len, 1);
    }
  }
  EXPECT_EQ(ReferenceExtend(0x12345678u, data.data(), 999),
            table(0x12345678u, reinterpret_cast<const char*>(data.data()), 999));
}

TEST(Crc32cDispatchTest, ImplementationsHaveStableNames) {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  ASSERT_EQ(3u, count);
  EXPECT_STREQ("table", impls[0].name);
  EXPECT_STREQ("hw_1way", impls[1].name);
  EXPECT_STREQ("hw_3way", impls[2].name);
  EXPECT_EQ(&impls[2], crc32c::Find("hw_3way"));
  EXPECT_EQ(nullptr, crc32c::Find("no_such"));
}

// A hardware path is refused, with a reason, on a CPU without the instruction.
TEST(Crc32cDispatchTest, RefusesHardwarePathOnCpuWithoutIt) {
  crc32c::CpuFeatures none;  // no CRC32C instruction, no carry-less multiply
  crc32c::CpuFeatures crc_only;
  crc_only.crc32c = true;
  std::string why;
  EXPECT_NE(nullptr, crc32c::Resolve(*crc32c::Find("table"), none, &why));
  for (const char* name : {"hw_1way", "hw_3way"}) {
    why.clear();
    EXPECT_EQ(nullptr, crc32c::Resolve(*crc32c::Find(name), none, &why)) << name;
    EXPECT_NE(std::string::npos, why.find(name)) << why;
    EXPECT_TRUE(why.find("lacks") != std::string::npos ||
                why.find("not compiled") != std::string::npos)
        << why;
  }
  why.clear();
  EXPECT_EQ(nullptr, crc32c::Resolve(*crc32c::Find("hw_3way"), crc_only, &why));
  EXPECT_FALSE(why.empty());
}

// crc32c::Extend uses the fastest implementation that runs here, and never a refused one.
TEST(Crc32cDispatchTest, SelectedIsTheFastestUsable) {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  const crc32c::Implementation* fastest = &impls[0];
  for (size_t i = 0; i < count; ++i) {
    std::string why;
    if (crc32c::Resolve(impls[i], &why) != nullptr) fastest = &impls[i];
  }
  EXPECT_EQ(fastest, &crc32c::Selected());
}

}  // namespace
}  // namespace kvbench
