// How this kvbench binary was built, fixed at configure time.
#pragma once

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
};

const BuildInfo& GetBuildInfo();

}  // namespace kvbench
