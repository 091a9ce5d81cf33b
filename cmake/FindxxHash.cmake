# FindxxHash: finds xxHash (Debian: libxxhash-dev) and defines the IMPORTED target xxHash::xxhash.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(xxHash HEADER xxhash.h LIBRARY xxhash PACKAGE libxxhash-dev TARGET xxHash::xxhash)
