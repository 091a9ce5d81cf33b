// Benchmark bodies shared by lz4_bench.cc and zstd_bench.cc. bytes_per_second always counts
// uncompressed bytes (the block size), for compression and decompression alike, and every run
// reports the counter compression_ratio = compressed bytes / uncompressed bytes, the same sense
// as --compression_ratio.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "micro.h"

namespace kvbench {
namespace micro {

// `compressor.Compress` as the callable the functions below take.
template <typename Compressor>
auto CompressWith(Compressor& compressor) {
  return [&compressor](const char* src, size_t n, char* dst, size_t cap) {
    return compressor.Compress(src, n, dst, cap);
  };
}

// Runs `compress(src, n, dst, cap) -> compressed size (0 = error)` over the input blocks.
template <typename Compress>
void RunCompress(benchmark::State& state, size_t block_size, size_t bound, Compress&& compress) {
  const Blocks blocks = InputBlocks(block_size);
  std::vector<char> out(bound);
  uint64_t total_out = 0;
  size_t failures = 0;
  RunOverBlocks(state, blocks, [&](size_t i) {
    const size_t n = compress(blocks.block(i), blocks.size, out.data(), out.size());
    total_out += n;
    failures += (n == 0);
    return n;
  });
  if (failures > 0) {
    state.SkipWithError("compression failed");
    return;
  }
  state.counters["compression_ratio"] =
      static_cast<double>(total_out) /
      (static_cast<double>(state.iterations()) * static_cast<double>(blocks.size));
}

// Compressed copies of every input block of one size, checked to decompress to the input.
struct CompressedBlocks {
  size_t block_size = 0;
  std::string data;
  std::vector<size_t> offset;
  std::vector<size_t> size;
  double ratio = 0;   // compressed bytes / uncompressed bytes
  std::string error;  // non-empty if compression or the check failed

  const char* block(size_t i) const { return data.data() + offset[i]; }
};

template <typename Compress, typename Decompress>
std::unique_ptr<CompressedBlocks> PrepareCompressed(const Blocks& in, size_t bound,
                                                    Compress&& compress, Decompress&& decompress) {
  auto c = std::make_unique<CompressedBlocks>();
  c->block_size = in.size;
  std::vector<char> tmp(bound);
  std::vector<char> back(in.size);
  for (size_t i = 0; i < in.count; ++i) {
    const size_t n = compress(in.block(i), in.size, tmp.data(), tmp.size());
    if (n == 0) {
      c->error = "compression failed while preparing the input of decompression";
      return c;
    }
    if (decompress(tmp.data(), n, back.data(), back.size()) != in.size ||
        std::memcmp(back.data(), in.block(i), in.size) != 0) {
      c->error = "block " + std::to_string(i) + " does not decompress to its input";
      return c;
    }
    c->offset.push_back(c->data.size());
    c->size.push_back(n);
    c->data.append(tmp.data(), n);
  }
  c->ratio = static_cast<double>(c->data.size()) /
             (static_cast<double>(in.size) * static_cast<double>(in.count));
  return c;
}

// The blocks of `in` compressed by a Compressor(level), prepared by PrepareCompressed once per
// block size: benchmarks run in registration order, so one cache per Compressor and Decompress
// holds each size's blocks until the next size's decompress benchmark.
template <typename Compressor, typename Decompress>
const CompressedBlocks& CachedCompressed(const Blocks& in, int level, Decompress&& decompress) {
  static std::unique_ptr<CompressedBlocks> cache;
  if (cache == nullptr || cache->block_size != in.size) {
    Compressor compressor(level);
    cache = PrepareCompressed(in, Compressor::Bound(in.size), CompressWith(compressor), decompress);
  }
  return *cache;
}

// Runs `decompress(src, n, dst, cap) -> decompressed size (0 = error)` over the compressed
// blocks. Every iteration checks the size; the bytes of the last block decompressed are compared
// with the input after the timed loop (PrepareCompressed compared every block once before it),
// so the check costs nothing inside the measurement.
template <typename Decompress>
void RunDecompress(benchmark::State& state, const Blocks& in, const CompressedBlocks& c,
                   Decompress&& decompress) {
  if (!c.error.empty()) {
    state.SkipWithError(c.error.c_str());
    return;
  }
  std::vector<char> out(in.size);
  size_t wrong_size = 0;
  size_t last = 0;
  RunOverBlocks(state, in, [&](size_t i) {
    const size_t n = decompress(c.block(i), c.size[i], out.data(), out.size());
    wrong_size += (n != in.size);
    last = i;
    return n;
  });
  if (wrong_size > 0 || std::memcmp(out.data(), in.block(last), in.size) != 0) {
    state.SkipWithError("decompressed bytes differ from the input");
    return;
  }
  state.counters["compression_ratio"] = c.ratio;
}

}  // namespace micro
}  // namespace kvbench
