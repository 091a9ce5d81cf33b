# kvbench_find_dependency(<DEP> [QUIET])
#
# Finds one dependency of the manifest (cmake/deps.json, read by KvbenchManifest.cmake): its
# header and library. Defines the IMPORTED target <cmake>::<name> (RocksDB::rocksdb) and, in the
# caller's scope, <cmake>_FOUND, <cmake>_INCLUDE_DIR and <cmake>_LIBRARY (cached). A missing
# library is reported by its Debian package rather than as a linker error later.
#
# When KVBENCH_<DEP>_PREFIX is set (cmake/KvbenchSourceDeps.cmake: a source build or
# KVBENCH_<DEP>_ROOT), only that prefix is searched, so a system copy can never be picked up
# instead. A static library also brings its link dependencies: threads, and the manifest's
# static_links (RocksDB's codecs, for example).
include(FindPackageHandleStandardArgs)
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchManifest.cmake)

function(kvbench_find_dependency dep)
  cmake_parse_arguments(A "QUIET" "" "" ${ARGN})
  set(name "${KVBENCH_DEP_${dep}_CMAKE}")
  set(target "${name}::${KVBENCH_DEP_${dep}_NAME}")
  set(header "${KVBENCH_DEP_${dep}_HEADER}")
  set(library "${KVBENCH_DEP_${dep}_LIBRARY}")
  set(prefix "${KVBENCH_${dep}_PREFIX}")
  # A location found under another prefix (or on the system) must be searched again.
  if(NOT "${_KVBENCH_${dep}_SEARCHED_IN}" STREQUAL "${prefix}")
    unset(${name}_INCLUDE_DIR CACHE)
    unset(${name}_LIBRARY CACHE)
  endif()
  set(_KVBENCH_${dep}_SEARCHED_IN "${prefix}" CACHE INTERNAL "")
  if(prefix)
    # The prefix is a path on this machine even when cross-compiling: not under the sysroot.
    find_path(${name}_INCLUDE_DIR NAMES ${header} PATHS ${prefix}/include NO_DEFAULT_PATH
              NO_CMAKE_FIND_ROOT_PATH)
    find_library(${name}_LIBRARY NAMES ${library} PATHS ${prefix}/lib ${prefix}/lib64
                 NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
    set(_why "${header} and lib${library} under ${prefix}")
  else()
    find_path(${name}_INCLUDE_DIR NAMES ${header})
    find_library(${name}_LIBRARY NAMES ${library})
    set(_why "${KVBENCH_DEP_${dep}_INSTALL_HINT}")
  endif()
  set(${name}_FIND_QUIETLY ${A_QUIET})
  find_package_handle_standard_args(${name}
    REQUIRED_VARS ${name}_LIBRARY ${name}_INCLUDE_DIR
    REASON_FAILURE_MESSAGE "${_why}")
  set(${name}_FOUND ${${name}_FOUND} PARENT_SCOPE)
  set(${name}_INCLUDE_DIR ${${name}_INCLUDE_DIR} PARENT_SCOPE)
  set(${name}_LIBRARY ${${name}_LIBRARY} PARENT_SCOPE)
  if(${name}_FOUND AND NOT TARGET ${target})
    add_library(${target} UNKNOWN IMPORTED)
    # An imported target's include directories are SYSTEM (-isystem) for its users, CMake's
    # default: warnings in a library's headers are the library's, not kvbench's own code's.
    set_target_properties(${target} PROPERTIES
      IMPORTED_LOCATION "${${name}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${${name}_INCLUDE_DIR}")
    if(${name}_LIBRARY MATCHES "\\.a$")
      set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES
        Threads::Threads ${KVBENCH_DEP_${dep}_STATIC_LINKS})
    endif()
  endif()
  # A library kept up to date in its tree (KVBENCH_DEPS_LIVE): whatever uses it waits for that.
  if(TARGET ${target} AND TARGET kvbench_dep_${KVBENCH_DEP_${dep}_NAME})
    add_dependencies(${target} kvbench_dep_${KVBENCH_DEP_${dep}_NAME})
  endif()
  mark_as_advanced(${name}_INCLUDE_DIR ${name}_LIBRARY)
endfunction()
