# FindLMDB: finds LMDB (Debian: liblmdb-dev) and defines the IMPORTED target LMDB::lmdb.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(LMDB HEADER lmdb.h LIBRARY lmdb PACKAGE liblmdb-dev TARGET LMDB::lmdb)
