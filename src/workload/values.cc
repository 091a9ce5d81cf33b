#include "workload/values.h"

#include <algorithm>

#include "common/random.h"

namespace kvbench {

ValueSource::ValueSource(uint64_t seed, double compression_ratio, int value_size)
    : gen_(seed, compression_ratio,
           std::max<size_t>(ValueGenerator::kDefaultBufferSize,
                            2 * static_cast<size_t>(value_size))),
      seed_(seed),
      value_size_(value_size),
      span_(gen_.buffer().size() - static_cast<size_t>(value_size) + 1) {}

Slice ValueSource::For(uint64_t key) const {
  const uint64_t off = Mix64(key ^ seed_) % span_;
  return Slice(gen_.buffer().data() + off, static_cast<size_t>(value_size_));
}

}  // namespace kvbench
