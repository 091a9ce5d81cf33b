#include "common/value_generator.h"

#include <cmath>

#include "common/random.h"

namespace kvbench {

ValueGenerator::ValueGenerator(uint64_t seed, double compression_ratio, size_t buffer_size) {
  Random64 rnd(Mix64(seed ^ 0x76616c7565ull));  // "value": values and keys use distinct streams
  constexpr size_t kPiece = 100;
  size_t raw_len = static_cast<size_t>(std::lround(kPiece * compression_ratio));
  if (raw_len < 1) raw_len = 1;
  if (raw_len > kPiece) raw_len = kPiece;
  data_.reserve(buffer_size + kPiece);
  std::string raw(raw_len, ' ');
  while (data_.size() < buffer_size) {
    for (auto& c : raw) c = static_cast<char>(' ' + rnd.Uniform(95));
    for (size_t i = 0; i < kPiece; ++i) data_.push_back(raw[i % raw_len]);
  }
  data_.resize(buffer_size);
}

}  // namespace kvbench
