# FindLZ4: finds LZ4 (Debian: liblz4-dev) and defines the IMPORTED target LZ4::lz4.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(LZ4 HEADER lz4.h LIBRARY lz4 PACKAGE liblz4-dev TARGET LZ4::lz4)
