// crc32c: the implementation table, CPU detection and the checked way to a kernel (Resolve).
// Extend()'s choice is crc32c_dispatch.cc's; the kernels are in crc32c_table.cc, crc32c_x86.cc,
// crc32c_x86_fold.cc, crc32c_arm.cc and crc32c_arm_fold.cc.
#include "crc32c/crc32c.h"

#include "common/build_info.h"
#include "crc32c/crc32c_fold.h"
#include "crc32c/crc32c_internal.h"

#if defined(KVBENCH_CRC32C_ARM) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace kvbench {
namespace crc32c {

namespace {

using internal::ExtendTable;

#if defined(KVBENCH_CRC32C_X86)
constexpr Implementation kImplementations[] = {
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, 0},
    {"hw_1way", "SSE4.2 crc32q, 1 stream (target attribute, runtime check)", internal::ExtendHw1,
     nullptr, kCrc32cInsn},
    {"hw_3way",
     "SSE4.2 crc32q, 3 streams combined with PCLMULQDQ (target attribute, runtime check)",
     internal::ExtendHw3, nullptr, kCrc32cInsn | kClmul},
    {"fold_256",
     "VPCLMULQDQ folding, 8 x 256-bit registers (AVX2); under 256 B: hw_3way (target "
     "attribute, runtime check)",
     internal::ExtendFold256, nullptr, kCrc32cInsn | kClmul | kClmul256, internal::kMinFoldBytes},
    {"fold_512",
     "VPCLMULQDQ folding, 4 x 512-bit registers (AVX-512); under 256 B: hw_3way (target "
     "attribute, runtime check)",
     internal::ExtendFold512, nullptr, kCrc32cInsn | kClmul | kClmul512, internal::kMinFoldBytes},
    {"fusion_512",
     "fold_512's folding beside 3 crc32q streams, from 1 KiB; below: fold_512 (target "
     "attribute, runtime check)",
     internal::ExtendFusion512, nullptr, kCrc32cInsn | kClmul | kClmul512,
     internal::kMinFusionBytes},
};
#elif defined(KVBENCH_CRC32C_ARM)
constexpr const char* kPmullFold = "PMULL folding, 8 x 128-bit registers; under 256 B: hw_3way";
constexpr const char* kEor3Fold =
    "PMULL folding with EOR3 (SHA3, inline assembly, runtime check), 8 x 128-bit registers; "
    "under 256 B: hw_3way";
constexpr unsigned kPmullNeeds = kCrc32cInsn | kClmul;
constexpr Implementation kImplementations[] = {
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, 0},
    {"hw_1way", "ARMv8 crc32cx, 1 stream", internal::ExtendHw1, nullptr, kCrc32cInsn},
#if defined(KVBENCH_CRC32C_ARM_PMULL)
    {"hw_3way", "ARMv8 crc32cx, 3 streams combined with PMULL", internal::ExtendHw3, nullptr,
     kPmullNeeds},
    {"fold_pmull", kPmullFold, internal::ExtendFoldPmull, nullptr, kPmullNeeds,
     internal::kMinFoldBytes},
    {"fold_eor3", kEor3Fold, internal::ExtendFoldEor3, nullptr, kPmullNeeds | kEor3,
     internal::kMinFoldBytes},
#else
    {"hw_3way", "ARMv8 crc32cx, 3 streams combined with PMULL", nullptr, "+crypto", kPmullNeeds},
    {"fold_pmull", kPmullFold, nullptr, "+crypto", kPmullNeeds, internal::kMinFoldBytes},
    {"fold_eor3", kEor3Fold, nullptr, "+crypto", kPmullNeeds | kEor3, internal::kMinFoldBytes},
#endif
};
#else
constexpr Implementation kImplementations[] = {
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, 0},
#if defined(__aarch64__)
    {"hw_1way", "CRC32C instruction, 1 stream", nullptr, "+crc", kCrc32cInsn},
    {"hw_3way", "CRC32C instruction, 3 streams + carry-less multiply", nullptr, "+crc",
     kCrc32cInsn | kClmul},
#else
    {"hw_1way", "CRC32C instruction, 1 stream", nullptr, nullptr, kCrc32cInsn},
    {"hw_3way", "CRC32C instruction, 3 streams + carry-less multiply", nullptr, nullptr,
     kCrc32cInsn | kClmul},
#endif
};
#endif

constexpr size_t kCount = sizeof(kImplementations) / sizeof(kImplementations[0]);
static_assert(kCount <= kMaxImplementations, "raise kMaxImplementations");

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(KVBENCH_CRC32C_X86)
  // __builtin_cpu_supports also checks that the OS saves the AVX and AVX-512 register state.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.2")) f.has |= kCrc32cInsn;
  if (__builtin_cpu_supports("pclmul")) f.has |= kClmul;
  const bool vpclmul = __builtin_cpu_supports("vpclmulqdq");
  if (vpclmul && __builtin_cpu_supports("avx2")) f.has |= kClmul256;
  if (vpclmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    f.has |= kClmul512;
  }
#elif defined(KVBENCH_CRC32C_ARM) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  if (hwcap & HWCAP_CRC32) f.has |= kCrc32cInsn;
  if (hwcap & HWCAP_PMULL) f.has |= kClmul;
  if (hwcap & HWCAP_SHA3) f.has |= kEor3;
#elif defined(KVBENCH_CRC32C_ARM)
  // No portable way to ask outside Linux; trust what the build targets.
  f.has |= kCrc32cInsn;
#if defined(KVBENCH_CRC32C_ARM_PMULL)
  f.has |= kClmul;
#endif
#if defined(__ARM_FEATURE_SHA3)
  f.has |= kEor3;
#endif
#endif
  return f;
}

// The first feature in `needs` that `cpu` lacks, or 0.
unsigned Lacking(const Implementation& impl, const CpuFeatures& cpu) {
  const unsigned missing = impl.needs & ~cpu.has;
  return missing & (~missing + 1);  // lowest set bit
}

}  // namespace

const char* FeatureName(Feature f) {
#if defined(__x86_64__) || defined(__i386__)
  switch (f) {
    case kCrc32cInsn:
      return "SSE4.2 (crc32)";
    case kClmul:
      return "PCLMULQDQ";
    case kClmul256:
      return "VPCLMULQDQ on 256-bit registers (VPCLMULQDQ, AVX2)";
    case kClmul512:
      return "VPCLMULQDQ on 512-bit registers (VPCLMULQDQ, AVX-512F, AVX-512VL)";
    case kEor3:
      return "EOR3 (an ARM instruction)";
  }
#else
  switch (f) {
    case kCrc32cInsn:
      return "the ARMv8 CRC32 instructions";
    case kClmul:
      return "PMULL";
    case kClmul256:
    case kClmul512:
      return "VPCLMULQDQ (an x86 instruction)";
    case kEor3:
      return "EOR3 (the SHA3 extension)";
  }
#endif
  return "an unnamed feature";
}

const CpuFeatures& DetectCpu() {
  static const CpuFeatures features = Detect();
  return features;
}

const Implementation* Implementations(size_t* count) {
  *count = kCount;
  return kImplementations;
}

const Implementation* Find(const std::string& name) {
  for (const Implementation& impl : kImplementations) {
    if (name == impl.name) return &impl;
  }
  return nullptr;
}

std::string NotCompiledReason(const std::string& arch_flags, const char* extension,
                              const char* insn) {
  const std::string flags = arch_flags.empty() ? "the compiler's default target" : arch_flags;
  std::string why =
      "not compiled: this build's target flags (" + flags + ") do not enable " + insn + "; ";
  if (arch_flags.find("native") != std::string::npos) {
    return why + "'native' named a CPU without it (under qemu-user it resolves to a generic " +
           "ARMv8.0 part): build for a named CPU that has it, e.g. -mcpu=neoverse-n1";
  }
  if (arch_flags.find(extension) != std::string::npos) {
    return why + "the flags ask for " + extension + " but the compiler did not enable it";
  }
  return why + "add " + extension + " to -march or -mcpu, or build on the machine with " +
         "-mcpu=native (the arm-*-native presets)";
}

ExtendFn Resolve(const Implementation& impl, const CpuFeatures& cpu, std::string* why) {
  if (impl.extend == nullptr) {
    *why = std::string("crc32c/") + impl.name + " is ";
    if (impl.missing_extension == nullptr) {
      *why += "not compiled: kvbench has hardware crc32c for x86-64 and AArch64 only";
    } else {
      const Feature insn =
          std::string(impl.missing_extension) == "+crc" ? kCrc32cInsn : kClmul;  // or "+crypto"
      *why +=
          NotCompiledReason(GetBuildInfo().arch_flags, impl.missing_extension, FeatureName(insn));
    }
    return nullptr;
  }
  const unsigned lacking = Lacking(impl, cpu);
  if (lacking != 0) {
    *why = std::string("crc32c/") + impl.name + " refused: this CPU lacks " +
           FeatureName(static_cast<Feature>(lacking)) + " (running it would die with SIGILL)";
    return nullptr;
  }
  return impl.extend;
}

}  // namespace crc32c
}  // namespace kvbench
