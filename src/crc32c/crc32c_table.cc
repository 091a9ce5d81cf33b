// Portable crc32c: slicing-by-8 (Intel's "Slicing-by-8" tables, as in RocksDB's and LevelDB's
// fallback). Eight table lookups per 8-byte word, no dependency on CPU features.
#include <array>
#include <cstdint>

#include "crc32c/crc32c_internal.h"

namespace kvbench {
namespace crc32c {
namespace internal {

namespace {

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// t[0] is the byte-at-a-time table; t[k][b] is the CRC of byte b followed by k zero bytes.
constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

}  // namespace

KVBENCH_CRC32C_KERNEL uint32_t ExtendTable(uint32_t init_crc, const char* data, size_t n) {
  const auto& t = kTables;
  uint32_t c = ~init_crc;
  const char* p = data;
  while (n >= 8) {
    const uint64_t w = LoadLE64(p) ^ c;
    c = t[7][w & 0xff] ^ t[6][(w >> 8) & 0xff] ^ t[5][(w >> 16) & 0xff] ^ t[4][(w >> 24) & 0xff] ^
        t[3][(w >> 32) & 0xff] ^ t[2][(w >> 40) & 0xff] ^ t[1][(w >> 48) & 0xff] ^ t[0][w >> 56];
    p += 8;
    n -= 8;
  }
  while (n > 0) {
    c = t[0][(c ^ static_cast<unsigned char>(*p)) & 0xff] ^ (c >> 8);
    ++p;
    --n;
  }
  return ~c;
}

}  // namespace internal
}  // namespace crc32c
}  // namespace kvbench
