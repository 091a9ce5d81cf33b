// xxHash benchmarks: XXH3 64-bit, XXH3 128-bit and XXH64, each twice: from xxhash.h compiled
// inline in this file with the preset's flags (variant "inline"), and from the shared library as
// the distribution built it (variant "lib"). On x86 the library also has a runtime-dispatching
// XXH3 entry point (xxh_x86dispatch.h); it is measured as "lib_dispatch" when present.
//
// xxhash.h is included twice on purpose, as the header documents: first plainly, for the
// library's functions (wrapped below), then with XXH_INLINE_ALL, which renames every inline
// definition (XXH_INLINE_ prefix) so both coexist in one translation unit.
#include <cstdint>
#include <string>

#include "micro.h"

// 1. The library, as shipped.
#include <xxhash.h>
#ifdef KVBENCH_HAVE_XXH_X86DISPATCH
#define XXH_DISPATCH_DISABLE_REPLACE  // keep XXH3_64bits meaning the plain library function
#include <xxh_x86dispatch.h>
#endif

namespace kvbench {
namespace micro {
namespace lib {

uint64_t Xxh3_64(const char* p, size_t n) { return XXH3_64bits(p, n); }
uint64_t Xxh3_128(const char* p, size_t n) { return XXH3_128bits(p, n).low64; }
uint64_t Xxh64(const char* p, size_t n) { return XXH64(p, n, 0); }
#ifdef KVBENCH_HAVE_XXH_X86DISPATCH
uint64_t Xxh3_64Dispatch(const char* p, size_t n) { return XXH3_64bits_dispatch(p, n); }
#endif
unsigned VersionNumber() { return XXH_versionNumber(); }

}  // namespace lib
}  // namespace micro
}  // namespace kvbench

// 2. The same functions compiled here, with this build's flags.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kvbench {
namespace micro {

namespace {

// The SIMD path xxhash.h picked for this build's flags (XXH_VECTOR, see xxhash.h).
const char* InlineVectorPath() {
  switch (XXH_VECTOR) {
    case XXH_SCALAR:
      return "scalar";
    case XXH_SSE2:
      return "sse2";
    case XXH_AVX2:
      return "avx2";
    case XXH_AVX512:
      return "avx512";
    case XXH_NEON:
      return "neon";
    case XXH_VSX:
      return "vsx";
    default:
      return "other";
  }
}

std::string VersionString(unsigned v) {
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

template <typename Hash>
void BM_Hash(benchmark::State& state, Hash hash, const std::string& label, size_t block_size) {
  const Blocks blocks = InputBlocks(block_size);
  RunOverBlocks(state, blocks, [&](size_t i) { return hash(blocks.block(i), blocks.size); });
  state.SetLabel(label);
}

template <typename Hash>
void Register(const std::string& algorithm, const std::string& variant, Hash hash,
              const std::string& label) {
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName(algorithm, variant, size).c_str(), BM_Hash<Hash>,
                                 hash, label, size);
  }
}

// Inline calls: lambdas, so the compiler sees (and may inline) the whole hash in the loop.
auto InlineXxh3_64 = [](const char* p, size_t n) -> uint64_t { return XXH3_64bits(p, n); };
auto InlineXxh3_128 = [](const char* p, size_t n) -> uint64_t { return XXH3_128bits(p, n).low64; };
auto InlineXxh64 = [](const char* p, size_t n) -> uint64_t { return XXH64(p, n, 0); };

}  // namespace

void RegisterXxhash() {
  const std::string inl = "xxhash.h " + VersionString(XXH_VERSION_NUMBER) + " inline";
  const std::string shipped = "libxxhash " + VersionString(lib::VersionNumber()) + " as installed";
  Register("xxh3_64", "inline", InlineXxh3_64, inl);
  Register("xxh3_64", "lib", lib::Xxh3_64, shipped);
#ifdef KVBENCH_HAVE_XXH_X86DISPATCH
  Register("xxh3_64", "lib_dispatch", lib::Xxh3_64Dispatch, shipped + ", runtime dispatch");
#endif
  Register("xxh3_128", "inline", InlineXxh3_128, inl);
  Register("xxh3_128", "lib", lib::Xxh3_128, shipped);
  Register("xxh64", "inline", InlineXxh64, inl);
  Register("xxh64", "lib", lib::Xxh64, shipped);
}

void AddXxhashContext() {
  benchmark::AddCustomContext("xxhash_header_version", VersionString(XXH_VERSION_NUMBER));
  benchmark::AddCustomContext("xxhash_library_version", VersionString(lib::VersionNumber()));
  benchmark::AddCustomContext("xxhash_inline_vector", InlineVectorPath());
}

}  // namespace micro
}  // namespace kvbench
