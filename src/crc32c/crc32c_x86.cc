// crc32c with the x86 SSE4.2 crc32 instruction: one stream, and three streams combined with
// PCLMULQDQ (the scheme of Intel's "Fast CRC Computation for iSCSI Polynomial Using CRC32
// Instruction", which RocksDB's crc32c_3way follows).
//
// These functions carry target attributes instead of relying on -msse4.2: the portable presets
// target baseline x86-64, and a runtime-dispatched hardware path is what a portable engine build
// ships. Everything else in the file is compiled with the preset's flags. Callers must check the
// CPU first (crc32c.cc does, in Resolve()); on a CPU without SSE4.2 these functions raise SIGILL.
#include "crc32c/crc32c_internal.h"

#ifdef KVBENCH_CRC32C_X86

#include <nmmintrin.h>  // SSE4.2: _mm_crc32_*
#include <wmmintrin.h>  // PCLMULQDQ: _mm_clmulepi64_si128

#define KVBENCH_TARGET_SSE42 __attribute__((target("sse4.2")))
#define KVBENCH_TARGET_SSE42_PCLMUL __attribute__((target("sse4.2,pclmul")))

namespace kvbench {
namespace crc32c {
namespace internal {

namespace {

// Advances `c` over bytes until `p` is 8-byte aligned (or n is 0), so word loads never split a
// cache line.
KVBENCH_TARGET_SSE42 inline uint32_t AlignBytes(uint32_t c, const char*& p, size_t& n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
    ++p;
    --n;
  }
  return c;
}

// One stream: each crc32q depends on the previous one (3-cycle latency, 1 per cycle throughput).
KVBENCH_TARGET_SSE42 inline uint32_t OneStream(uint32_t c, const char* p, size_t n) {
  c = AlignBytes(c, p, n);
  uint64_t c64 = c;
  while (n >= 32) {
    c64 = _mm_crc32_u64(c64, LoadLE64(p));
    c64 = _mm_crc32_u64(c64, LoadLE64(p + 8));
    c64 = _mm_crc32_u64(c64, LoadLE64(p + 16));
    c64 = _mm_crc32_u64(c64, LoadLE64(p + 24));
    p += 32;
    n -= 32;
  }
  while (n >= 8) {
    c64 = _mm_crc32_u64(c64, LoadLE64(p));
    p += 8;
    n -= 8;
  }
  c = static_cast<uint32_t>(c64);
  while (n > 0) {
    c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
    ++p;
    --n;
  }
  return c;
}

// The carry-less product of x and k (63 bits); crc32q of it from state 0 is x * k * x^33 mod P.
KVBENCH_TARGET_SSE42_PCLMUL inline uint64_t ClMul(uint32_t x, uint32_t k) {
  const __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi32_si128(static_cast<int>(x)),
                                            _mm_cvtsi32_si128(static_cast<int>(k)), 0x00);
  return static_cast<uint64_t>(_mm_cvtsi128_si64(prod));
}

}  // namespace

KVBENCH_CRC32C_KERNEL KVBENCH_TARGET_SSE42 uint32_t ExtendHw1(uint32_t init_crc, const char* data,
                                                              size_t n) {
  return ~OneStream(~init_crc, data, n);
}

KVBENCH_CRC32C_KERNEL KVBENCH_TARGET_SSE42_PCLMUL uint32_t ExtendHw3(uint32_t init_crc,
                                                                     const char* data, size_t n) {
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
    uint64_t ca = c, cb = 0, ce = 0;
    // One pointer walks lane A; B and C are at fixed distances from it. Written this way because
    // clang 14 compiled an indexed loop (a + i, b + i, e + i) with two induction variables and
    // no unrolling, about 25% slower at 4 KiB on x86; gcc 12 makes the same code of both forms.
    for (const char* q = a; q != a + lane - 8; q += 8) {
      ca = _mm_crc32_u64(ca, LoadLE64(q));
      cb = _mm_crc32_u64(cb, LoadLE64(q + lane));
      ce = _mm_crc32_u64(ce, LoadLE64(q + 2 * lane));
    }
    ca = _mm_crc32_u64(ca, LoadLE64(a + lane - 8));
    cb = _mm_crc32_u64(cb, LoadLE64(b + lane - 8));
    // Fold A and B into C's last word: crc32q(s, v ^ d) = crc32q(s, v) ^ d * x^32.
    const ShiftConstants& k = kShiftConstants[w];
    const uint64_t shifted =
        ClMul(static_cast<uint32_t>(ca), k.lane_a) ^ ClMul(static_cast<uint32_t>(cb), k.lane_b);
    c = static_cast<uint32_t>(_mm_crc32_u64(ce, LoadLE64(e + lane - 8) ^ shifted));
    p += 3 * lane;
    n -= 3 * lane;
  }
  return ~OneStream(c, p, n);
}

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench

#endif  // KVBENCH_CRC32C_X86
