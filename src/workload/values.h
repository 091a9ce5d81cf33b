// Values as the workloads write them: a deterministic function of (key number, seed), so the
// same seed writes the same value for a key every time, on every thread, which lets a reader
// verify any value it reads. Compressible to about --compression_ratio.
#pragma once

#include <cstdint>

#include "common/slice.h"
#include "common/value_generator.h"

namespace kvbench {

// The value written for each key: `value_size` bytes of the seeded, compressible buffer, at an
// offset derived from the key number. Thread-safe after construction (read-only).
class ValueSource {
 public:
  ValueSource(uint64_t seed, double compression_ratio, int value_size);
  Slice For(uint64_t key) const;
  int value_size() const { return value_size_; }

 private:
  ValueGenerator gen_;
  uint64_t seed_;
  int value_size_;
  uint64_t span_;  // number of distinct offsets
};

}  // namespace kvbench
