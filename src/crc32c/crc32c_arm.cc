// crc32c with the ARMv8 CRC32 instructions: one stream (crc32cx), and three streams combined with
// PMULL, the same scheme as crc32c_x86.cc.
//
// Compiled only when the build targets the instructions (__ARM_FEATURE_CRC32; PMULL also needs
// __ARM_FEATURE_CRYPTO or __ARM_FEATURE_AES): every ARM preset has +crc, and gcc and clang 14
// spell AArch64 target attributes differently, so attributes would buy little here. Callers
// still check the CPU at run time (crc32c.cc, Resolve()).
#include "crc32c/crc32c_internal.h"

#ifdef KVBENCH_CRC32C_ARM

#include <arm_acle.h>
#ifdef KVBENCH_CRC32C_ARM_PMULL
#include <arm_neon.h>
#endif

namespace kvbench {
namespace crc32c {
namespace internal {

namespace {

inline uint32_t AlignBytes(uint32_t c, const char*& p, size_t& n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = __crc32cb(c, static_cast<uint8_t>(*p));
    ++p;
    --n;
  }
  return c;
}

inline uint32_t OneStream(uint32_t c, const char* p, size_t n) {
  c = AlignBytes(c, p, n);
  while (n >= 32) {
    c = __crc32cd(c, LoadLE64(p));
    c = __crc32cd(c, LoadLE64(p + 8));
    c = __crc32cd(c, LoadLE64(p + 16));
    c = __crc32cd(c, LoadLE64(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    c = __crc32cd(c, LoadLE64(p));
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = __crc32cb(c, static_cast<uint8_t>(*p));
    ++p;
    --n;
  }
  return c;
}

#ifdef KVBENCH_CRC32C_ARM_PMULL
inline uint64_t ClMul(uint32_t x, uint32_t k) {
  return vgetq_lane_u64(vreinterpretq_u64_p128(vmull_p64(x, k)), 0);
}
#endif

}  // namespace

KVBENCH_CRC32C_KERNEL uint32_t ExtendHw1(uint32_t init_crc, const char* data, size_t n) {
  return ~OneStream(~init_crc, data, n);
}

#ifdef KVBENCH_CRC32C_ARM_PMULL
KVBENCH_CRC32C_KERNEL uint32_t ExtendHw3(uint32_t init_crc, const char* data, size_t n) {
  const char* p = data;
  uint32_t c = AlignBytes(~init_crc, p, n);
  for (;;) {
    size_t w = n / 24;  // words per lane
    if (w < kMinLaneWords) break;
    if (w > kMaxLaneWords) w = kMaxLaneWords;
    const size_t lane = 8 * w;
    const char* a = p;
    const char* b = p + lane;
    const char* e = p + 2 * lane;
    uint32_t ca = c, cb = 0, ce = 0;
    // One pointer walks lane A; B and C are at fixed distances from it. Written this way because
    // clang 14 compiled an indexed loop (a + i, b + i, e + i) with two induction variables and
    // no unrolling, about 25% slower at 4 KiB on x86; gcc 12 makes the same code of both forms.
    for (const char* q = a; q != a + lane - 8; q += 8) {
      ca = __crc32cd(ca, LoadLE64(q));
      cb = __crc32cd(cb, LoadLE64(q + lane));
      ce = __crc32cd(ce, LoadLE64(q + 2 * lane));
    }
    ca = __crc32cd(ca, LoadLE64(a + lane - 8));
    cb = __crc32cd(cb, LoadLE64(b + lane - 8));
    const ShiftConstants& k = kShiftConstants[w];
    const uint64_t shifted = ClMul(ca, k.lane_a) ^ ClMul(cb, k.lane_b);
    c = __crc32cd(ce, LoadLE64(e + lane - 8) ^ shifted);
    p += 3 * lane;
    n -= 3 * lane;
  }
  return ~OneStream(c, p, n);
}
#endif  // KVBENCH_CRC32C_ARM_PMULL

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench

#endif  // KVBENCH_CRC32C_ARM
