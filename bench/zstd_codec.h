// The zstd calls kvbench_micro measures, in one place so the benchmarks and the round-trip tests
// run the same code: the one-shot API with a context reused across blocks, as RocksDB does.
#pragma once

#include <zstd.h>

#include <cstddef>

namespace kvbench {
namespace micro {

class ZstdCompressor {
 public:
  explicit ZstdCompressor(int level) : level_(level), cctx_(ZSTD_createCCtx()) {}
  ~ZstdCompressor() { ZSTD_freeCCtx(cctx_); }
  ZstdCompressor(const ZstdCompressor&) = delete;
  ZstdCompressor& operator=(const ZstdCompressor&) = delete;

  static size_t Bound(size_t n) { return ZSTD_compressBound(n); }

  // Compresses src[0,n) into dst[0,cap) as one zstd frame. Returns the compressed size, or 0 on
  // error. REQUIRES: cap >= Bound(n).
  size_t Compress(const char* src, size_t n, char* dst, size_t cap) {
    const size_t r = ZSTD_compressCCtx(cctx_, dst, cap, src, n, level_);
    return ZSTD_isError(r) ? 0 : r;
  }

 private:
  int level_;
  ZSTD_CCtx* cctx_;
};

class ZstdDecompressor {
 public:
  ZstdDecompressor() : dctx_(ZSTD_createDCtx()) {}
  ~ZstdDecompressor() { ZSTD_freeDCtx(dctx_); }
  ZstdDecompressor(const ZstdDecompressor&) = delete;
  ZstdDecompressor& operator=(const ZstdDecompressor&) = delete;

  // Decompresses one frame into dst[0,cap). Returns the decompressed size, or 0 on error.
  size_t Decompress(const char* src, size_t n, char* dst, size_t cap) {
    const size_t r = ZSTD_decompressDCtx(dctx_, dst, cap, src, n);
    return ZSTD_isError(r) ? 0 : r;
  }

 private:
  ZSTD_DCtx* dctx_;
};

}  // namespace micro
}  // namespace kvbench
