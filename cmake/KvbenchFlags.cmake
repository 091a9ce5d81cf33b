# Compiler flags for kvbench's own code. The preset decides the target (-march/-mcpu); every
# build keeps frame pointers so profiles work, and the flags are recorded in the binary.

if(KVBENCH_TARGET_ARCH)
  # Read before the cache is forgotten below: both are cache variables set by the preset.
  set(_preset "${KVBENCH_PRESET}")
  set(_target "${KVBENCH_TARGET_ARCH}")
  # The machine itself, not the platform cached in the tree: a checkout is shared with
  # scripts/arm64-root.sh, whose trees are aarch64 ones. A cross preset names its own.
  cmake_host_system_information(RESULT _host QUERY OS_PLATFORM)
  if(CMAKE_CROSSCOMPILING)
    set(_host ${CMAKE_SYSTEM_PROCESSOR})
  endif()
  if(_host MATCHES "^(x86_64|AMD64|amd64)$")
    set(_host x86_64)
  elseif(_host MATCHES "^(aarch64|arm64|ARM64)$")
    set(_host aarch64)
  endif()
  # For tests/presets_test.py only: the messages of the other machine's presets, on this one.
  if(DEFINED ENV{KVBENCH_PRETEND_HOST_ARCH})
    set(_host "$ENV{KVBENCH_PRETEND_HOST_ARCH}")
  endif()
  if(NOT _host STREQUAL _target)
    # Forget this machine's compilers, tools and platform, so that the same tree configures
    # afresh on the right machine (inside scripts/arm64-root.sh, which sees this checkout).
    file(REMOVE_RECURSE "${CMAKE_PLATFORM_INFO_DIR}")
    get_cmake_property(_cached CACHE_VARIABLES)
    foreach(_v IN LISTS _cached)
      unset(${_v} CACHE)
    endforeach()
  endif()
  if(NOT _host STREQUAL _target AND _target STREQUAL "aarch64")
    set(_cross arm64-cross-gcc)
    if(_preset MATCHES "clang")
      set(_cross arm64-cross-clang)
    endif()
    message(FATAL_ERROR
      "Preset '${_preset}' targets aarch64 and this machine is ${_host}. "
      "Two ways to build and test ARM here:\n"
      "  the command itself, inside an emulated arm64 Debian 12 (made on first use, see README):\n"
      "    scripts/arm64-root.sh -- sh -c 'cmake --preset ${_preset} && ctest'\n"
      "  or a faster cross build whose tests run under qemu:\n"
      "    scripts/install-deps.sh --arm64-cross && cmake --workflow --preset ${_cross}\n"
      "This machine's own presets are x86-* (cmake --list-presets).")
  elseif(NOT _host STREQUAL _target)
    message(FATAL_ERROR
      "Preset '${_preset}' targets ${_target} and this machine is ${_host}: "
      "use this machine's presets, arm-* on aarch64 "
      "(cmake --preset arm-clang-native && ctest; cmake --list-presets shows them all). "
      "kvbench has no cross preset for x86: build x86 on an x86 machine.")
  endif()
endif()

add_compile_options(-fno-omit-frame-pointer)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  add_compile_options(-mno-omit-leaf-frame-pointer)
endif()
if(KVBENCH_ARCH_FLAGS)
  separate_arguments(_arch UNIX_COMMAND "${KVBENCH_ARCH_FLAGS}")
  add_compile_options(${_arch})
endif()
if(KVBENCH_SANITIZE)
  add_compile_options(-fsanitize=${KVBENCH_SANITIZE} -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KVBENCH_SANITIZE})
endif()

# Warnings for kvbench's own targets only (dependencies' headers are system headers).
set(KVBENCH_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(KVBENCH_WERROR)
  list(APPEND KVBENCH_WARNINGS -Werror)
endif()

# The flags an optimised kvbench source file is compiled with, as recorded in build info.
string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
set(KVBENCH_EFFECTIVE_CXX_FLAGS
    "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_bt}} -fno-omit-frame-pointer ${KVBENCH_ARCH_FLAGS}")
if(KVBENCH_SANITIZE)
  string(APPEND KVBENCH_EFFECTIVE_CXX_FLAGS " -fsanitize=${KVBENCH_SANITIZE}")
endif()
string(STRIP "${KVBENCH_EFFECTIVE_CXX_FLAGS}" KVBENCH_EFFECTIVE_CXX_FLAGS)
string(REGEX REPLACE " +" " " KVBENCH_EFFECTIVE_CXX_FLAGS "${KVBENCH_EFFECTIVE_CXX_FLAGS}")
