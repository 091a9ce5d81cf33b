// CRC-32C (Castagnoli), as used by iSCSI (RFC 3720), ext4, RocksDB and LevelDB.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvbench {
namespace crc32c {

// Returns the crc32c of concat(A, data[0,n-1]) where init_crc is the crc32c of some string A.
// Uses the fastest implementation this build and CPU support.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// The crc32c of data[0,n-1].
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

}  // namespace crc32c
}  // namespace kvbench
