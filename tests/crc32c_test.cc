// crc32c correctness: the RFC 3720 test vectors; every implementation (plus crc32c::Extend and,
// when found, RocksDB's and ISA-L's) against the table implementation for every length 0..4096 at
// random alignments and initial values; the folding constants against two independent
// derivations; dispatch: a kernel is refused, with its reason, on a CPU without what it needs; and
// Extend()'s choice: the fastest per size class by measured rates, or the kernel KVBENCH_CRC32C
// forces, refused with the list when unknown or unrunnable.
// An implementation this CPU or build cannot run is skipped with the reason Resolve() gives.
#include "crc32c/crc32c.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "common/random.h"
#include "crc32c/crc32c_fold.h"
#ifdef KVBENCH_HAVE_ISAL
#include "isal_crc32c.h"
#endif
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

// How gtest prints a parameter, and so what `--gtest_list_tests` and the ctest names show:
// the name, not the struct's bytes (which hold pointers and change between builds).
void PrintTo(const Candidate& c, std::ostream* os) { *os << c.name; }

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
#ifdef KVBENCH_HAVE_ISAL
  out.push_back({"isal", IsalExtend, ""});
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

// Every length 0..4096, each at three random offsets 0..63 from a 64-byte boundary (so wide
// loads split cache lines in every way) and from a random initial crc, against the table
// implementation (itself checked against the bit-at-a-time reference in TableMatchesReference).
TEST_P(Crc32cTest, MatchesTableForEveryLengthAtRandomAlignment) {
  constexpr size_t kMaxLen = 4096;
  alignas(64) static unsigned char buf[kMaxLen + 64];
  Random64 rnd(42);
  for (auto& b : buf) b = static_cast<unsigned char>(rnd.Next());
  const crc32c::ExtendFn table = crc32c::Find("table")->extend;
  for (size_t len = 0; len <= kMaxLen; ++len) {
    for (int trial = 0; trial < 3; ++trial) {
      const size_t offset = rnd.Uniform(64);
      const uint32_t init = static_cast<uint32_t>(rnd.Next());
      const char* p = reinterpret_cast<const char*>(buf) + offset;
      const uint32_t want = table(init, p, len);
      const uint32_t got = GetParam().fn(init, p, len);
      if (got != want) {
        FAIL() << GetParam().name << ": length " << len << " offset " << offset << " init 0x"
               << std::hex << init << ": got 0x" << got << ", table gives 0x" << want;
      }
    }
  }
}

// Extend(Value(a), b) == Value(a + b) for split points that cross every alignment, the 3-stream
// block sizes and the folding steps.
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

// x^n mod P by square-and-multiply (what the folding constants are made of) against multiplying
// by x one step at a time, for every exponent up to beyond the largest fold distance.
TEST(Crc32cFoldConstantsTest, PowersMatchStepByStep) {
  uint32_t v = 0x80000000u;  // x^0, reflected
  for (uint64_t n = 0; n < 8192; ++n) {
    ASSERT_EQ(v, crc32c::internal::XPowModP(n)) << "x^" << n;
    v = crc32c::internal::MulX(v);
  }
}

// The same powers from a third, independent route: the crc register (no inversions) of a message
// that is a single 1 bit followed by zeros, m bits in all, is x^(m-1) * x^32 mod P. Computed with
// the bit-at-a-time reference.
TEST(Crc32cFoldConstantsTest, PowersMatchTheCrcOfASingleBit) {
  std::vector<unsigned char> msg(600, 0);
  msg[0] = 0x01;  // the first message bit (reflected: bit 0 of byte 0)
  for (size_t bytes = 1; bytes <= msg.size(); ++bytes) {
    const uint32_t reg = ~ReferenceExtend(0xffffffffu, msg.data(), bytes);
    ASSERT_EQ(reg, crc32c::internal::XPowModP(8 * bytes + 31)) << bytes << " bytes";
  }
}

TEST(Crc32cDispatchTest, ImplementationsHaveStableNames) {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i) names.push_back(impls[i].name);
#if defined(__x86_64__)
  const std::vector<std::string> want = {"table",    "hw_1way",  "hw_3way",
                                         "fold_256", "fold_512", "fusion_512"};
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
  const std::vector<std::string> want = {"table", "hw_1way", "hw_3way", "fold_pmull", "fold_eor3"};
#else
  const std::vector<std::string> want = {"table", "hw_1way", "hw_3way"};
#endif
  EXPECT_EQ(want, names);
  EXPECT_EQ(&impls[2], crc32c::Find("hw_3way"));
  EXPECT_EQ(nullptr, crc32c::Find("no_such"));
}

// Every kernel is refused, naming what is missing, on a CPU that lacks any one feature it needs,
// and accepted on a CPU that has them all (if this build contains it).
TEST(Crc32cDispatchTest, RefusesEachKernelOnACpuWithoutOneOfItsFeatures) {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  for (size_t i = 0; i < count; ++i) {
    const crc32c::Implementation& impl = impls[i];
    crc32c::CpuFeatures all;
    all.has = ~0u;
    std::string why;
    EXPECT_EQ(impl.extend, crc32c::Resolve(impl, all, &why)) << impl.name << ": " << why;
    if (impl.extend == nullptr) {
      EXPECT_NE(std::string::npos, why.find("not compiled")) << why;
      continue;
    }
    for (unsigned bit = 1; bit != 0; bit <<= 1) {
      if ((impl.needs & bit) == 0) continue;
      crc32c::CpuFeatures lacking = all;
      lacking.has &= ~bit;
      why.clear();
      EXPECT_EQ(nullptr, crc32c::Resolve(impl, lacking, &why)) << impl.name << " bit " << bit;
      EXPECT_NE(std::string::npos, why.find(std::string("crc32c/") + impl.name + " refused"))
          << why;
      EXPECT_NE(std::string::npos, why.find(crc32c::FeatureName(static_cast<crc32c::Feature>(bit))))
          << why;
    }
  }
  crc32c::CpuFeatures none;
  std::string why;
  EXPECT_NE(nullptr, crc32c::Resolve(*crc32c::Find("table"), none, &why)) << why;
}

#if defined(__x86_64__)
// The x86 folding kernels need wider registers than hw_3way: a CPU with SSE4.2 and PCLMULQDQ
// but no VPCLMULQDQ (every x86 CPU before Ice Lake and Zen 3) gets them refused, not SIGILL.
TEST(Crc32cDispatchTest, RefusesFoldingOnACpuWithoutVpclmulqdq) {
  crc32c::CpuFeatures westmere;
  westmere.has = crc32c::kCrc32cInsn | crc32c::kClmul;
  std::string why;
  EXPECT_NE(nullptr, crc32c::Resolve(*crc32c::Find("hw_3way"), westmere, &why)) << why;
  EXPECT_EQ(nullptr, crc32c::Resolve(*crc32c::Find("fold_512"), westmere, &why));
  EXPECT_EQ(
      "crc32c/fold_512 refused: this CPU lacks VPCLMULQDQ on 512-bit registers (VPCLMULQDQ, "
      "AVX-512F, AVX-512VL) (running it would die with SIGILL)",
      why);
  crc32c::CpuFeatures avx2_only = westmere;  // Zen 3, Alder Lake: 256-bit VPCLMULQDQ only
  avx2_only.has |= crc32c::kClmul256;
  EXPECT_NE(nullptr, crc32c::Resolve(*crc32c::Find("fold_256"), avx2_only, &why)) << why;
  EXPECT_EQ(nullptr, crc32c::Resolve(*crc32c::Find("fold_512"), avx2_only, &why));
}
#endif

// A build without a kernel says why in words that fit the build: never "use -mcpu=native" to a
// build that used it (under qemu-user it can resolve to a generic ARMv8.0 CPU), never "add
// +crypto" to flags that have it.
TEST(Crc32cDispatchTest, NotCompiledReasonNeverRecommendsAFlagTheBuildHas) {
  const std::string native = crc32c::NotCompiledReason("-mcpu=native", "+crypto", "PMULL");
  EXPECT_NE(std::string::npos, native.find("(-mcpu=native) do not enable PMULL")) << native;
  EXPECT_EQ(std::string::npos, native.find("with -mcpu=native")) << native;
  EXPECT_EQ(std::string::npos, native.find("add +crypto")) << native;
  const std::string portable = crc32c::NotCompiledReason("-march=armv8-a+crc", "+crypto", "PMULL");
  EXPECT_NE(std::string::npos, portable.find("add +crypto")) << portable;
  const std::string has_it =
      crc32c::NotCompiledReason("-march=armv8-a+crc+crypto", "+crypto", "PMULL");
  EXPECT_EQ(std::string::npos, has_it.find("add +crypto")) << has_it;
  const std::string none = crc32c::NotCompiledReason("", "+crc", "the ARMv8 CRC32 instructions");
  EXPECT_NE(std::string::npos, none.find("the compiler's default target")) << none;
}

// The choice logic (crc32c.h, "How Extend() chooses"): given measured rates, each size class gets
// its fastest kernel; unmeasured kernels (rate 0) never win; a tie goes to the one listed first.
TEST(Crc32cChoiceTest, FastestByRatesTakesTheFastestOfEachClass) {
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  ASSERT_GE(count, 3u);
  crc32c::Rates rates{};
  // Class c: implementation (c % count) is the fastest; the others are slower, some unmeasured.
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    for (size_t i = 0; i < count; ++i) rates[c][i] = (i % 2 == 0) ? 1e9 * (1 + i) : 0;
    rates[c][c % count] = 1e12;
  }
  const auto chosen = crc32c::FastestByRates(rates);
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    EXPECT_EQ(&impls[c % count], chosen[c]) << crc32c::SizeClassName(c);
  }
  crc32c::Rates tie{};
  for (auto& row : tie) row[1] = row[2] = 5e9;
  for (const crc32c::Implementation* impl : crc32c::FastestByRates(tie)) EXPECT_EQ(&impls[1], impl);
}

// The classes cover every length, in order, and a length's class is the one whose range holds it.
TEST(Crc32cChoiceTest, SizeClassesCoverEveryLength) {
  EXPECT_EQ(0u, crc32c::SizeClassOf(0));
  for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
    const size_t low = crc32c::kSizeClasses[c].min_bytes;
    EXPECT_EQ(c, crc32c::SizeClassOf(low));
    EXPECT_EQ(c, crc32c::SizeClassOf(crc32c::kSizeClasses[c].probe_bytes)) << "probe in class";
    if (low > 0) {
      EXPECT_EQ(c - 1, crc32c::SizeClassOf(low - 1));
    }
  }
  EXPECT_EQ(crc32c::kSizeClassCount - 1, crc32c::SizeClassOf(size_t{1} << 40));
  EXPECT_EQ("0-127 B", crc32c::SizeClassName(0));
  EXPECT_EQ("16384+ B", crc32c::SizeClassName(crc32c::kSizeClassCount - 1));
}

// KVBENCH_CRC32C=<kernel>: honoured for every class and recorded as forced.
TEST(Crc32cChoiceTest, ForcedKernelIsHonoured) {
  crc32c::CpuFeatures all;
  all.has = ~0u;
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  for (size_t i = 0; i < count; ++i) {
    if (impls[i].extend == nullptr) continue;  // not in this build: refused, below
    const crc32c::Choice choice = crc32c::Force(impls[i].name, all);
    EXPECT_EQ("", choice.error);
    EXPECT_EQ(crc32c::ChosenBy::kForced, choice.chosen_by);
    for (const crc32c::Implementation* impl : choice.kernel) EXPECT_EQ(&impls[i], impl);
    EXPECT_EQ(std::string(impls[i].name) + " for every length", crc32c::DescribeChoice(choice));
    EXPECT_EQ(std::string("forced by KVBENCH_CRC32C=") + impls[i].name,
              crc32c::DescribeHow(choice));
  }
}

// An unknown kernel, or one the CPU lacks an instruction for, is refused with the reason and the
// list of kernels, never run.
TEST(Crc32cChoiceTest, UnknownOrUnrunnableKernelIsRefusedWithTheList) {
  crc32c::CpuFeatures none;  // runs `table` only
  const crc32c::Choice unknown = crc32c::Force("fold_1024", none);
  EXPECT_EQ(crc32c::ChosenBy::kForced, unknown.chosen_by);
  EXPECT_NE(std::string::npos,
            unknown.error.find("KVBENCH_CRC32C=fold_1024: no such crc32c kernel"))
      << unknown.error;
  EXPECT_NE(std::string::npos, unknown.error.find("table, hw_1way, hw_3way")) << unknown.error;
  EXPECT_NE(std::string::npos, unknown.error.find("the kernels this build and CPU run: table"))
      << unknown.error;
  const crc32c::Choice lacking = crc32c::Force("hw_1way", none);
  EXPECT_NE(std::string::npos, lacking.error.find("KVBENCH_CRC32C=hw_1way refused: crc32c/hw_1way"))
      << lacking.error;
  EXPECT_NE(std::string::npos, lacking.error.find("run: table")) << lacking.error;
  EXPECT_EQ(lacking.error, crc32c::DescribeChoice(lacking));
}

// The calibration on this CPU: every class gets a kernel this CPU runs, the fastest by the rates
// it recorded, and every kernel it could run was measured (and no other), at every class but
// those whose lengths it hands to another kernel.
void ExpectMeasuredChoice(const crc32c::CpuFeatures& cpu) {
  const crc32c::Choice choice = crc32c::Calibrate(cpu, crc32c::kCalibrationBudgetSeconds);
  EXPECT_EQ("", choice.error);
  size_t count = 0;
  const crc32c::Implementation* impls = crc32c::Implementations(&count);
  size_t runnable = 0;
  for (size_t i = 0; i < count; ++i) {
    std::string why;
    const bool runs = crc32c::Resolve(impls[i], cpu, &why) != nullptr;
    runnable += runs ? 1 : 0;
    if (choice.chosen_by != crc32c::ChosenBy::kMeasured) continue;
    for (size_t c = 0; c < crc32c::kSizeClassCount; ++c) {
      // Not where it hands the length to another kernel (fold_512 to hw_3way under 256 B).
      const bool timed = runs && crc32c::kSizeClasses[c].probe_bytes >= impls[i].hands_below;
      EXPECT_EQ(timed, choice.rates[c][i] > 0) << impls[i].name << " " << crc32c::SizeClassName(c);
    }
  }
  for (const crc32c::Implementation* impl : choice.kernel) {
    ASSERT_NE(nullptr, impl);
    std::string why;
    EXPECT_NE(nullptr, crc32c::Resolve(*impl, cpu, &why)) << why;
  }
  if (runnable == 1) {
    EXPECT_EQ(crc32c::ChosenBy::kOnlyOne, choice.chosen_by);
    return;
  }
  EXPECT_EQ(crc32c::ChosenBy::kMeasured, choice.chosen_by);
  // Every contender kept an uninterrupted burst, or the choice says it rests on interrupted
  // ones (a loaded or emulated CPU: qemu-user's threads switched out every burst of a kernel).
  if (choice.repeats == 0) {
    EXPECT_GT(choice.interrupted, 0);
    EXPECT_NE(std::string::npos, crc32c::DescribeHow(choice).find("best of interrupted timings"));
  }
  EXPECT_EQ(crc32c::FastestByRates(choice.rates), choice.kernel);
  EXPECT_EQ(0u, crc32c::DescribeChoice(choice).find("0-127 B "));
  EXPECT_EQ(0u, crc32c::DescribeHow(choice).find("measured: best of "));  // either way
  EXPECT_NE(std::string::npos, crc32c::DescribeRates(choice, 0).find(" GB/s at 64 B"));
}

TEST(Crc32cChoiceTest, CalibrationChoosesAmongTheKernelsThisCpuRuns) {
  ExpectMeasuredChoice(crc32c::DetectCpu());
}

// The same on a CPU with fewer features than this one: the kernels it lacks are never timed.
TEST(Crc32cChoiceTest, CalibrationNeverTimesAKernelTheCpuLacks) {
  crc32c::CpuFeatures older = crc32c::DetectCpu();
  older.has &= crc32c::kCrc32cInsn | crc32c::kClmul;  // x86: Westmere; ARM: no EOR3
  ExpectMeasuredChoice(older);
  crc32c::CpuFeatures none;
  const crc32c::Choice only = crc32c::Calibrate(none, crc32c::kCalibrationBudgetSeconds);
  EXPECT_EQ(crc32c::ChosenBy::kOnlyOne, only.chosen_by);
  for (const crc32c::Implementation* impl : only.kernel) EXPECT_EQ(crc32c::Find("table"), impl);
}

// Extend() uses the process's choice: KVBENCH_CRC32C when set (micro_smoke_test runs the binary
// with it), else measured here, and never a kernel that is refused here.
TEST(Crc32cChoiceTest, CurrentChoiceIsForcedOrMeasured) {
  const crc32c::Choice& choice = crc32c::CurrentChoice();
  ASSERT_EQ("", choice.error);
  const char* forced = std::getenv(crc32c::kForceVariable);
  if (forced != nullptr && *forced != '\0') {
    EXPECT_EQ(crc32c::ChosenBy::kForced, choice.chosen_by);
    EXPECT_EQ(crc32c::Find(forced), choice.kernel[0]);
  } else {
    EXPECT_NE(crc32c::ChosenBy::kForced, choice.chosen_by);
  }
  for (const crc32c::Implementation* impl : choice.kernel) {
    std::string why;
    EXPECT_NE(nullptr, crc32c::Resolve(*impl, &why)) << why;
  }
  EXPECT_EQ(&choice, &crc32c::CurrentChoice()) << "made once";
}

// Extend()'s table sends every length to the kernel chosen for its size class: each length
// 0..4096, every power of two and its neighbours up to 2^63.
TEST(Crc32cChoiceTest, ExtendCallsTheKernelOfEachLengthsClass) {
  const crc32c::Choice& choice = crc32c::CurrentChoice();
  ASSERT_EQ("", choice.error);
  EXPECT_EQ(0u, crc32c::Extend(0, "", 0));  // the first call fills the table
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 4096; ++n) lengths.push_back(n);
  for (int b = 12; b < 64; ++b) {
    for (size_t n : {(size_t{1} << b) - 1, size_t{1} << b, (size_t{1} << b) + 1}) {
      lengths.push_back(n);
    }
  }
  for (size_t n : lengths) {
    const int zeros = n == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(n));
    ASSERT_EQ(choice.kernel[crc32c::SizeClassOf(n)]->extend,
              crc32c::internal::extend_by_leading_zeros[zeros].load())
        << "length " << n;
  }
}

// Where the CPU is known in advance (the arm64 cross tests run on a qemu CPU model named in
// bench/CMakeLists.txt), KVBENCH_CRC32C_EXPECT=name=runs|refused,... says which kernels must run
// and which must be refused, so a detection bug cannot turn into a quietly skipped kernel.
TEST(Crc32cDispatchTest, KernelsRunOrAreRefusedAsExpectedOnThisCpu) {
  const char* env = std::getenv("KVBENCH_CRC32C_EXPECT");
  if (env == nullptr || *env == '\0') GTEST_SKIP() << "KVBENCH_CRC32C_EXPECT is not set";
  const std::string spec = env;
  size_t start = 0;
  while (start < spec.size()) {
    const size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    ASSERT_NE(std::string::npos, eq) << "bad KVBENCH_CRC32C_EXPECT item " << item;
    const std::string name = item.substr(0, eq), want = item.substr(eq + 1);
    const crc32c::Implementation* impl = crc32c::Find(name);
    ASSERT_NE(nullptr, impl) << name;
    std::string why;
    const bool runs = crc32c::Resolve(*impl, &why) != nullptr;
    if (want == "runs") {
      EXPECT_TRUE(runs) << name << ": " << why;
    } else {
      ASSERT_EQ("refused", want) << item;
      EXPECT_FALSE(runs) << name << " runs";
      EXPECT_NE(std::string::npos, why.find(name + " refused: this CPU lacks")) << why;
    }
  }
}

}  // namespace
}  // namespace kvbench
