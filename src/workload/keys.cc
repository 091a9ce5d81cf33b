#include "workload/keys.h"

#include <algorithm>

#include "common/random.h"

namespace kvbench {

uint64_t KeyFormat::Capacity(int key_size) {
  if (key_size >= 8) return UINT64_MAX;
  if (key_size <= 0) return 0;
  return uint64_t{1} << (8 * key_size);
}

uint64_t KeyFormat::Decode(const Slice& key) const {
  const int n = std::min<int>(8, static_cast<int>(std::min<size_t>(key.size(), key_size_)));
  uint64_t k = 0;
  for (int i = 0; i < n; ++i) k = (k << 8) | static_cast<unsigned char>(key.data()[i]);
  return k;
}

Permutation::Permutation(uint64_t n, uint64_t seed) : n_(n) {
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < n) ++bits;
  mask_ = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  shift_ = bits / 2 + 1;
  Random64 rnd(Mix64(seed ^ 0x7065726dull));  // "perm"
  for (int r = 0; r < 3; ++r) {
    mul_[r] = (rnd.Next() | 1) & mask_;  // odd: invertible modulo 2^bits
    if (mul_[r] == 0) mul_[r] = 1;
    add_[r] = rnd.Next() & mask_;
  }
}

}  // namespace kvbench
