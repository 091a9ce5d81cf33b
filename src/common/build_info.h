// How this kvbench binary was built, fixed at configure time.
#pragma once

#include <string>
#include <vector>

namespace kvbench {

struct BuildInfo {
  const char* kvbench_version;
  const char* git_revision;
  const char* preset;       // CMake preset name, or "none"
  const char* build_type;   // CMAKE_BUILD_TYPE
  const char* compiler_id;  // GNU, Clang
  const char* compiler_version;
  const char* cxx_flags;    // the flags kvbench's own sources were compiled with
  const char* arch_flags;   // -march=... / -mcpu=... from the preset ("" = compiler default)
  const char* target_arch;  // CMAKE_SYSTEM_PROCESSOR
  bool assertions;          // NDEBUG not defined in kvbench's own code
  // The CPU the compiler targets with arch_flags, as it reported at configure time: what
  // -march=native / -mcpu=native resolved to (cmake/KvbenchTargetCpu.cmake), e.g. "znver3",
  // "neoverse-n1 +15 target features"; "unknown" when the compiler did not say.
  const char* target_cpu;
  // "" when the tests run on the real CPU; otherwise what emulates it (qemu-aarch64 under a cross
  // preset or scripts/arm64-root.sh). Timings taken under it say nothing about real hardware.
  const char* emulator;
};

const BuildInfo& GetBuildInfo();

// Where a library kvbench links came from, as configured (cmake/KvbenchSourceDeps.cmake). Fields
// that do not apply to the origin are "".
struct LibraryOrigin {
  const char* name;         // the manifest's name (cmake/deps.json): "lz4", "rocksdb", ...
  const char* origin;       // "system" (Debian package), "prefix" (KVBENCH_<DEP>_ROOT) or "source"
  const char* linked_file;  // the file named on the link line
  const char* package;      // system: the Debian package owning it and its version
  const char* prefix;       // prefix, source: the installed tree kvbench took it from
  const char* version;      // source: the version its headers declare
  const char* source_dir;   // source: the tree it was built from
  const char* compiler;     // source: compiler id and version, e.g. "GNU 12.2.0"
  const char* flags;        // source: every flag it was compiled with
};

// Every library above that this build links, in that order.
const std::vector<LibraryOrigin>& LibraryOrigins();

// What a linked library says about itself at run time, for the build audit: its version, and
// notes on its build (rocksdb: whether it takes the hardware crc32c path, "crc32c: Supported on
// x86"). An engine adapter answers for its library (kv/registry.h, EngineLibrary).
struct LibraryFacts {
  std::string version;
  std::string notes;
};

}  // namespace kvbench
