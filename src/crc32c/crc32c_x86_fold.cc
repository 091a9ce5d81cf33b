// crc32c by folding with VPCLMULQDQ (crc32c_fold.h has the method): fold_512 keeps four 512-bit
// registers of 128-bit lanes in flight, fold_256 eight 256-bit ones; both fold 256 bytes per step
// and hand inputs under kMinFoldBytes to hw_3way.
//
// Like crc32c_x86.cc, every function carries target attributes, so portable presets contain the
// kernels too; crc32c.cc calls them only on a CPU that has the instructions (Resolve()).
#include "crc32c/crc32c_fold.h"
#include "crc32c/crc32c_internal.h"

#ifdef KVBENCH_CRC32C_X86

#include <immintrin.h>

#include <algorithm>
#include <array>

#define KVBENCH_TARGET_FOLD256 __attribute__((target("sse4.2,pclmul,avx2,vpclmulqdq")))
#define KVBENCH_TARGET_FOLD512 \
  __attribute__((target("sse4.2,pclmul,avx2,avx512f,avx512vl,vpclmulqdq")))

namespace kvbench {
namespace crc32c {
namespace internal {

namespace {

constexpr size_t kStep = 256;  // bytes folded per loop iteration, both widths

// Every distance the kernels fold by, in bits, computed by the compiler.
constexpr FoldConstants kFold128 = FoldBy(128);
constexpr FoldConstants kFold256 = FoldBy(256);
constexpr FoldConstants kFold384 = FoldBy(384);
constexpr FoldConstants kFold512 = FoldBy(512);
constexpr FoldConstants kFold1024 = FoldBy(1024);
constexpr FoldConstants kFold1536 = FoldBy(1536);
constexpr FoldConstants kFold768 = FoldBy(768);
constexpr FoldConstants kFold1280 = FoldBy(1280);
constexpr FoldConstants kFold1792 = FoldBy(1792);
constexpr FoldConstants kFoldStep = FoldBy(8 * kStep);

// The constants of one fold distance, laid out as a 128-bit lane.
KVBENCH_TARGET_FOLD256 inline __m128i Lane(const FoldConstants& k) {
  return _mm_set_epi64x(static_cast<long long>(k.high), static_cast<long long>(k.low));
}

// The CRC32C state after the 128-bit remainder `x`: x * x^32 mod P (crc32c_fold.h).
KVBENCH_TARGET_FOLD256 inline uint32_t Finish128(__m128i x) {
  const uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(x)));
  return static_cast<uint32_t>(_mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(x, 1))));
}

// The last n < 64 bytes through the CRC32C instruction. No alignment step: after folding, `p`
// is wherever the input's alignment left it, and a byte loop would cost more than it saves.
KVBENCH_TARGET_FOLD256 inline uint32_t Tail(uint32_t c, const char* p, size_t n) {
  uint64_t c64 = c;
  for (; n >= 8; p += 8, n -= 8) c64 = _mm_crc32_u64(c64, LoadLE64(p));
  c = static_cast<uint32_t>(c64);
  if (n & 4) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    c = _mm_crc32_u32(c, v);
    p += 4;
  }
  if (n & 2) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    c = _mm_crc32_u16(c, v);
    p += 2;
  }
  if (n & 1) c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
  return c;
}

// ---- 512-bit registers: four lanes each ----

// Written with _mm512_set_epi64 and the maskz_ forms of extract below: gcc 12's plain
// _mm512_broadcast_i32x4 and _mm512_extracti64x4_epi64 warn of an uninitialised variable of their
// own (gcc bug 105593).
KVBENCH_TARGET_FOLD512 inline __m512i Broadcast512(const FoldConstants& k) {
  const auto lo = static_cast<long long>(k.low), hi = static_cast<long long>(k.high);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

KVBENCH_TARGET_FOLD512 inline __m512i Load512(const char* p) {
  return _mm512_loadu_si512(reinterpret_cast<const void*>(p));
}

// acc * x^D + data, lane by lane, for the distance D of `k`.
KVBENCH_TARGET_FOLD512 inline __m512i Fold512(__m512i acc, __m512i k, __m512i data) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(acc, k, 0x00),
                                   _mm512_clmulepi64_epi128(acc, k, 0x11), data, 0x96);
}

// The four lanes of x (lane 0 first in the message) folded into one 128-bit remainder:
// lanes 0, 1 and 2 move forward by 384, 256 and 128 bits onto lane 3.
KVBENCH_TARGET_FOLD512 inline __m128i Merge512(__m512i x) {
  const auto c = [](uint64_t v) { return static_cast<long long>(v); };
  const __m512i k = _mm512_set_epi64(0, 0, c(kFold128.high), c(kFold128.low), c(kFold256.high),
                                     c(kFold256.low), c(kFold384.high), c(kFold384.low));
  const __m512i last = _mm512_maskz_mov_epi64(0xc0, x);  // lane 3 only; k is zero there
  const __m512i y = Fold512(x, k, last);
  const __m256i y256 = _mm256_xor_si256(_mm512_maskz_extracti64x4_epi64(0xf, y, 0),
                                        _mm512_maskz_extracti64x4_epi64(0xf, y, 1));
  return _mm_xor_si128(_mm256_castsi256_si128(y256), _mm256_extracti128_si256(y256, 1));
}

// ---- 256-bit registers: two lanes each ----

KVBENCH_TARGET_FOLD256 inline __m256i Broadcast256(const FoldConstants& k) {
  return _mm256_broadcastsi128_si256(Lane(k));
}

KVBENCH_TARGET_FOLD256 inline __m256i Load256(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

KVBENCH_TARGET_FOLD256 inline __m256i Fold256(__m256i acc, __m256i k, __m256i data) {
  return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(acc, k, 0x00),
                                           _mm256_clmulepi64_epi128(acc, k, 0x11)),
                          data);
}

// The two lanes of x folded into one: lane 0 moves forward by 128 bits onto lane 1.
KVBENCH_TARGET_FOLD256 inline __m128i Merge256(__m256i x) {
  const __m128i k = Lane(kFold128);
  const __m128i lo = _mm256_castsi256_si128(x);
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(lo, k, 0x00), _mm_clmulepi64_si128(lo, k, 0x11)),
      _mm256_extracti128_si256(x, 1));
}

// The CRC32C state (not inverted) after `state` and p[0, n), n >= kStep, by folding: the main
// loop folds four registers (sixteen lanes) by 256 bytes; after it, each register moves onto the
// last, then single registers of the remainder fold in 64 bytes at a time, the lanes merge, and
// under 64 bytes remain for Tail.
KVBENCH_TARGET_FOLD512 inline uint32_t FoldState512(uint32_t state, const char* p, size_t n) {
  const __m512i first = _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(state)));
  __m512i x0 = _mm512_xor_si512(Load512(p), first);
  __m512i x1 = Load512(p + 64);
  __m512i x2 = Load512(p + 128);
  __m512i x3 = Load512(p + 192);
  p += kStep;
  n -= kStep;
  const __m512i k_step = Broadcast512(kFoldStep);
  for (; n >= kStep; p += kStep, n -= kStep) {
    x0 = Fold512(x0, k_step, Load512(p));
    x1 = Fold512(x1, k_step, Load512(p + 64));
    x2 = Fold512(x2, k_step, Load512(p + 128));
    x3 = Fold512(x3, k_step, Load512(p + 192));
  }
  const __m512i k_64 = Broadcast512(kFold512);
  x3 = Fold512(x0, Broadcast512(kFold1536),
               Fold512(x1, Broadcast512(kFold1024), Fold512(x2, k_64, x3)));
  for (; n >= 64; p += 64, n -= 64) x3 = Fold512(x3, k_64, Load512(p));
  return Tail(Finish128(Merge512(x3)), p, n);
}

// ---- fusion_512: the multiplier and the CRC32C instruction side by side ----
//
// fold_512 keeps the carry-less multiplier busy and leaves the CRC32C instruction idle; hw_3way
// does the opposite. Each iteration here folds 256 bytes in four 512-bit registers and runs three
// crc32q streams over 40 bytes each, taken from three lanes at the end of a chunk of k
// iterations:
//   [ 256k bytes folded | lane A, 40k bytes | lane B, 40k | lane C, 40k ]
// At the end of the chunk the folded state and lanes A and B move forward by the bytes after
// them with one carry-less multiply each (as hw_3way combines its streams) onto lane C.
constexpr size_t kFusionLaneStep = 40;                       // bytes per lane per iteration
constexpr size_t kFusionStep = kStep + 3 * kFusionLaneStep;  // 376 bytes per iteration
constexpr size_t kFusionMaxIters = 16;                       // a chunk: at most 6016 bytes

// r(x^(8m - 33) mod P) for the m bytes that follow the folded part (120k), lane A (80k) and
// lane B (40k): a carry-less multiply by it, through crc32q, multiplies a state by x^(8m).
struct FusionShifts {
  uint32_t folded, lane_a, lane_b;
};

constexpr std::array<FusionShifts, kFusionMaxIters + 1> MakeFusionShifts() {
  std::array<FusionShifts, kFusionMaxIters + 1> out{};
  for (size_t k = 1; k <= kFusionMaxIters; ++k) {
    const size_t lane_bits = 8 * kFusionLaneStep * k;
    out[k] = {XPowModP(3 * lane_bits - 33), XPowModP(2 * lane_bits - 33), XPowModP(lane_bits - 33)};
  }
  return out;
}

constexpr std::array<FusionShifts, kFusionMaxIters + 1> kFusionShifts = MakeFusionShifts();

KVBENCH_TARGET_FOLD512 inline uint64_t ClMul(uint32_t x, uint32_t k) {
  return static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_clmulepi64_si128(
      _mm_cvtsi32_si128(static_cast<int>(x)), _mm_cvtsi32_si128(static_cast<int>(k)), 0x00)));
}

// Five crc32q of one lane's 40 bytes.
KVBENCH_TARGET_FOLD512 inline uint64_t Crc40(uint64_t c, const char* p) {
  c = _mm_crc32_u64(c, LoadLE64(p));
  c = _mm_crc32_u64(c, LoadLE64(p + 8));
  c = _mm_crc32_u64(c, LoadLE64(p + 16));
  c = _mm_crc32_u64(c, LoadLE64(p + 24));
  return _mm_crc32_u64(c, LoadLE64(p + 32));
}

// The state after `state` and one chunk of k iterations (k * kFusionStep bytes at p).
KVBENCH_TARGET_FOLD512 inline uint32_t FusionChunk(uint32_t state, const char* p, size_t k) {
  const size_t lane = kFusionLaneStep * k;
  const char* a = p + kStep * k;
  const __m512i first = _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(state)));
  __m512i x0 = _mm512_xor_si512(Load512(p), first), x1 = Load512(p + 64), x2 = Load512(p + 128),
          x3 = Load512(p + 192);
  uint64_t sa = Crc40(0, a), sb = Crc40(0, a + lane), sc = Crc40(0, a + 2 * lane);
  const __m512i k_step = Broadcast512(kFoldStep);
  for (size_t i = 1; i < k; ++i) {
    const char* q = p + kStep * i;
    x0 = Fold512(x0, k_step, Load512(q));
    x1 = Fold512(x1, k_step, Load512(q + 64));
    x2 = Fold512(x2, k_step, Load512(q + 128));
    x3 = Fold512(x3, k_step, Load512(q + 192));
    const char* l = a + kFusionLaneStep * i;
    sa = Crc40(sa, l);
    sb = Crc40(sb, l + lane);
    sc = Crc40(sc, l + 2 * lane);
  }
  x3 = Fold512(x0, Broadcast512(kFold1536),
               Fold512(x1, Broadcast512(kFold1024), Fold512(x2, Broadcast512(kFold512), x3)));
  const uint32_t folded = Finish128(Merge512(x3));
  const FusionShifts& s = kFusionShifts[k];
  const uint64_t moved = ClMul(folded, s.folded) ^ ClMul(static_cast<uint32_t>(sa), s.lane_a) ^
                         ClMul(static_cast<uint32_t>(sb), s.lane_b);
  return static_cast<uint32_t>(_mm_crc32_u64(0, moved)) ^ static_cast<uint32_t>(sc);
}

}  // namespace

// REQUIRES (every kernel here): what Resolve() checks.
KVBENCH_CRC32C_KERNEL KVBENCH_TARGET_FOLD512 uint32_t ExtendFold512(uint32_t init_crc,
                                                                    const char* p, size_t n) {
  if (n < kMinFoldBytes) return ExtendHw3(init_crc, p, n);
  return ~FoldState512(~init_crc, p, n);
}

// Chunks of up to kFusionMaxIters iterations; what remains (under one iteration) goes through
// fold_512's folding, or hw_3way under 256 bytes.
KVBENCH_CRC32C_KERNEL KVBENCH_TARGET_FOLD512 uint32_t ExtendFusion512(uint32_t init_crc,
                                                                      const char* p, size_t n) {
  if (n < kMinFusionBytes) return ExtendFold512(init_crc, p, n);
  uint32_t state = ~init_crc;
  while (n >= kFusionStep) {
    const size_t k = std::min(n / kFusionStep, kFusionMaxIters);
    state = FusionChunk(state, p, k);
    p += k * kFusionStep;
    n -= k * kFusionStep;
  }
  if (n >= kStep) return ~FoldState512(state, p, n);
  return ExtendHw3(~state, p, n);
}

// The same with eight 256-bit registers: the same 256-byte step and distance, 32-byte remainder
// steps. Eight named registers, not an array: gcc 12 kept an array on the stack and looped over
// it, which ran no faster than hw_3way.
KVBENCH_CRC32C_KERNEL KVBENCH_TARGET_FOLD256 uint32_t ExtendFold256(uint32_t init_crc,
                                                                    const char* p, size_t n) {
  if (n < kMinFoldBytes) return ExtendHw3(init_crc, p, n);
  const __m256i first = _mm256_zextsi128_si256(_mm_cvtsi32_si128(static_cast<int>(~init_crc)));
  __m256i x0 = _mm256_xor_si256(Load256(p), first), x1 = Load256(p + 32), x2 = Load256(p + 64),
          x3 = Load256(p + 96), x4 = Load256(p + 128), x5 = Load256(p + 160), x6 = Load256(p + 192),
          x7 = Load256(p + 224);
  p += kStep;
  n -= kStep;
  const __m256i k = Broadcast256(kFoldStep);
  for (; n >= kStep; p += kStep, n -= kStep) {
    x0 = Fold256(x0, k, Load256(p));
    x1 = Fold256(x1, k, Load256(p + 32));
    x2 = Fold256(x2, k, Load256(p + 64));
    x3 = Fold256(x3, k, Load256(p + 96));
    x4 = Fold256(x4, k, Load256(p + 128));
    x5 = Fold256(x5, k, Load256(p + 160));
    x6 = Fold256(x6, k, Load256(p + 192));
    x7 = Fold256(x7, k, Load256(p + 224));
  }
  // Register i moves forward by (7 - i) * 256 bits onto register 7, in two independent chains.
  x7 = Fold256(x6, Broadcast256(kFold256), Fold256(x4, Broadcast256(kFold768), x7));
  x7 = Fold256(x2, Broadcast256(kFold1280), Fold256(x0, Broadcast256(kFold1792), x7));
  x5 = Fold256(x3, Broadcast256(kFold512), x5);
  x5 = Fold256(x1, Broadcast256(kFold1024), x5);
  x7 = Fold256(x5, Broadcast256(kFold512), x7);
  const __m256i k_32 = Broadcast256(kFold256);
  for (; n >= 32; p += 32, n -= 32) x7 = Fold256(x7, k_32, Load256(p));
  return ~Tail(Finish128(Merge256(x7)), p, n);
}

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench

#endif  // KVBENCH_CRC32C_X86
