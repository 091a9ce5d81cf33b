# FindZstd: finds Zstd (Debian: libzstd-dev) and defines the IMPORTED target Zstd::zstd.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(Zstd HEADER zstd.h LIBRARY zstd PACKAGE libzstd-dev TARGET Zstd::zstd)
