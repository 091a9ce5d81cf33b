// What a shared object's ELF file says about how it was built.
#pragma once

#include <string>

namespace kvbench {

struct ElfFacts {
  bool readable = false;
  // The .comment section's strings, e.g. "GCC: (Debian 12.2.0-14) 12.2.0"; "" when stripped.
  std::string compiler;
  // The object calls __assert_fail: some assert() survived NDEBUG, i.e. assertions are compiled
  // in (for an engine built with them on, every code path runs its checks).
  bool imports_assert_fail = false;
  bool has_debug_info = false;  // a .debug_info section (not the same as an unoptimised build)
};

// Reads the ELF file at `path` (64-bit, native byte order). Unreadable files give readable=false.
ElfFacts InspectElf(const std::string& path);

}  // namespace kvbench
