// kvbench_micro's options and input bytes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "common/value_generator.h"
#include "micro.h"

namespace kvbench {
namespace micro {

namespace {

Options g_options;

size_t LargestCpuCache() {
  size_t largest = 0;
  for (const auto& cache : benchmark::CPUInfo::Get().caches) {
    largest = std::max(largest, static_cast<size_t>(cache.size));
  }
  return largest;
}

size_t LargestBlock() {
  size_t largest = 0;
  for (size_t s : g_options.block_sizes) largest = std::max(largest, s);
  return largest;
}

// kvbench's value bytes for the options, copied to a 64-byte boundary: where the input starts
// within a cache line changes the speed of wide loads (xxh3's AVX2 path, lz4's copies), and
// malloc's alignment differs between allocators, so it is fixed here.
class AlignedInput {
 public:
  explicit AlignedInput(size_t bytes) {
    const ValueGenerator gen(g_options.seed, g_options.compression_ratio, bytes);
    const size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
    data_.reset(static_cast<char*>(std::aligned_alloc(kAlign, rounded)));
    if (data_ == nullptr) {
      std::fprintf(stderr, "kvbench_micro: cannot allocate %zu bytes of input\n", rounded);
      std::exit(1);
    }
    std::memcpy(data_.get(), gen.buffer().data(), bytes);
    size_ = bytes;
  }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kAlign = 64;
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data_;
  size_t size_ = 0;
};

// Built on first use: generating a cold buffer takes a moment and hot runs never need it.
const AlignedInput& HotInput() {
  static const AlignedInput input(std::max(ValueGenerator::kDefaultBufferSize, LargestBlock()));
  return input;
}

const AlignedInput& ColdInput() {
  static const AlignedInput input(ColdBufferBytes());
  return input;
}

}  // namespace

const Options& GetOptions() { return g_options; }
void SetOptions(const Options& options) { g_options = options; }

size_t ColdBufferBytes() {
  size_t bytes = g_options.cold_buffer_bytes;
  if (bytes == 0) bytes = std::max<size_t>(4 * LargestCpuCache(), size_t{64} << 20);
  // At least 16 blocks of the largest size, so even 64 KiB blocks rotate.
  return std::max(bytes, 16 * LargestBlock());
}

Blocks InputBlocks(size_t block_size) {
  if (!g_options.cache_cold) return Blocks{HotInput().data(), block_size, 1};
  const AlignedInput& cold = ColdInput();
  return Blocks{cold.data(), block_size, cold.size() / block_size};
}

std::string BenchmarkName(const std::string& algorithm, const std::string& variant,
                          size_t block_size) {
  std::string name = algorithm + "/" + variant + "/" + std::to_string(block_size);
  if (g_options.cache_cold) name += "/cold";
  return name;
}

}  // namespace micro
}  // namespace kvbench
