// Value bytes with a chosen compressibility, shared by the KV workloads and kvbench_micro so both
// describe the same data.
//
// Like db_bench's RandomGenerator: a buffer built from 100-byte pieces, each made of
// round(100 * compression_ratio) random printable bytes repeated to fill the piece, so a
// general-purpose compressor shrinks the data to about `compression_ratio` of its size. Unlike
// db_bench, the bytes depend on the seed: the same seed gives the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/slice.h"

namespace kvbench {

class ValueGenerator {
 public:
  static constexpr size_t kDefaultBufferSize = 1 << 20;

  // REQUIRES: 0 < compression_ratio <= 1, buffer_size >= 100.
  ValueGenerator(uint64_t seed, double compression_ratio, size_t buffer_size = kDefaultBufferSize);

  // The next `len` bytes of the buffer, wrapping to its start when the rest is too short.
  // REQUIRES: len <= buffer size. The Slice stays valid while the generator lives.
  Slice Next(size_t len) {
    if (pos_ + len > data_.size()) pos_ = 0;
    pos_ += len;
    return Slice(data_.data() + pos_ - len, len);
  }

  const std::string& buffer() const { return data_; }

 private:
  std::string data_;
  size_t pos_ = 0;
};

}  // namespace kvbench
