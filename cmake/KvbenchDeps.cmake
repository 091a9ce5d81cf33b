# Dependency discovery. Engines are optional unless KVBENCH_REQUIRE_ALL_ENGINES is ON: a missing
# engine library is reported by Debian package name and the build goes on without it. Where each
# library comes from (Debian, a prefix, or a source build) is decided first
# (cmake/KvbenchSourceDeps.cmake); the codecs are found before the engines, whose static builds
# link them.

include(${CMAKE_CURRENT_LIST_DIR}/KvbenchSourceDeps.cmake)

find_package(Threads REQUIRED)
find_package(gflags REQUIRED)

foreach(_l xxHash LZ4 Zstd Snappy)
  find_package(${_l})
  if(NOT ${_l}_FOUND)
    message(FATAL_ERROR "${_l} is required: install ${${_l}_DEBIAN_PACKAGE} (scripts/install-deps.sh)")
  endif()
endforeach()

set(KVBENCH_ENGINES_FOUND "")
set(KVBENCH_ENGINES_MISSING "")
set(_pkg_RocksDB librocksdb-dev)
set(_pkg_WiredTiger "libwiredtiger-dev (Debian ships it for amd64 only)")
set(_pkg_LMDB liblmdb-dev)
foreach(_e RocksDB WiredTiger LMDB)
  find_package(${_e} QUIET)
  string(TOUPPER ${_e} _E)
  if(NOT ${_e}_FOUND AND KVBENCH_${_E}_PREFIX)
    message(FATAL_ERROR "${_e} not found under ${KVBENCH_${_E}_PREFIX} "
                        "(from KVBENCH_${_E}_SOURCE_DIR or KVBENCH_${_E}_ROOT)")
  endif()
  if(${_e}_FOUND)
    list(APPEND KVBENCH_ENGINES_FOUND ${_e})
  else()
    list(APPEND KVBENCH_ENGINES_MISSING ${_e})
    set(_msg "engine ${_e} not found: install ${_pkg_${_e}} (scripts/install-deps.sh) and reconfigure")
    if(KVBENCH_REQUIRE_ALL_ENGINES)
      message(FATAL_ERROR "${_msg}; KVBENCH_REQUIRE_ALL_ENGINES=ON forbids building without it.")
    else()
      message(WARNING "${_msg}. Building without it; kvbench will say so if asked for it.")
    endif()
  endif()
endforeach()
message(STATUS "kvbench engines: memory null ${KVBENCH_ENGINES_FOUND}")

