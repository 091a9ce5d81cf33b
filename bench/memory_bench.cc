// Ceiling rows: memory/read/N and memory/copy/N, the bandwidth a checksum (which reads its
// input once) or a codec (which reads and writes) can at best reach with the block in the same
// cache level as theirs. They run over the same blocks as every other benchmark (hot or
// --cache_cold), and kvbench_micro's summaries print each row as a fraction of memory/read.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "micro.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace kvbench {
namespace micro {

namespace {

// Each Read* XORs every byte of p[0, n) into a value that the benchmark keeps, so no compiler can
// drop a load, with enough independent accumulators that the loads, not the XORs, set the pace.
using ReadFn = uint64_t (*)(const char* p, size_t n);

uint64_t ReadTail(uint64_t acc, const char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) acc ^= static_cast<unsigned char>(p[i]);
  return acc;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx2"))) uint64_t ReadAvx512(const char* p, size_t n) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(p + i));
    a1 = _mm512_xor_si512(a1, _mm512_loadu_si512(p + i + 64));
    a2 = _mm512_xor_si512(a2, _mm512_loadu_si512(p + i + 128));
    a3 = _mm512_xor_si512(a3, _mm512_loadu_si512(p + i + 192));
  }
  for (; i + 64 <= n; i += 64) a0 = _mm512_xor_si512(a0, _mm512_loadu_si512(p + i));
  const __m512i a = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
  const __m256i h = _mm256_xor_si256(_mm512_maskz_extracti64x4_epi64(0xf, a, 0),
                                     _mm512_maskz_extracti64x4_epi64(0xf, a, 1));
  const __m128i b = _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  const uint64_t r = static_cast<uint64_t>(_mm_cvtsi128_si64(b) ^ _mm_extract_epi64(b, 1));
  return ReadTail(r, p + i, n - i);
}

__attribute__((target("avx2"))) inline __m256i Load256(const char* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

__attribute__((target("avx2"))) uint64_t ReadAvx2(const char* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_xor_si256(a0, Load256(p + i));
    a1 = _mm256_xor_si256(a1, Load256(p + i + 32));
    a2 = _mm256_xor_si256(a2, Load256(p + i + 64));
    a3 = _mm256_xor_si256(a3, Load256(p + i + 96));
  }
  for (; i + 32 <= n; i += 32) a0 = _mm256_xor_si256(a0, Load256(p + i));
  const __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  const __m128i b = _mm_xor_si128(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
  const uint64_t r = static_cast<uint64_t>(_mm_cvtsi128_si64(b) ^ _mm_extract_epi64(b, 1));
  return ReadTail(r, p + i, n - i);
}
#endif

#if defined(__x86_64__) || defined(__aarch64__)
// 128-bit vectors: SSE2 (baseline x86-64) or NEON (baseline AArch64), the preset's flags.
uint64_t Read128(const char* p, size_t n) {
#if defined(__x86_64__)
  using V = __m128i;
  const auto load = [p](size_t at) { return _mm_loadu_si128(reinterpret_cast<const V*>(p + at)); };
  const auto x = [](V a, V b) { return _mm_xor_si128(a, b); };
  V a0 = _mm_setzero_si128();
#else
  using V = uint64x2_t;
  const auto load = [p](size_t at) {
    return vreinterpretq_u64_u8(vld1q_u8(reinterpret_cast<const uint8_t*>(p + at)));
  };
  const auto x = [](V a, V b) { return veorq_u64(a, b); };
  V a0 = vdupq_n_u64(0);
#endif
  V a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = x(a0, load(i));
    a1 = x(a1, load(i + 16));
    a2 = x(a2, load(i + 32));
    a3 = x(a3, load(i + 48));
  }
  for (; i + 16 <= n; i += 16) a0 = x(a0, load(i));
  const V a = x(x(a0, a1), x(a2, a3));
  uint64_t lanes[2];
  std::memcpy(lanes, &a, sizeof(lanes));
  return ReadTail(lanes[0] ^ lanes[1], p + i, n - i);
}
#else
uint64_t Read128(const char* p, size_t n) {  // no vectors: 64-bit words
  uint64_t a0 = 0, a1 = 0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint64_t w[2];
    std::memcpy(w, p + i, sizeof(w));
    a0 ^= w[0];
    a1 ^= w[1];
  }
  return ReadTail(a0 ^ a1, p + i, n - i);
}
#endif

struct Reader {
  ReadFn fn;
  const char* label;
};

// The widest loads this CPU has, whatever the preset's flags: the ceiling is the machine's, like
// the crc32c kernels it bounds (they dispatch at run time too).
Reader WidestReader() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return {ReadAvx512, "64-byte AVX-512 loads, XORed"};
  if (__builtin_cpu_supports("avx2")) return {ReadAvx2, "32-byte AVX2 loads, XORed"};
  return {Read128, "16-byte SSE2 loads, XORed"};
#elif defined(__aarch64__)
  return {Read128, "16-byte NEON loads, XORed"};
#else
  return {Read128, "8-byte loads, XORed"};
#endif
}

void BM_Read(benchmark::State& state, ReadFn fn, const char* label, size_t block_size) {
  const Blocks blocks = InputBlocks(block_size);
  RunOverBlocks(state, blocks, [&](size_t i) { return fn(blocks.block(i), blocks.size); });
  state.SetLabel(label);
}

// memcpy into a cache-hot destination of the block's size. DoNotOptimize on the destination (an
// asm statement that may read all memory) keeps the copy.
void BM_Copy(benchmark::State& state, size_t block_size) {
  const Blocks blocks = InputBlocks(block_size);
  std::unique_ptr<char[]> dst(new char[block_size]);
  std::memset(dst.get(), 0, block_size);
  char* out = dst.get();
  RunOverBlocks(state, blocks, [&](size_t i) {
    std::memcpy(out, blocks.block(i), blocks.size);
    return out;
  });
  state.SetLabel("memcpy (the C library's own runtime dispatch) to a second buffer");
}

}  // namespace

void RegisterMemory() {
  const Reader reader = WidestReader();
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("memory", "read", size).c_str(), BM_Read, reader.fn,
                                 reader.label, size);
    benchmark::RegisterBenchmark(BenchmarkName("memory", "copy", size).c_str(), BM_Copy, size);
  }
}

}  // namespace micro
}  // namespace kvbench
