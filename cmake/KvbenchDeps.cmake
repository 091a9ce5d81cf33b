# Dependency discovery, driven by the manifest (cmake/deps.json). The codecs are required; the
# engines are optional unless KVBENCH_REQUIRE_ALL_ENGINES is ON: a missing engine library is
# reported by Debian package name and the build goes on without it. Where each library comes
# from (Debian, a prefix, or a source build) is decided first (cmake/KvbenchSourceDeps.cmake).
#
# Sets KVBENCH_ENGINES_FOUND (manifest names of the engines compiled in) and generates
# ${CMAKE_BINARY_DIR}/generated/kv/engines.def, the engine table src/kv/registry.cc expands.

include(${CMAKE_CURRENT_LIST_DIR}/KvbenchManifest.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchSourceDeps.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchFindLib.cmake)

find_package(Threads REQUIRED)

# Text as a C string literal.
function(kvbench_c_string out value)
  string(REPLACE "\\" "\\\\" value "${value}")
  string(REPLACE "\"" "\\\"" value "${value}")
  set(${out} "\"${value}\"" PARENT_SCOPE)
endfunction()

set(KVBENCH_ENGINES_FOUND "")
set(_engines_def "// Generated from cmake/deps.json by cmake/KvbenchDeps.cmake. Do not edit.\n")
foreach(_D ${KVBENCH_DEPS})
  set(_name ${KVBENCH_DEP_${_D}_NAME})
  set(_cmake ${KVBENCH_DEP_${_D}_CMAKE})
  if(NOT KVBENCH_DEP_${_D}_ENGINE AND KVBENCH_DEP_${_D}_OPTIONAL)
    # "required": false in the manifest (ISA-L, kvbench_micro's crc32c peer row): used if found.
    kvbench_find_dependency(${_D} QUIET)
    if(NOT ${_cmake}_FOUND)
      message(STATUS "kvbench: optional ${_name} not found, built without it: "
                     "${KVBENCH_DEP_${_D}_INSTALL_HINT}")
    endif()
    continue()
  endif()
  if(NOT KVBENCH_DEP_${_D}_ENGINE)
    kvbench_find_dependency(${_D})
    if(NOT ${_cmake}_FOUND AND KVBENCH_${_D}_PREFIX)
      message(FATAL_ERROR "${_name} not found under ${KVBENCH_${_D}_PREFIX} (include/ and lib/ "
                          "from KVBENCH_${_D}_SOURCE_DIR or KVBENCH_${_D}_ROOT)")
    elseif(NOT ${_cmake}_FOUND)
      message(FATAL_ERROR "${_name} is required: ${KVBENCH_DEP_${_D}_INSTALL_HINT}")
    endif()
    continue()
  endif()
  kvbench_find_dependency(${_D} QUIET)
  if(NOT ${_cmake}_FOUND AND KVBENCH_${_D}_PREFIX)
    message(FATAL_ERROR "${_name} not found under ${KVBENCH_${_D}_PREFIX} "
                        "(from KVBENCH_${_D}_SOURCE_DIR or KVBENCH_${_D}_ROOT)")
  endif()
  kvbench_c_string(_desc "${KVBENCH_DEP_${_D}_DESCRIPTION}")
  if(${_cmake}_FOUND)
    list(APPEND KVBENCH_ENGINES_FOUND ${_name})
    string(APPEND _engines_def "KVBENCH_ENGINE(${_name}, ${_desc})\n")
    continue()
  endif()
  kvbench_c_string(_hint "${KVBENCH_DEP_${_D}_INSTALL_HINT}")
  string(APPEND _engines_def "KVBENCH_MISSING_ENGINE(${_name}, ${_desc}, ${_hint})\n")
  set(_msg "engine ${_name} not found: ${KVBENCH_DEP_${_D}_INSTALL_HINT}")
  if(KVBENCH_REQUIRE_ALL_ENGINES)
    message(FATAL_ERROR "${_msg}; KVBENCH_REQUIRE_ALL_ENGINES=ON forbids building without it.")
  else()
    message(WARNING "${_msg}. Building without it; kvbench will say so if asked for it.")
  endif()
endforeach()
string(APPEND _engines_def "KVBENCH_DEFAULT_ENGINE(${KVBENCH_DEFAULT_ENGINE})\n")
# Rewritten only when it changes, so a reconfigure does not rebuild the registry.
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/generated/kv/engines.def CONTENT "${_engines_def}")
message(STATUS "kvbench storage engines: ${KVBENCH_ENGINES_FOUND} (and the reference engines)")

# The crc32c peers, where the build has them: RocksDB's own crc32c, as the installed library was
# built (bench/rocksdb_crc32c.h), and ISA-L's crc32_iscsi (bench/isal_crc32c.h), both optional.
# kvbench_micro measures them beside kvbench's kernels (src/crc32c) and micro_crc32c_test checks
# them against the table kernel.
function(kvbench_link_crc32c_peers target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/bench)
  if(RocksDB_FOUND)
    target_compile_definitions(${target} PRIVATE KVBENCH_HAVE_ROCKSDB=1)
    target_link_libraries(${target} PRIVATE RocksDB::rocksdb)
  endif()
  if(ISAL_FOUND)
    target_compile_definitions(${target} PRIVATE KVBENCH_HAVE_ISAL=1)
    target_link_libraries(${target} PRIVATE ISAL::isal)
  endif()
endfunction()
