// lz4 and zstd round trips through exactly the calls kvbench_micro measures (lz4_codec.h,
// zstd_codec.h): one compressor reused across many blocks, as in the benchmarks, on
// kvbench's value-generator bytes at several compression ratios.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/value_generator.h"
#include "lz4_codec.h"
#include "zstd_codec.h"

namespace kvbench {
namespace micro {
namespace {

const size_t kSizes[] = {1, 7, 100, 256, 1024, 4096, 8192, 16384, 65536};

// Blocks of every size, cut one after another from the generator's buffer.
std::vector<std::string> InputBlocksFor(double ratio) {
  ValueGenerator gen(/*seed=*/1, ratio, 1 << 20);
  std::vector<std::string> blocks;
  for (int round = 0; round < 3; ++round) {
    for (size_t n : kSizes) blocks.push_back(gen.Next(n).ToString());
  }
  return blocks;
}

class CodecTest : public testing::TestWithParam<double> {};

// Compresses and decompresses every input block at `level`; `compress` returns the compressed
// size (0 on failure), `decompress` the decompressed size. Repetitive input must actually
// compress (guards against a stored/no-op path).
template <class Compress, class Decompress>
void CheckRoundTrips(double ratio, int level, size_t (*bound)(size_t), Compress compress,
                     Decompress decompress) {
  size_t in_bytes = 0, out_bytes = 0;
  for (const std::string& in : InputBlocksFor(ratio)) {
    std::vector<char> c(bound(in.size()));
    const size_t n = compress(in.data(), in.size(), c.data(), c.size());
    ASSERT_GT(n, 0u) << "level " << level << " size " << in.size();
    std::string back(in.size(), '\0');
    ASSERT_EQ(in.size(), decompress(c.data(), n, back.data(), back.size()))
        << "level " << level << " size " << in.size();
    ASSERT_EQ(in, back) << "level " << level << " size " << in.size();
    in_bytes += in.size();
    out_bytes += n;
  }
  if (ratio <= 0.5) {
    EXPECT_LT(out_bytes, in_bytes * 3 / 4) << "level " << level;
  }
}

TEST_P(CodecTest, Lz4RoundTrips) {
  for (int level : {0, -8, 9}) {
    Lz4Compressor lz4(level);
    CheckRoundTrips(
        GetParam(), level, &Lz4Compressor::Bound,
        [&](const char* in, size_t n, char* out, size_t cap) {
          return lz4.Compress(in, n, out, cap);
        },
        &Lz4Compressor::Decompress);
  }
}

TEST_P(CodecTest, ZstdRoundTrips) {
  ZstdDecompressor d;
  for (int level : {1, 3}) {
    ZstdCompressor zstd(level);
    CheckRoundTrips(
        GetParam(), level, &ZstdCompressor::Bound,
        [&](const char* in, size_t n, char* out, size_t cap) {
          return zstd.Compress(in, n, out, cap);
        },
        [&](const char* in, size_t n, char* out, size_t cap) {
          return d.Decompress(in, n, out, cap);
        });
  }
}

INSTANTIATE_TEST_SUITE_P(CompressionRatios, CodecTest, testing::Values(0.25, 0.5, 1.0),
                         [](const testing::TestParamInfo<double>& info) {
                           return "ratio_" + std::to_string(static_cast<int>(info.param * 100));
                         });

TEST(CodecErrorTest, CorruptInputIsReportedNotCrashed) {
  const std::string in = ValueGenerator(1, 0.5, 4096).buffer();
  std::vector<char> c(Lz4Compressor::Bound(in.size()));
  Lz4Compressor lz4(0);
  const size_t n = lz4.Compress(in.data(), in.size(), c.data(), c.size());
  ASSERT_GT(n, 0u);
  std::string back(in.size(), '\0');
  EXPECT_EQ(0u, Lz4Compressor::Decompress(c.data(), n / 2, back.data(), back.size()));
  std::vector<char> z(ZstdCompressor::Bound(in.size()));
  ZstdCompressor zstd(3);
  const size_t zn = zstd.Compress(in.data(), in.size(), z.data(), z.size());
  ASSERT_GT(zn, 0u);
  ZstdDecompressor d;
  EXPECT_EQ(0u, d.Decompress(z.data(), zn / 2, back.data(), back.size()));
}

}  // namespace
}  // namespace micro
}  // namespace kvbench
