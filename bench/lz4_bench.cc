// lz4 benchmarks: compress (acceleration 1, LZ4's default), compress_fast8 (acceleration 8),
// compress_hc9 (LZ4HC level 9) and decompress (of the acceleration-1 output; checked against the
// input). The library is the installed liblz4, so only the call sites see this build's flags.
#include <string>

#include "codec_bench.h"
#include "lz4_codec.h"

namespace kvbench {
namespace micro {

namespace {

std::string Label(const std::string& what) {
  return std::string("liblz4 ") + LZ4_versionString() + ", " + what;
}

void BM_Lz4Compress(benchmark::State& state, int level, size_t block_size) {
  Lz4Compressor lz4(level);
  RunCompress(state, block_size, Lz4Compressor::Bound(block_size), CompressWith(lz4));
  state.SetLabel(Label(level > 0 ? "HC level " + std::to_string(level)
                                 : "acceleration " + std::to_string(level < 0 ? -level : 1)));
}

void BM_Lz4Decompress(benchmark::State& state, size_t block_size) {
  const Blocks in = InputBlocks(block_size);
  const CompressedBlocks& c = CachedCompressed<Lz4Compressor>(in, 0, Lz4Compressor::Decompress);
  RunDecompress(state, in, c, Lz4Compressor::Decompress);
  state.SetLabel(Label("LZ4_decompress_safe of acceleration-1 output"));
}

}  // namespace

void RegisterLz4() {
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("lz4", "compress", size).c_str(), BM_Lz4Compress, 0,
                                 size);
  }
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("lz4", "compress_fast8", size).c_str(),
                                 BM_Lz4Compress, -8, size);
  }
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("lz4", "compress_hc9", size).c_str(), BM_Lz4Compress,
                                 9, size);
  }
  for (size_t size : GetOptions().block_sizes) {
    benchmark::RegisterBenchmark(BenchmarkName("lz4", "decompress", size).c_str(), BM_Lz4Decompress,
                                 size);
  }
}

void AddLz4Context() {
  benchmark::AddCustomContext("lz4_library_version", LZ4_versionString());
  benchmark::AddCustomContext("lz4_header_version", LZ4_VERSION_STRING);
}

}  // namespace micro
}  // namespace kvbench
