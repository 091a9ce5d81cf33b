// CRC-32C (Castagnoli), as used by iSCSI (RFC 3720), ext4, RocksDB and LevelDB.
//
// Extend() and Value() use the fastest implementation this build and this CPU support; that is
// all the KV workloads need. The rest of this header lists every implementation so that
// kvbench_micro and the tests can run each one by name:
//
//   table    portable slicing-by-8 tables; compiled with the preset's flags, runs anywhere.
//   hw_1way  the CPU's CRC32C instruction in one dependent stream
//            (x86: SSE4.2 crc32q; ARM: ARMv8 crc32cx).
//   hw_3way  the instruction in three interleaved streams whose CRCs are combined with a
//            carry-less multiply (x86: PCLMULQDQ; ARM: PMULL), the scheme RocksDB uses.
//
// How the hardware code gets into the binary (see crc32c_x86.cc / crc32c_arm.cc):
// - x86-64: always compiled, with function-level target attributes (sse4.2, pclmul), because the
//   portable presets target baseline x86-64, which has neither instruction. A runtime CPU check
//   guards every call, so a portable binary uses the instruction where the CPU has it and falls
//   back to `table` where it does not.
// - AArch64: compiled only when the build targets the instructions (__ARM_FEATURE_CRC32, and
//   __ARM_FEATURE_CRYPTO/__ARM_FEATURE_AES for PMULL); every ARM preset enables +crc. A runtime
//   check (getauxval) still guards the call.
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

// What the running CPU offers, as far as crc32c is concerned.
struct CpuFeatures {
  bool crc32c = false;  // a CRC32C instruction (x86 SSE4.2, ARMv8 CRC32)
  bool clmul = false;   // 64x64 carry-less multiply (x86 PCLMULQDQ, ARMv8 PMULL)
};

// The features of the CPU this process runs on (detected once).
const CpuFeatures& DetectCpu();

struct Implementation {
  const char* name;         // stable: "table", "hw_1way", "hw_3way"
  const char* description;  // what runs, on this architecture, e.g. "SSE4.2 crc32q, 1 stream"
  // nullptr when this build does not contain the implementation (wrong architecture, or the
  // target flags do not enable the instruction); `missing` then says why.
  ExtendFn extend;
  const char* missing;
  bool needs_crc32c;  // CPU requirements checked before `extend` may be called
  bool needs_clmul;
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

// The implementation Extend() dispatches to on this CPU.
const Implementation& Selected();

}  // namespace crc32c
}  // namespace kvbench
