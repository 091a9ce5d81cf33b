# Cross-compiles for aarch64 with clang --target, linking with the GNU cross binutils
# (binutils-aarch64-linux-gnu) against the sysroot's libstdc++. Used by arm64-cross-clang.
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
