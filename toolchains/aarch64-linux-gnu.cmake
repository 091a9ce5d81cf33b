# Shared body of the aarch64 cross toolchains (aarch64-gcc.cmake, aarch64-clang.cmake): Debian's
# arm64 packages unpacked into a sysroot by scripts/arm64-sysroot.sh, and the test binaries run
# under qemu-aarch64 with a CPU model that has the CRC32 and PMULL (crypto) instructions, so the
# hardware crc32c paths are exercised. Timings under emulation mean nothing: never report them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

if(NOT KVBENCH_ARM64_SYSROOT)
  if(DEFINED ENV{KVBENCH_ARM64_SYSROOT})
    set(KVBENCH_ARM64_SYSROOT "$ENV{KVBENCH_ARM64_SYSROOT}")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(KVBENCH_ARM64_SYSROOT "$ENV{XDG_CACHE_HOME}/kvbench/sysroot-arm64")
  else()
    set(KVBENCH_ARM64_SYSROOT "$ENV{HOME}/.cache/kvbench/sysroot-arm64")
  endif()
endif()
set(KVBENCH_ARM64_SYSROOT "${KVBENCH_ARM64_SYSROOT}" CACHE PATH "aarch64 sysroot (scripts/arm64-sysroot.sh)")
if(NOT EXISTS "${KVBENCH_ARM64_SYSROOT}/.kvbench-sysroot")
  message(FATAL_ERROR
    "No aarch64 sysroot at ${KVBENCH_ARM64_SYSROOT}: run 'scripts/install-deps.sh --arm64-cross' "
    "(installs the cross compilers and qemu-user, then builds the sysroot with "
    "scripts/arm64-sysroot.sh).")
endif()
set(CMAKE_SYSROOT "${KVBENCH_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${KVBENCH_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

find_program(KVBENCH_QEMU_AARCH64 qemu-aarch64)
if(NOT KVBENCH_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64 not found: install qemu-user (scripts/install-deps.sh --arm64-cross)")
endif()
# neoverse-n1 (Graviton2, Ampere Altra): ARMv8.2 with CRC32 and PMULL; the presets compile for
# the same part (-mcpu=neoverse-n1).
set(KVBENCH_QEMU_CPU neoverse-n1 CACHE STRING "qemu-aarch64 -cpu model for tests")
set(CMAKE_CROSSCOMPILING_EMULATOR
    "${KVBENCH_QEMU_AARCH64};-L;${KVBENCH_ARM64_SYSROOT};-cpu;${KVBENCH_QEMU_CPU}")
