# FindSnappy: finds Snappy (Debian: libsnappy-dev) and defines the IMPORTED target Snappy::snappy.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(Snappy HEADER snappy.h LIBRARY snappy PACKAGE libsnappy-dev TARGET Snappy::snappy)
