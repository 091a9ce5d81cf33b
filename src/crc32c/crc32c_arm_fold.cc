// crc32c by folding with PMULL (crc32c_fold.h has the method): eight 128-bit registers in
// flight, 128 bytes per step; inputs under kMinFoldBytes go to hw_3way. fold_eor3 is the same
// kernel with each fold's two exclusive ors merged into one EOR3 (ARMv8.2 SHA3).
//
// Compiled, like crc32c_arm.cc, when the target flags enable PMULL. EOR3 is written as inline
// assembly with `.arch_extension sha3` rather than the veor3q_u64 intrinsic, because clang 14's
// arm_neon.h offers the intrinsic only when the whole build targets SHA3, while the CPU, not the
// build, decides whether it can run (crc32c.cc checks HWCAP_SHA3 before calling it). So the
// arm64 cross build (-mcpu=neoverse-n1, no SHA3) contains fold_eor3 and its tests run it under
// qemu's `max` CPU.
#include "crc32c/crc32c_fold.h"
#include "crc32c/crc32c_internal.h"

#ifdef KVBENCH_CRC32C_ARM_PMULL

#include <arm_acle.h>
#include <arm_neon.h>

namespace kvbench {
namespace crc32c {
namespace internal {

namespace {

constexpr size_t kStep = 128;  // bytes folded per loop iteration: eight 16-byte registers

// Every distance the kernel folds by, in bits, computed by the compiler.
constexpr FoldConstants kFold128 = FoldBy(128);
constexpr FoldConstants kFold256 = FoldBy(256);
constexpr FoldConstants kFold384 = FoldBy(384);
constexpr FoldConstants kFold512 = FoldBy(512);
constexpr FoldConstants kFold640 = FoldBy(640);
constexpr FoldConstants kFold896 = FoldBy(896);
constexpr FoldConstants kFoldStep = FoldBy(8 * kStep);

inline uint64x2_t Lane(const FoldConstants& k) {
  return vcombine_u64(vcreate_u64(k.low), vcreate_u64(k.high));
}

inline uint64x2_t Load(const char* p) {
  return vreinterpretq_u64_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(p)));
}

// a.low * k.low and a.high * k.high, carry-less.
inline uint64x2_t MulLow(uint64x2_t a, uint64x2_t k) {
  return vreinterpretq_u64_p128(vmull_p64(vgetq_lane_u64(a, 0), vgetq_lane_u64(k, 0)));
}
inline uint64x2_t MulHigh(uint64x2_t a, uint64x2_t k) {
  return vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(a), vreinterpretq_p64_u64(k)));
}

template <bool kEor3>
inline uint64x2_t Xor3(uint64x2_t a, uint64x2_t b, uint64x2_t c) {
  if constexpr (kEor3) {
    uint64x2_t r;
    asm(".arch_extension sha3\n\teor3 %0.16b, %1.16b, %2.16b, %3.16b"
        : "=w"(r)
        : "w"(a), "w"(b), "w"(c));
    return r;
  } else {
    return veorq_u64(veorq_u64(a, b), c);
  }
}

// acc * x^D + data for the distance D of `k`.
template <bool kEor3>
inline uint64x2_t FoldLane(uint64x2_t acc, uint64x2_t k, uint64x2_t data) {
  return Xor3<kEor3>(MulLow(acc, k), MulHigh(acc, k), data);
}

// The CRC32C state after the 128-bit remainder `x`: x * x^32 mod P (crc32c_fold.h).
inline uint32_t Finish128(uint64x2_t x) {
  return __crc32cd(__crc32cd(0, vgetq_lane_u64(x, 0)), vgetq_lane_u64(x, 1));
}

// The last n < 16 bytes through the CRC32C instruction.
inline uint32_t Tail(uint32_t c, const char* p, size_t n) {
  if (n & 8) {
    c = __crc32cd(c, LoadLE64(p));
    p += 8;
  }
  if (n & 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    c = __crc32cw(c, v);
    p += 4;
  }
  if (n & 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c = __crc32ch(c, v);
    p += 2;
  }
  if (n & 1) c = __crc32cb(c, static_cast<uint8_t>(*p));
  return c;
}

// REQUIRES: what Resolve() checks. The main loop folds eight registers by 128 bytes; after it,
// each register moves onto the last, the remainder folds in 16 bytes at a time, and under 16
// bytes remain for Tail. Eight named registers, not an array, which gcc 12 kept in memory on x86.
template <bool kEor3>
__attribute__((always_inline)) inline uint32_t Fold(uint32_t init_crc, const char* p, size_t n) {
  if (n < kMinFoldBytes) return ExtendHw3(init_crc, p, n);
  const uint64x2_t first = vcombine_u64(vcreate_u64(~init_crc), vcreate_u64(0));
  uint64x2_t x0 = veorq_u64(Load(p), first), x1 = Load(p + 16), x2 = Load(p + 32),
             x3 = Load(p + 48), x4 = Load(p + 64), x5 = Load(p + 80), x6 = Load(p + 96),
             x7 = Load(p + 112);
  p += kStep;
  n -= kStep;
  const uint64x2_t k = Lane(kFoldStep);
  for (; n >= kStep; p += kStep, n -= kStep) {
    x0 = FoldLane<kEor3>(x0, k, Load(p));
    x1 = FoldLane<kEor3>(x1, k, Load(p + 16));
    x2 = FoldLane<kEor3>(x2, k, Load(p + 32));
    x3 = FoldLane<kEor3>(x3, k, Load(p + 48));
    x4 = FoldLane<kEor3>(x4, k, Load(p + 64));
    x5 = FoldLane<kEor3>(x5, k, Load(p + 80));
    x6 = FoldLane<kEor3>(x6, k, Load(p + 96));
    x7 = FoldLane<kEor3>(x7, k, Load(p + 112));
  }
  // Register i moves forward by (7 - i) * 128 bits onto register 7, in two independent chains:
  // x7 += x6, x4, x2, x0 moved by 128, 384, 640, 896; x5 += x3, x1 moved by 256, 512, and x5
  // then moves by 256.
  x7 = FoldLane<kEor3>(x6, Lane(kFold128), FoldLane<kEor3>(x4, Lane(kFold384), x7));
  x7 = FoldLane<kEor3>(x2, Lane(kFold640), FoldLane<kEor3>(x0, Lane(kFold896), x7));
  x5 = FoldLane<kEor3>(x1, Lane(kFold512), FoldLane<kEor3>(x3, Lane(kFold256), x5));
  x7 = FoldLane<kEor3>(x5, Lane(kFold256), x7);
  const uint64x2_t k_16 = Lane(kFold128);
  for (; n >= 16; p += 16, n -= 16) x7 = FoldLane<kEor3>(x7, k_16, Load(p));
  return ~Tail(Finish128(x7), p, n);
}

}  // namespace

KVBENCH_CRC32C_KERNEL uint32_t ExtendFoldPmull(uint32_t init_crc, const char* data, size_t n) {
  return Fold<false>(init_crc, data, n);
}

KVBENCH_CRC32C_KERNEL uint32_t ExtendFoldEor3(uint32_t init_crc, const char* data, size_t n) {
  return Fold<true>(init_crc, data, n);
}

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench

#endif  // KVBENCH_CRC32C_ARM_PMULL
