# FindWiredTiger: finds WiredTiger (Debian: libwiredtiger-dev) and defines the IMPORTED target WiredTiger::wiredtiger.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(WiredTiger HEADER wiredtiger.h LIBRARY wiredtiger PACKAGE libwiredtiger-dev TARGET WiredTiger::wiredtiger)
# A static libwiredtiger (a source build, snappy built in) needs what it was built with.
if(WiredTiger_FOUND AND WiredTiger_LIBRARY MATCHES "\\.a$")
  set_property(TARGET WiredTiger::wiredtiger APPEND PROPERTY INTERFACE_LINK_LIBRARIES
    Snappy::snappy ${CMAKE_DL_LIBS} rt m)
endif()
