// Private to the crc32c implementation files: which implementations this build contains, their
// entry points, and the constants the 3-stream combination needs. Users include crc32c.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

// Which hardware implementations are compiled (see crc32c.h for the policy).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KVBENCH_CRC32C_X86 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KVBENCH_CRC32C_ARM 1
#if defined(__ARM_FEATURE_CRYPTO) || defined(__ARM_FEATURE_AES)
#define KVBENCH_CRC32C_ARM_PMULL 1
#endif
#endif

// Every kernel starts on a 64-byte boundary. Otherwise where the linker happens to place it
// decides whether a hot loop straddles a fetch window: on the AMD EPYC this was measured on, the
// 3-stream loop ran at 16 instead of 21 GB/s after an unrelated file changed size. Aligned, a
// kernel's speed depends on the compiler and its flags only, which is what kvbench_micro shows.
#define KVBENCH_CRC32C_KERNEL __attribute__((aligned(64)))

namespace kvbench {
namespace crc32c {
namespace internal {

constexpr uint32_t kPoly = 0x82f63b78u;  // Castagnoli polynomial, bit-reflected

// v * x mod P, reflected (bit 31 holds x^0, bit 0 holds x^31).
constexpr uint32_t MulX(uint32_t v) { return (v & 1) ? (v >> 1) ^ kPoly : v >> 1; }

uint32_t ExtendTable(uint32_t init_crc, const char* data, size_t n);
#if defined(KVBENCH_CRC32C_X86) || defined(KVBENCH_CRC32C_ARM)
uint32_t ExtendHw1(uint32_t init_crc, const char* data, size_t n);
#endif
#if defined(KVBENCH_CRC32C_X86) || defined(KVBENCH_CRC32C_ARM_PMULL)
uint32_t ExtendHw3(uint32_t init_crc, const char* data, size_t n);
#endif
#if defined(KVBENCH_CRC32C_X86)
uint32_t ExtendFold256(uint32_t init_crc, const char* data, size_t n);
uint32_t ExtendFold512(uint32_t init_crc, const char* data, size_t n);
uint32_t ExtendFusion512(uint32_t init_crc, const char* data, size_t n);
#endif
#if defined(KVBENCH_CRC32C_ARM_PMULL)
uint32_t ExtendFoldPmull(uint32_t init_crc, const char* data, size_t n);
uint32_t ExtendFoldEor3(uint32_t init_crc, const char* data, size_t n);
#endif

inline uint64_t LoadLE64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

// The 3-stream scheme. A block is split into three lanes of `w` 8-byte words each. Lane A starts
// from the running CRC, lanes B and C from 0, and the CRC of the whole block is
//   crc(A) * x^(2*64w) + crc(B) * x^(64w) + crc(C)   (mod P).
// A 32x32 carry-less multiply of reflected values yields x * a * b, and crc32 of a 64-bit word
// v from state 0 yields v * x^32, so clmul(crc, x^(n-33) mod P) fed through crc32 is
// crc * x^n mod P. kShiftConstants[w] holds {x^(128w-33), x^(64w-33)} mod P, reflected.
constexpr size_t kMaxLaneWords = 256;  // lanes up to 2 KiB: a 4 KiB block is one 3-way pass
constexpr size_t kMinLaneWords = 4;    // below this one stream is as fast

struct ShiftConstants {
  uint32_t lane_a;  // x^(128w - 33) mod P
  uint32_t lane_b;  // x^(64w - 33) mod P
};

constexpr std::array<ShiftConstants, kMaxLaneWords + 1> MakeShiftConstants() {
  std::array<ShiftConstants, kMaxLaneWords + 1> out{};
  uint32_t v = 0x80000000u;  // x^0, reflected
  // Walk n = 0, 1, 2, ... multiplying by x, and record x^n at the exponents we need.
  for (size_t n = 0; n + 33 <= 128 * kMaxLaneWords; ++n) {
    if ((n + 33) % 64 == 0) {
      const size_t w = (n + 33) / 64;  // n = 64w - 33 (lane B) or 128(w/2) - 33 (lane A)
      if (w <= kMaxLaneWords) out[w].lane_b = v;
      if (w % 2 == 0) out[w / 2].lane_a = v;
    }
    v = MulX(v);
  }
  return out;
}

inline constexpr std::array<ShiftConstants, kMaxLaneWords + 1> kShiftConstants =
    MakeShiftConstants();

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench
