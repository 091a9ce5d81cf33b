// The AArch64 atomics audit: the instruction classifier on encodings taken from GNU as
// (aarch64-linux-gnu-as 2.40, -march=armv8.4-a+rcpc), the outline-helper shape, the summary,
// and whole files: this test binary itself and every library it loaded.
#include "env/arm_atomics.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace kvbench {
namespace {

struct Encoding {
  uint32_t word;
  const char* text;
  A64Atomic want;
};

const Encoding kEncodings[] = {
    {0x88a07c41, "cas w0, w1, [x2]", A64Atomic::kLse},
    {0xc8e0fc41, "casal x0, x1, [x2]", A64Atomic::kLse},
    {0x08a07c41, "casb w0, w1, [x2]", A64Atomic::kLse},
    {0x4860fc82, "caspal x0, x1, x2, x3, [x4]", A64Atomic::kLse},
    {0xb8200041, "ldadd w0, w1, [x2]", A64Atomic::kLse},
    {0xf8e00041, "ldaddal x0, x1, [x2]", A64Atomic::kLse},
    {0xb820005f, "stadd w0, [x2]", A64Atomic::kLse},
    {0xf8601041, "ldclrl x0, x1, [x2]", A64Atomic::kLse},
    {0x38a02041, "ldeorab w0, w1, [x2]", A64Atomic::kLse},
    {0x78e03041, "ldsetalh w0, w1, [x2]", A64Atomic::kLse},
    {0xb8204041, "ldsmax w0, w1, [x2]", A64Atomic::kLse},
    {0xf8207041, "ldumin x0, x1, [x2]", A64Atomic::kLse},
    {0xb8208041, "swp w0, w1, [x2]", A64Atomic::kLse},
    {0xf8e08041, "swpal x0, x1, [x2]", A64Atomic::kLse},
    {0x885f7c20, "ldxr w0, [x1]", A64Atomic::kLoadExclusive},
    {0xc85ffc20, "ldaxr x0, [x1]", A64Atomic::kLoadExclusive},
    {0x085ffc20, "ldaxrb w0, [x1]", A64Atomic::kLoadExclusive},
    {0xc87f0440, "ldxp x0, x1, [x2]", A64Atomic::kLoadExclusive},
    {0x887f8440, "ldaxp w0, w1, [x2]", A64Atomic::kLoadExclusive},
    {0x88037c20, "stxr w3, w0, [x1]", A64Atomic::kStoreExclusive},
    {0xc803fc20, "stlxr w3, x0, [x1]", A64Atomic::kStoreExclusive},
    {0xc8248440, "stlxp w4, x0, x1, [x2]", A64Atomic::kStoreExclusive},
    {0xc8dffc20, "ldar x0, [x1]", A64Atomic::kOther},
    {0x889ffc20, "stlr w0, [x1]", A64Atomic::kOther},
    {0xf8bfc020, "ldapr x0, [x1]", A64Atomic::kOther},
    {0xf8626820, "ldr x0, [x1, x2]", A64Atomic::kOther},
    {0xb8224820, "str w0, [x1, w2, uxtw]", A64Atomic::kOther},
    {0xf9400020, "ldr x0, [x1]", A64Atomic::kOther},
    {0x8b020020, "add x0, x1, x2", A64Atomic::kOther},
    {0xd65f03c0, "ret", A64Atomic::kOther},
};

TEST(ArmAtomicsTest, ClassifiesEncodings) {
  for (const Encoding& e : kEncodings) {
    EXPECT_EQ(static_cast<int>(e.want), static_cast<int>(ClassifyA64(e.word))) << e.text;
  }
}

AtomicsAudit Count(const std::vector<uint32_t>& words) {
  AtomicsAudit a;
  a.readable = a.aarch64 = true;
  CountAtomics(reinterpret_cast<const char*>(words.data()), 4 * words.size(), &a);
  return a;
}

// libgcc's outline helper __aarch64_cas4_acq: the LSE flag test, casa, ret; 8: LL/SC loop; ret.
TEST(ArmAtomicsTest, CountsAnOutlineHelperOnceAndNotItsFallbackLoop) {
  const std::vector<uint32_t> helper = {
      0x90000010,  // adrp x16, __aarch64_have_lse_atomics
      0x39403210,  // ldrb w16, [x16, #12]
      0x34000070,  // cbz w16, 8f
      0x88e07c41,  // casa w0, w1, [x2]
      0xd65f03c0,  // ret
      0x885ffc41,  // 8: ldaxr w1, [x2]
      0x6b00003f,  // cmp w1, w0
      0x54000061,  // b.ne 1f
      0x88117c41,  // stxr w17, w1, [x2]
      0x35ffff91,  // cbnz w17, 8b
      0xd65f03c0,  // 1: ret
  };
  const AtomicsAudit a = Count(helper);
  EXPECT_EQ(1u, a.outline_helpers);
  EXPECT_EQ(0u, a.lse);
  EXPECT_EQ(0u, a.ll_sc);
  EXPECT_EQ("outline atomics (1 helpers: LSE or LL/SC chosen at run time)", a.Summary());
}

// Ordinary code that tests something, does one LSE operation and returns is not a helper.
TEST(ArmAtomicsTest, InlineLseAfterABranchIsNotAHelper) {
  const AtomicsAudit a = Count({0x39403208, 0x34000048, 0xf8e00041, 0xd65f03c0});
  EXPECT_EQ(1u, a.lse);  // ldrb w8; cbz w8; ldaddal; ret
  EXPECT_EQ(0u, a.outline_helpers);
}

TEST(ArmAtomicsTest, SummarisesInlineLseAndLlsc) {
  EXPECT_EQ("LSE (2 instructions)", Count({0xb8200041, 0x8b020020, 0xf8e08041}).Summary());
  EXPECT_EQ("LL/SC (1 exclusive loops)", Count({0x885f7c20, 0x88037c20}).Summary());
  EXPECT_EQ("LSE (1 instructions) + LL/SC (1 exclusive loops)",
            Count({0xb8200041, 0x885f7c20, 0x88037c20}).Summary());
  EXPECT_EQ("none (no atomic read-modify-write)", Count({0x8b020020, 0xd65f03c0}).Summary());
  AtomicsAudit x86;
  x86.readable = true;
  EXPECT_EQ("not AArch64", x86.Summary());
  EXPECT_EQ("unreadable", AtomicsAudit().Summary());
  EXPECT_FALSE(AuditAtomics("/nonexistent/libfoo.so").readable);
}

// Keeps an atomic read-modify-write in this binary, compiled with the preset's flags.
std::atomic<int> g_counter{0};
int __attribute__((noinline)) Bump() { return g_counter.fetch_add(1) + 1; }

// This test binary as built: with LSE in the target (-mcpu=neoverse-n1, -mcpu=native on a v8.1+
// CPU) the compiler emits LSE instructions inline (Bump's fetch_add is one); without it
// (-march=armv8-a+crc) gcc's default -moutline-atomics calls helpers, or LL/SC loops are inlined.
// Helpers can appear either way: Debian's arm64 libgtest.a was built with outline atomics, and
// linking it statically brings libgcc's __aarch64_ldadd4_acq_rel into this binary.
TEST(ArmAtomicsTest, AuditsThisBinaryAsItWasCompiled) {
  EXPECT_EQ(1, Bump());
  const auto loaded = AuditLoadedAtomics();
  ASSERT_FALSE(loaded.empty());
  EXPECT_EQ("arm_atomics_test", loaded.front().first);
  const AtomicsAudit& self = loaded.front().second;
  ASSERT_TRUE(self.readable);
#if defined(__aarch64__)
  EXPECT_TRUE(self.aarch64);
#if defined(__ARM_FEATURE_ATOMICS)
  EXPECT_GT(self.lse, 0u) << self.Summary();
  EXPECT_EQ(0u, self.ll_sc) << self.Summary();
#else
  EXPECT_GT(self.outline_helpers + self.ll_sc, 0u) << self.Summary();
#endif
#else
  EXPECT_FALSE(self.aarch64);
  EXPECT_EQ("not AArch64", self.Summary());
#endif
}

// Every loaded library is found on disk and audited (under qemu-user too, where the paths are
// the guest's and resolve through -L), and the C library is among them.
TEST(ArmAtomicsTest, AuditsEveryLoadedLibrary) {
  bool saw_libc = false;
  for (const auto& [name, audit] : AuditLoadedAtomics()) {
    EXPECT_TRUE(audit.readable) << name;
#if defined(__aarch64__)
    EXPECT_TRUE(audit.aarch64) << name;
#endif
    if (name == "libc.so.6") {
      saw_libc = true;
      EXPECT_NE("none (no atomic read-modify-write)", audit.Summary()) << "glibc has atomics";
    }
  }
  EXPECT_TRUE(saw_libc);
}

}  // namespace
}  // namespace kvbench
