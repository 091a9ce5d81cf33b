// Keys as the workloads write them, and the orders they visit them in.
//
// Keys are exactly `key_size` bytes: the key number big-endian in the first min(key_size, 8)
// bytes, then ASCII '0' padding, as db_bench writes them, so byte order equals numeric order.
// fillrandom visits every key once in a seeded order (Permutation); values are values.h's.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "common/limits.h"
#include "common/slice.h"

namespace kvbench {

class KeyFormat {
 public:
  explicit KeyFormat(int key_size) : key_size_(key_size) {}
  int size() const { return key_size_; }
  // How many distinct keys `key_size` bytes can encode (saturates at 2^64-1).
  static uint64_t Capacity(int key_size);
  // Writes key number `k` into buf[0, size()). REQUIRES: k < Capacity(size()).
  void Encode(uint64_t k, char* buf) const {
    EncodeNumber(k, buf);
    if (key_size_ > 8) std::memset(buf + 8, '0', static_cast<size_t>(key_size_ - 8));
  }
  // Writes only the number: buf[0, min(size(), 8)). The padding after it is Encode's.
  void EncodeNumber(uint64_t k, char* buf) const {
    if (key_size_ >= 8) {  // the common case, on the per-op path: one byte-swapped store
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      const uint64_t be = __builtin_bswap64(k);
#else
      const uint64_t be = k;
#endif
      std::memcpy(buf, &be, 8);
      return;
    }
    for (int i = 0; i < key_size_; ++i) {
      buf[i] = static_cast<char>((k >> (8 * (key_size_ - 1 - i))) & 0xff);
    }
  }
  // The key number of an encoded key (its first min(size, 8) bytes).
  uint64_t Decode(const Slice& key) const;

 private:
  int key_size_;
};

// One thread's key, as the workload loops build it per op. The padding never changes, so it is
// written once here and Set() writes only the number: Encode's memset of the padding was a libc
// call on every op.
class KeyBuffer {
 public:
  explicit KeyBuffer(const KeyFormat& format) : format_(format) { format_.Encode(0, buf_); }
  Slice Set(uint64_t k) {
    format_.EncodeNumber(k, buf_);
    return Slice(buf_, static_cast<size_t>(format_.size()));
  }
  // The key Set() wrote last.
  Slice Get() const { return Slice(buf_, static_cast<size_t>(format_.size())); }

 private:
  const KeyFormat format_;
  char buf_[kMaxKeySize];
};

// A pseudo-random permutation of [0, n) in O(1) memory: a keyed bijection on the smallest
// power-of-two domain >= n, with cycle walking to stay below n. Index i -> key At(i); every key
// appears exactly once as i runs over [0, n). Same (n, seed) => same order.
class Permutation {
 public:
  Permutation(uint64_t n, uint64_t seed);
  uint64_t At(uint64_t i) const {
    uint64_t x = Round(i);
    while (x >= n_) x = Round(x);
    return x;
  }

 private:
  uint64_t Round(uint64_t x) const {
    for (int r = 0; r < 3; ++r) {
      x = (x * mul_[r] + add_[r]) & mask_;
      x ^= x >> shift_;
    }
    return x;
  }
  uint64_t n_, mask_;
  int shift_;
  uint64_t mul_[3], add_[3];
};

}  // namespace kvbench
