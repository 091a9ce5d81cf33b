// zstd benchmarks: compress_l1 and compress_l3 (levels 1 and 3; 3 is zstd's default) and
// decompress (of the level-3 output; checked against the input). The library is the installed
// libzstd, so only the call sites see this build's flags.
#include <string>

#include "codec_bench.h"
#include "zstd_codec.h"

namespace kvbench {
namespace micro {

namespace {

constexpr int kDecompressLevel = 3;

std::string Label(const std::string& what) {
  return std::string("libzstd ") + ZSTD_versionString() + ", " + what;
}

void BM_ZstdCompress(benchmark::State& state, int level, size_t block_size) {
  ZstdCompressor zstd(level);
  RunCompress(state, block_size, ZstdCompressor::Bound(block_size), CompressWith(zstd));
  state.SetLabel(Label("level " + std::to_string(level)));
}

void BM_ZstdDecompress(benchmark::State& state, size_t block_size) {
  const Blocks in = InputBlocks(block_size);
  ZstdDecompressor d;
  auto decompress = [&](const char* src, size_t n, char* dst, size_t cap) {
    return d.Decompress(src, n, dst, cap);
  };
  const CompressedBlocks& c = CachedCompressed<ZstdCompressor>(in, kDecompressLevel, decompress);
  RunDecompress(state, in, c, decompress);
  state.SetLabel(
      Label("ZSTD_decompressDCtx of level-" + std::to_string(kDecompressLevel) + " output"));
}

}  // namespace

void RegisterZstd() {
  for (int level : {1, 3}) {
    for (size_t size : GetOptions().block_sizes) {
      benchmark::RegisterBenchmark(
          BenchmarkName("zstd", "compress_l" + std::to_string(level), size).c_str(),
          BM_ZstdCompress, level, size);
    }
  }
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("zstd", "decompress", size).c_str(),
                                 BM_ZstdDecompress, size);
  }
}

void AddZstdContext() {
  benchmark::AddCustomContext("zstd_library_version", ZSTD_versionString());
  benchmark::AddCustomContext("zstd_header_version", ZSTD_VERSION_STRING);
}

}  // namespace micro
}  // namespace kvbench
