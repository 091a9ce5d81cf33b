// crc32c: the implementation table, CPU detection and dispatch. The kernels are in
// crc32c_table.cc, crc32c_x86.cc and crc32c_arm.cc.
#include "common/crc32c.h"

#include "common/crc32c_internal.h"

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
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, false, false},
    {"hw_1way", "SSE4.2 crc32q, 1 stream (target attribute, runtime check)", internal::ExtendHw1,
     nullptr, true, false},
    {"hw_3way",
     "SSE4.2 crc32q, 3 streams combined with PCLMULQDQ (target attribute, runtime check)",
     internal::ExtendHw3, nullptr, true, true},
};
#elif defined(KVBENCH_CRC32C_ARM)
constexpr Implementation kImplementations[] = {
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, false, false},
    {"hw_1way", "ARMv8 crc32cx, 1 stream", internal::ExtendHw1, nullptr, true, false},
#if defined(KVBENCH_CRC32C_ARM_PMULL)
    {"hw_3way", "ARMv8 crc32cx, 3 streams combined with PMULL", internal::ExtendHw3, nullptr, true,
     true},
#else
    {"hw_3way", "ARMv8 crc32cx, 3 streams combined with PMULL", nullptr,
     "not compiled: the target flags do not enable PMULL (add +crypto or +aes to -march, or use "
     "a -mcpu=native preset)",
     true, true},
#endif
};
#else
#if defined(__aarch64__)
constexpr const char* kNoHardware =
    "not compiled: the target flags do not enable the ARMv8 CRC32 instructions (add +crc to "
    "-march, as every ARM preset does, or use -mcpu=native)";
#else
constexpr const char* kNoHardware =
    "not compiled: kvbench has hardware crc32c for x86-64 and AArch64 only";
#endif
constexpr Implementation kImplementations[] = {
    {"table", "slicing-by-8 tables", ExtendTable, nullptr, false, false},
    {"hw_1way", "CRC32C instruction, 1 stream", nullptr, kNoHardware, true, false},
    {"hw_3way", "CRC32C instruction, 3 streams + carry-less multiply", nullptr, kNoHardware, true,
     true},
};
#endif

constexpr size_t kCount = sizeof(kImplementations) / sizeof(kImplementations[0]);

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(KVBENCH_CRC32C_X86)
  __builtin_cpu_init();
  f.crc32c = __builtin_cpu_supports("sse4.2");
  f.clmul = __builtin_cpu_supports("pclmul");
#elif defined(KVBENCH_CRC32C_ARM) && defined(__linux__)
  const unsigned long hwcap = getauxval(AT_HWCAP);
  f.crc32c = (hwcap & HWCAP_CRC32) != 0;
  f.clmul = (hwcap & HWCAP_PMULL) != 0;
#elif defined(KVBENCH_CRC32C_ARM)
  // No portable way to ask outside Linux; the build targets +crc, so trust it.
  f.crc32c = true;
#if defined(KVBENCH_CRC32C_ARM_PMULL)
  f.clmul = true;
#endif
#endif
  return f;
}

#if defined(KVBENCH_CRC32C_X86)
constexpr const char* kCrcInsn = "SSE4.2 (crc32)";
constexpr const char* kMulInsn = "PCLMULQDQ";
#else
constexpr const char* kCrcInsn = "the ARMv8 CRC32 instructions";
constexpr const char* kMulInsn = "PMULL";
#endif

// The instruction `cpu` lacks for `impl`, or nullptr.
const char* Lacking(const Implementation& impl, const CpuFeatures& cpu) {
  if (impl.needs_crc32c && !cpu.crc32c) return kCrcInsn;
  if (impl.needs_clmul && !cpu.clmul) return kMulInsn;
  return nullptr;
}

// The last (fastest) implementation that is compiled and runs on this CPU.
const Implementation& Choose() {
  const CpuFeatures& cpu = DetectCpu();
  for (size_t i = kCount; i-- > 0;) {
    const Implementation& impl = kImplementations[i];
    if (impl.extend != nullptr && Lacking(impl, cpu) == nullptr) return impl;
  }
  return kImplementations[0];
}

}  // namespace

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

ExtendFn Resolve(const Implementation& impl, const CpuFeatures& cpu, std::string* why) {
  if (impl.extend == nullptr) {
    *why = std::string("crc32c/") + impl.name + " is " + impl.missing;
    return nullptr;
  }
  const char* lacking = Lacking(impl, cpu);
  if (lacking != nullptr) {
    *why = std::string("crc32c/") + impl.name + " refused: this CPU lacks " + lacking +
           " (running it would die with SIGILL)";
    return nullptr;
  }
  return impl.extend;
}

const Implementation& Selected() {
  static const Implementation& selected = Choose();
  return selected;
}

uint32_t Extend(uint32_t init_crc, const char* data, size_t n) {
  static const ExtendFn fn = Selected().extend;
  return fn(init_crc, data, n);
}

}  // namespace crc32c
}  // namespace kvbench
