# Compiles how kvbench was built (compiler, version, flags, preset, build type, git revision)
# into the binary, so every result carries it.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE KVBENCH_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT KVBENCH_GIT_REVISION)
  set(KVBENCH_GIT_REVISION "unknown")
elseif(_dirty)
  string(APPEND KVBENCH_GIT_REVISION "-dirty")
endif()
set(KVBENCH_BUILD_PRESET "${KVBENCH_PRESET}")
if(NOT KVBENCH_BUILD_PRESET)
  set(KVBENCH_BUILD_PRESET "none")
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/src/common/build_info.cc.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/build_info.cc @ONLY)
