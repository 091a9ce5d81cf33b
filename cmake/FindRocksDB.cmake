# FindRocksDB: finds RocksDB (Debian: librocksdb-dev) and defines the IMPORTED target RocksDB::rocksdb.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(RocksDB HEADER rocksdb/db.h LIBRARY rocksdb PACKAGE librocksdb-dev TARGET RocksDB::rocksdb)
# A static librocksdb (a source build) needs the libraries it was built with: the codecs that
# kvbench links anyway (so each appears once, from wherever kvbench took it), zlib, bzip2, dl.
if(RocksDB_FOUND AND RocksDB_LIBRARY MATCHES "\\.a$")
  set_property(TARGET RocksDB::rocksdb APPEND PROPERTY INTERFACE_LINK_LIBRARIES
    Snappy::snappy LZ4::lz4 Zstd::zstd z bz2 ${CMAKE_DL_LIBS})
endif()
