// ISA-L's crc32c (crc32_iscsi) behind kvbench's crc32c::ExtendFn contract. Only used when CMake
// found ISA-L (KVBENCH_HAVE_ISAL), an optional dependency (cmake/deps.json).
//
// crc32_iscsi neither inverts its initial value nor its result (its init_crc is the raw register),
// so Extend(crc, data, n) = ~crc32_iscsi(data, n, ~crc); the crc32c tests check it against the
// table kernel. ISA-L picks its kernel at run time (on x86: by CPUID, up to AVX-512 VPCLMULQDQ).
#pragma once

#include <isa-l.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvbench {

// REQUIRES: n <= INT_MAX (crc32_iscsi takes an int length); kvbench_micro's blocks are far
// smaller.
inline uint32_t IsalExtend(uint32_t init_crc, const char* data, size_t n) {
  return ~crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<char*>(data)),
                      static_cast<int>(n), ~init_crc);
}

// The version of the headers kvbench_micro was compiled against, e.g. "2.30.0"; the library's
// package and version are in the isal_origin context entry.
inline std::string IsalVersion() {
  return std::to_string(ISAL_MAJOR_VERSION) + "." + std::to_string(ISAL_MINOR_VERSION) + "." +
         std::to_string(ISAL_PATCH_VERSION);
}

}  // namespace kvbench
