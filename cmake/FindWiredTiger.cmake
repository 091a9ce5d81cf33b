# FindWiredTiger: finds WiredTiger (Debian: libwiredtiger-dev) and defines the IMPORTED target WiredTiger::wiredtiger.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(WiredTiger HEADER wiredtiger.h LIBRARY wiredtiger PACKAGE libwiredtiger-dev TARGET WiredTiger::wiredtiger)
