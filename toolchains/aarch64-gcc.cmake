# Cross-compiles for aarch64 with Debian's gcc-aarch64-linux-gnu. Used by arm64-cross-gcc.
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
include(${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake)
