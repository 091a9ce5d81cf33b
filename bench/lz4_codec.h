// The lz4 calls kvbench_micro measures, in one place so the benchmarks and the round-trip tests
// run the same code. Every block is compressed independently (as RocksDB compresses SST blocks).
//
// Streams are created once and started afresh per block with LZ4_resetStream_fast /
// LZ4_resetStreamHC_fast (public since lz4 1.9.0), so a measurement is the compressor's work,
// not the 16 KiB (fast) or 256 KiB (HC) state initialisation that LZ4_compress_default and
// LZ4_compress_HC repeat on every call.
#pragma once

#include <lz4.h>
#include <lz4hc.h>

#include <cstddef>

namespace kvbench {
namespace micro {

class Lz4Compressor {
 public:
  // level <= 0: the fast compressor with acceleration -level (0 means 1, LZ4's default);
  // level > 0: LZ4HC at that level.
  explicit Lz4Compressor(int level) : level_(level) {
    if (level_ > 0) {
      hc_ = LZ4_createStreamHC();
    } else {
      fast_ = LZ4_createStream();
    }
  }
  ~Lz4Compressor() {
    if (hc_ != nullptr) LZ4_freeStreamHC(hc_);
    if (fast_ != nullptr) LZ4_freeStream(fast_);
  }
  Lz4Compressor(const Lz4Compressor&) = delete;
  Lz4Compressor& operator=(const Lz4Compressor&) = delete;

  static size_t Bound(size_t n) {
    return static_cast<size_t>(LZ4_compressBound(static_cast<int>(n)));
  }

  // Compresses src[0,n) into dst[0,cap) as one independent LZ4 block. Returns the compressed
  // size, or 0 on error. REQUIRES: cap >= Bound(n).
  size_t Compress(const char* src, size_t n, char* dst, size_t cap) {
    int r;
    if (hc_ != nullptr) {
      LZ4_resetStreamHC_fast(hc_, level_);
      r = LZ4_compress_HC_continue(hc_, src, dst, static_cast<int>(n), static_cast<int>(cap));
    } else {
      LZ4_resetStream_fast(fast_);
      r = LZ4_compress_fast_continue(fast_, src, dst, static_cast<int>(n), static_cast<int>(cap),
                                     level_ < 0 ? -level_ : 1);
    }
    return r > 0 ? static_cast<size_t>(r) : 0;
  }

  // Decompresses one block into dst[0,cap). Returns the decompressed size, or 0 on error.
  static size_t Decompress(const char* src, size_t n, char* dst, size_t cap) {
    const int r = LZ4_decompress_safe(src, dst, static_cast<int>(n), static_cast<int>(cap));
    return r > 0 ? static_cast<size_t>(r) : 0;
  }

 private:
  int level_;
  LZ4_stream_t* fast_ = nullptr;
  LZ4_streamHC_t* hc_ = nullptr;
};

}  // namespace micro
}  // namespace kvbench
