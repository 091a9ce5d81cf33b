// CRC-32C (Castagnoli), as used by iSCSI (RFC 3720), ext4, RocksDB and LevelDB: kvbench_micro's
// own implementations, so that it can show what the compiler and the CPU do to a checksum loop.
// The KV workloads do not checksum anything themselves; the engines use their own crc32c.
//
// Extend() and Value() use the fastest implementation this build and this CPU support. The rest
// of this header lists every implementation so that kvbench_micro and the tests can run each one
// by name:
//
//   table       portable slicing-by-8 tables; compiled with the preset's flags, runs anywhere.
//   hw_1way     the CPU's CRC32C instruction in one dependent stream
//               (x86: SSE4.2 crc32q; ARM: ARMv8 crc32cx).
//   hw_3way     the instruction in three interleaved streams whose CRCs are combined with a
//               carry-less multiply (x86: PCLMULQDQ; ARM: PMULL), the scheme RocksDB uses.
//   fold_256    x86: folding 256 bytes per step with VPCLMULQDQ on 256-bit registers (AVX2).
//   fold_512    x86: the same on 512-bit registers (AVX-512).
//   fusion_512  x86: fold_512's folding with three crc32q streams beside it, so that the
//               carry-less multiplier and the CRC32C instruction both work (from 1 KiB).
//   fold_pmull  ARM: folding 128 bytes per step with PMULL on 128-bit registers.
//   fold_eor3   ARM: the same, each fold's two exclusive ors merged into one EOR3 (SHA3).
// The folding kernels hand inputs under 256 bytes to hw_3way and finish the last bytes with the
// CRC32C instruction (crc32c_fold.h explains the method).
//
// How the hardware code gets into the binary (see crc32c_x86*.cc / crc32c_arm*.cc):
// - x86-64: always compiled, with function-level target attributes (sse4.2, pclmul, avx2,
//   avx512f, vpclmulqdq), because the portable presets target baseline x86-64, which has none of
//   them. A runtime CPU check guards every call, so a portable binary uses an instruction where
//   the CPU has it and falls back to `table` where it does not.
// - AArch64: compiled only when the build targets the instructions (__ARM_FEATURE_CRC32, and
//   __ARM_FEATURE_CRYPTO/__ARM_FEATURE_AES for PMULL); every ARM preset enables +crc. EOR3 is
//   emitted by inline assembly in every build with PMULL, so that a build for an ARMv8.2 baseline
//   still uses it where the CPU has SHA3. A runtime check (getauxval) guards every call.
//
// Thread-safety: every function here may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvbench {
namespace crc32c {

// Returns the crc32c of concat(A, data[0,n-1]) where init_crc is the crc32c of some string A.
// Uses the fastest implementation this build and CPU support.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// The crc32c of data[0,n-1].
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// Same contract as Extend().
using ExtendFn = uint32_t (*)(uint32_t init_crc, const char* data, size_t n);

// The CPU features a kernel may need, as bits of CpuFeatures::has and Implementation::needs.
enum Feature : unsigned {
  kCrc32cInsn = 1u << 0,  // a CRC32C instruction (x86 SSE4.2, ARMv8 CRC32)
  kClmul = 1u << 1,       // 64x64 carry-less multiply (x86 PCLMULQDQ, ARMv8 PMULL)
  kClmul256 = 1u << 2,    // x86: VPCLMULQDQ on 256-bit registers, with AVX2
  kClmul512 = 1u << 3,    // x86: VPCLMULQDQ on 512-bit registers, with AVX-512F and AVX-512VL
  kEor3 = 1u << 4,        // ARM: EOR3, a three-way exclusive or (ARMv8.2 SHA3)
};

// What the running CPU (and its operating system, for the wide register state) offers, as far as
// crc32c is concerned.
struct CpuFeatures {
  unsigned has = 0;  // Feature bits
  bool Has(Feature f) const { return (has & f) != 0; }
};

// The features of the CPU this process runs on (detected once).
const CpuFeatures& DetectCpu();

// The name of `f` on the architecture of this build, e.g. "VPCLMULQDQ on 512-bit registers
// (AVX-512F, AVX-512VL)" or "PMULL".
const char* FeatureName(Feature f);

struct Implementation {
  const char* name;         // stable: "table", "hw_1way", ... (the list above)
  const char* description;  // what runs, on this architecture, e.g. "SSE4.2 crc32q, 1 stream"
  // nullptr when this build does not contain the implementation (wrong architecture, or the
  // target flags do not enable the instruction); Resolve() then says why.
  ExtendFn extend;
  // When `extend` is nullptr on AArch64: the target extension the flags lack ("+crc",
  // "+crypto"); nullptr on an architecture without hardware kernels.
  const char* missing_extension;
  unsigned needs;  // Feature bits the CPU must have before `extend` may be called
};

// Every implementation, in the order above (slowest first). `count` receives the length.
const Implementation* Implementations(size_t* count);

// The implementation called `name`, or nullptr.
const Implementation* Find(const std::string& name);

// Returns impl.extend if it is in this build and `cpu` has what it needs. Otherwise returns
// nullptr and sets *why to a sentence a user can act on. This is the only checked way to get an
// implementation's function; calling `extend` on a CPU without the instruction would crash
// with SIGILL.
ExtendFn Resolve(const Implementation& impl, const CpuFeatures& cpu, std::string* why);
inline ExtendFn Resolve(const Implementation& impl, std::string* why) {
  return Resolve(impl, DetectCpu(), why);
}

// Why a kernel needing the target extension `extension` (e.g. "+crypto", for `insn`, e.g.
// "PMULL") is not in a build compiled with `arch_flags` (e.g. "-mcpu=native"), and what to
// change. Never recommends a flag `arch_flags` already has: -mcpu=native, for one, can name a
// CPU without the extension (under qemu-user it resolves to a generic ARMv8.0 part).
std::string NotCompiledReason(const std::string& arch_flags, const char* extension,
                              const char* insn);

// The implementation Extend() dispatches to on this CPU.
const Implementation& Selected();

}  // namespace crc32c
}  // namespace kvbench
