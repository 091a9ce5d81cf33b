// crc32c by folding: the method and its constants, derived here at compile time. Private to the
// folding kernels (crc32c_x86_fold.cc, crc32c_arm_fold.cc) and their tests.
//
// The method is the one of Intel's white paper "Fast CRC Computation for Generic Polynomials
// Using PCLMULQDQ Instruction" (Gopal et al., 2009), as ISA-L and the Linux kernel's crc code
// use it; the constants below are derived from first principles, not copied.
//
// Notation. Bits are reflected, as crc32c is: the first message bit is the highest power of x.
// A 128-bit lane loaded little-endian from 16 message bytes therefore holds the polynomial
//   X = H * x^64 + L,   H = its low 64-bit half, L = its high half,
// where a 64-bit half holds x^63 in bit 0 and x^0 in bit 63. A 32-bit value r(K) holds x^31 in
// bit 0 and x^0 in bit 31 (kPoly, MulX and the table kernel use the same convention). Placed in
// the low half of a 64-bit operand it stands for K * x^32, and a carry-less multiply of two
// reflected halves yields their product times x (the result is one bit short of 128). So
//   clmul(H, r(K)) = H * K * x^33.
//
// Folding. Let a lane hold X for the bytes at some offset and the next bytes of the message at
// D bits further on. The message so far, seen from the end of those later bytes, contributes
// X * x^D = H * x^(D+64) + L * x^D, and modulo P (all a CRC cares about) that is
//   H * (x^(D+31) mod P) * x^33 + L * (x^(D-33) mod P) * x^33
//   = clmul(H, r(x^(D+31) mod P)) + clmul(L, r(x^(D-33) mod P)),
// a value under 96 bits that XORs straight into the 128 bits loaded at D. Kernels keep many
// lanes in flight (four 512-bit registers on x86 are sixteen lanes: D = 2048 for a 256-byte
// step), fold the lanes into one at the end with shorter distances, and never need a carry.
//
// Starting and finishing. crc32c's state c over a message M of m bits becomes
// (c * x^m + M * x^32) mod P; XORing c into M's first 32 bits gives the first term for free.
// At the end the remaining lane X (deg < 128) must become X * x^32 mod P, which is exactly what
// the CRC32C instruction computes from state 0 over X's two halves:
//   crc32q(crc32q(0, H), L) = (H * x^96 + L * x^32) mod P.
// That replaces the Barrett reduction a generic-polynomial implementation needs, and the state
// goes on through the CRC32C instruction over the last bytes that do not fill a step.
#pragma once

#include <cstddef>
#include <cstdint>

#include "crc32c/crc32c_internal.h"

namespace kvbench {
namespace crc32c {
namespace internal {

// Inputs shorter than this go to hw_3way: the folding kernels' fixed cost (loading the
// constants, merging lanes, two CRC32C instructions) is not worth it below one full step.
constexpr size_t kMinFoldBytes = 256;
// fusion_512 (x86) hands inputs shorter than this to fold_512: its three extra streams need a
// few iterations to pay for their combination.
constexpr size_t kMinFusionBytes = 1024;

// a * b mod P, reflected.
constexpr uint32_t MulModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int i = 0; i < 32; ++i) {  // b = (original b) * x^i
    if (a & (0x80000000u >> i)) product ^= b;
    b = MulX(b);
  }
  return product;
}

// x^n mod P, reflected, by square-and-multiply.
constexpr uint32_t XPowModP(uint64_t n) {
  uint32_t result = 0x80000000u;  // x^0
  uint32_t square = 0x40000000u;  // x^1, x^2, x^4, ...
  for (; n != 0; n >>= 1) {
    if (n & 1) result = MulModP(result, square);
    square = MulModP(square, square);
  }
  return result;
}

// The multipliers that fold a 128-bit lane forward by `bits` (the derivation above): `low` for
// the lane's low 64-bit half (H), `high` for its high half (L). Kernels lay them out as a lane
// themselves, {low, high}, so one carry-less multiply selects low*low and another high*high.
struct FoldConstants {
  uint64_t low;   // r(x^(bits+31) mod P)
  uint64_t high;  // r(x^(bits-33) mod P)
};

constexpr FoldConstants FoldBy(size_t bits) { return {XPowModP(bits + 31), XPowModP(bits - 33)}; }

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench
