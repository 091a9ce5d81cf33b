// RocksDB's own crc32c, as the installed librocksdb was built. Only used when CMake found RocksDB
// (KVBENCH_HAVE_ROCKSDB).
//
// Why declarations instead of an #include: RocksDB's crc32c API lives in util/crc32c.h, which is
// not among the headers RocksDB installs (only include/rocksdb/ is), yet librocksdb.so exports
// the functions (`nm -DC librocksdb.so | grep crc32c` on Debian 12, RocksDB 7.8.3):
//   rocksdb::crc32c::Extend(unsigned int, char const*, unsigned long)
//   rocksdb::crc32c::IsFastCrc32Supported[abi:cxx11]()      (returns std::string)
// We declare them with exactly those signatures, so the mangled names match; if a RocksDB release
// changes them, the link fails rather than calling something else. GetRocksVersionAsString is
// public API (rocksdb/version.h), declared here too because only kv/ adapters include engine
// headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rocksdb {

std::string GetRocksVersionAsString(bool with_patch);

namespace crc32c {

// Like kvbench::crc32c::Extend; dispatches inside RocksDB as RocksDB was built.
uint32_t Extend(uint32_t init_crc, const char* data, size_t n);

// A sentence such as "Supported on x86" or "Not supported on x86".
std::string IsFastCrc32Supported();

}  // namespace crc32c
}  // namespace rocksdb
