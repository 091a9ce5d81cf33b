// CRC-32C (Castagnoli), as used by iSCSI (RFC 3720), ext4, RocksDB and LevelDB: kvbench's own
// implementations, so that kvbench_micro (bench/) can show what the compiler and the CPU do to a
// checksum loop; kvbench records which one Extend() chooses on the host. The KV workloads do not
// checksum anything themselves; the engines use their own crc32c.
//
// Extend() and Value() use, for each size class of input, the implementation that measured
// fastest on this CPU when the process first needed one (or the one KVBENCH_CRC32C names): see
// "How Extend() chooses" below. The rest of this header lists every implementation so that
// kvbench_micro and the tests can run each one by name:
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

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace kvbench {
namespace crc32c {

// Returns the crc32c of concat(A, data[0,n-1]) where init_crc is the crc32c of some string A.
// Same contract as Extend().
using ExtendFn = uint32_t (*)(uint32_t init_crc, const char* data, size_t n);

namespace internal {
// Extend()'s table (crc32c_dispatch.cc): entry z holds the kernel for the lengths n with z
// leading zero bits (all of them in one size class; entry 64 is n = 0). Until the first call fills
// it, every entry holds ExtendFirst. Relaxed atomics: an entry holds one function or another, and
// code needs no publishing.
extern std::array<std::atomic<ExtendFn>, 65> extend_by_leading_zeros;
// The first call: makes the choice (CurrentChoice()), fills the table, then computes.
uint32_t ExtendFirst(uint32_t init_crc, const char* data, size_t n);
}  // namespace internal

// Returns the crc32c of concat(A, data[0,n-1]) where init_crc is the crc32c of some string A.
// Calls the kernel CurrentChoice() chose for n's size class. The first call makes the choice
// (about 5 ms); later calls add a table lookup to the kernel's own cost, inline at the call site
// (two instructions, no extra call). If KVBENCH_CRC32C names a kernel that cannot run here,
// the first call prints why to stderr and exits with status 2 (programs call CurrentChoice()
// first to say it their own way).
inline uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  static_assert(sizeof(unsigned long long) == 8 && sizeof(size_t) <= 8, "64-bit lengths");
  // One lzcnt where the target has it (which defines the count of 0 as 64).
  const int zeros = n == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(n));
  return internal::extend_by_leading_zeros[zeros].load(std::memory_order_relaxed)(init_crc, data,
                                                                                  n);
}

// The crc32c of data[0,n-1].
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

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
  // Below this length the kernel hands the input to another listed kernel (the folding kernels
  // to hw_3way under 256 B, fusion_512 to fold_512 under 1 KiB): there it is that kernel plus a
  // branch, never faster, so the calibration does not time it there. 0: it never does.
  size_t hands_below = 0;
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

// ---- How Extend() chooses (crc32c_dispatch.cc; docs/micro.md has the design) ----
//
// Lengths fall into size classes and each class has its own kernel: which kernel is fastest
// depends on the CPU and on the length (short inputs favour a kernel with little set-up, long
// ones the widest folding), and no fixed rule encodes that for every CPU. So the first time the
// process needs a choice it times every kernel this CPU runs at one probe length per class, in
// interleaved bursts (each kernel warmed up, then timed), the best of many timings, discarding
// the bursts during which the thread was switched out, and takes the fastest per class.
// KVBENCH_CRC32C=<kernel> forces one kernel for every class.

// A size class holds the lengths from min_bytes up to the next class's min_bytes - 1 (the last:
// up to any length). The bounds are powers of two, so Extend() finds a length's class from its
// bit width.
struct SizeClass {
  size_t min_bytes;
  size_t probe_bytes;  // the length the calibration times for the class
};
constexpr size_t kSizeClassCount = 5;
inline constexpr std::array<SizeClass, kSizeClassCount> kSizeClasses = {
    {{0, 64}, {128, 256}, {512, 1024}, {2048, 4096}, {16384, 65536}}};

// The index in kSizeClasses of the class holding length n.
size_t SizeClassOf(size_t n);

// "0-127 B", "128-511 B", ..., "16384+ B": the lengths of class `c`.
std::string SizeClassName(size_t c);

// The environment variable that forces a kernel, and the calibration's bounds: it stops when
// every kernel has kCleanBurstsWanted uninterrupted bursts (4-5 ms of CPU on a Zen 5), and at
// the latest after kCalibrationBudgetSeconds of CPU time or, under load, kCalibrationWallSeconds
// of wall time (between two bursts).
constexpr char kForceVariable[] = "KVBENCH_CRC32C";
constexpr double kCalibrationBudgetSeconds = 0.010;
constexpr double kCalibrationWallSeconds = 0.050;
constexpr int kCleanBurstsWanted = 16;

// The most implementations any architecture has (Implementations()' count is at most this).
constexpr size_t kMaxImplementations = 8;

// Bytes per second of each implementation (by its index in Implementations()) at each size
// class's probe length; 0 for one that was not measured (this CPU or build cannot run it).
using Rates = std::array<std::array<double, kMaxImplementations>, kSizeClassCount>;

enum class ChosenBy {
  kMeasured,  // the fastest per class, by `rates`
  kForced,    // KVBENCH_CRC32C named it
  kOnlyOne,   // nothing to choose: one implementation runs here (`table`, on old CPUs)
};

// "measured", "forced" or "only one runs here".
const char* ChosenByName(ChosenBy how);

struct Choice {
  ChosenBy chosen_by = ChosenBy::kMeasured;
  std::array<const Implementation*, kSizeClassCount> kernel{};  // the kernel of each size class
  Rates rates{};        // kMeasured: the best timing per kernel and class
  int repeats = 0;      // kMeasured: timings of the contenders per class (the fewest any one had)
  int interrupted = 0;  // bursts discarded: the thread was switched out in them
  double calibration_seconds = 0;       // this thread's CPU time spent measuring
  double calibration_wall_seconds = 0;  // and the wall time it took (longer under load)
  // Set when KVBENCH_CRC32C names an unknown kernel or one this CPU or build cannot run: why,
  // and the kernels that do run. `kernel` is then not to be used.
  std::string error;
};

// Per size class, the implementation with the highest rate among those with a rate above 0; a
// tie goes to the one listed first. REQUIRES: every class has a rate above 0.
std::array<const Implementation*, kSizeClassCount> FastestByRates(const Rates& rates);

// Times every implementation that `cpu` runs at each class's probe length (not where it hands
// the length to another kernel: Implementation::hands_below) and chooses by FastestByRates.
// Each round gives every kernel one burst, in an order that rotates between rounds (A B C, B C A,
// ...): the kernel runs untimed for a few tens of microseconds, as a benchmark's steady loop runs
// it (wide vector units powered up, branches predicted, code and data in cache), then is timed
// twice at each class. A burst during which the thread was switched out is discarded (its
// kernel may have been measured cold after the switch); a kernel's rate is its best timing of
// the rest (the minimum: noise only ever adds time). After three rounds a kernel more than 2x
// slower than a class's best stops being timed for that class. Rounds continue until every
// kernel has kCleanBurstsWanted kept bursts, `budget_seconds` of this thread's CPU time or
// kCalibrationWallSeconds of wall time is spent (checked between bursts); the first round always
// completes. Only reads `cpu`; thread-safe.
Choice Calibrate(const CpuFeatures& cpu, double budget_seconds);

// The choice KVBENCH_CRC32C=`name` makes: that kernel for every class, or `error` saying why not
// (unknown, not compiled, or the CPU lacks an instruction) and listing the kernels that run.
Choice Force(const std::string& name, const CpuFeatures& cpu);

// The choice Extend() uses, made once per process on the first call of either: Force() when
// KVBENCH_CRC32C is set and not empty, else Calibrate(DetectCpu(), kCalibrationBudgetSeconds).
// Thread-safe; later calls return the same object.
const Choice& CurrentChoice();

// The kernel of each class: "0-127 B hw_1way, 128-511 B fold_512, ...", or "hw_1way for every
// length" (forced, or the only one), or the error.
std::string DescribeChoice(const Choice& choice);

// How the choice was made: "measured: best of 32 timings per kernel and size class (2 bursts
// interrupted, discarded), 3.01 ms of CPU in 8.10 ms", "forced by KVBENCH_CRC32C=hw_1way" or
// "only one runs here".
std::string DescribeHow(const Choice& choice);

// Class `c`'s measured rates, fastest first: "fusion_512 78.8, fold_512 61.9, ... GB/s at 4096 B";
// "" unless the choice was measured.
std::string DescribeRates(const Choice& choice, size_t c);

}  // namespace crc32c
}  // namespace kvbench
