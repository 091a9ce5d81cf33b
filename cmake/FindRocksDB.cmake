# FindRocksDB: finds RocksDB (Debian: librocksdb-dev) and defines the IMPORTED target RocksDB::rocksdb.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)
kvbench_find_library(RocksDB HEADER rocksdb/db.h LIBRARY rocksdb PACKAGE librocksdb-dev TARGET RocksDB::rocksdb)
