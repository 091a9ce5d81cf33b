# kvbench_find_library(<Name> HEADER <h> LIBRARY <lib> PACKAGE <debian-pkg> TARGET <ns::tgt>)
#
# Shared body of the Find modules: finds one header and one library, defines an IMPORTED target
# and <Name>_FOUND, and remembers the Debian package that provides it so a missing library is
# reported by package name rather than as a linker error.
#
# When KVBENCH_<NAME>_PREFIX is set (cmake/KvbenchSourceDeps.cmake: a source build or
# KVBENCH_<NAME>_ROOT), only that prefix is searched, so a system copy can never be picked up
# instead. A static library also brings its link dependencies (threads; RocksDB's codecs).
include(FindPackageHandleStandardArgs)
function(kvbench_find_library name)
  cmake_parse_arguments(A "" "HEADER;LIBRARY;PACKAGE;TARGET" "" ${ARGN})
  string(TOUPPER ${name} dep)
  set(prefix "${KVBENCH_${dep}_PREFIX}")
  # A location found under another prefix (or on the system) must be searched again.
  if(NOT "${_KVBENCH_${dep}_SEARCHED_IN}" STREQUAL "${prefix}")
    unset(${name}_INCLUDE_DIR CACHE)
    unset(${name}_LIBRARY CACHE)
  endif()
  set(_KVBENCH_${dep}_SEARCHED_IN "${prefix}" CACHE INTERNAL "")
  if(prefix)
    # The prefix is a path on this machine even when cross-compiling: not under the sysroot.
    find_path(${name}_INCLUDE_DIR NAMES ${A_HEADER} PATHS ${prefix}/include NO_DEFAULT_PATH
              NO_CMAKE_FIND_ROOT_PATH)
    find_library(${name}_LIBRARY NAMES ${A_LIBRARY} PATHS ${prefix}/lib ${prefix}/lib64
                 NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
    set(_why "${A_HEADER} and lib${A_LIBRARY} under ${prefix}")
  else()
    find_path(${name}_INCLUDE_DIR NAMES ${A_HEADER})
    find_library(${name}_LIBRARY NAMES ${A_LIBRARY})
    set(_why "install the Debian package ${A_PACKAGE} (scripts/install-deps.sh does)")
  endif()
  set(${name}_DEBIAN_PACKAGE ${A_PACKAGE} PARENT_SCOPE)
  find_package_handle_standard_args(${name}
    REQUIRED_VARS ${name}_LIBRARY ${name}_INCLUDE_DIR
    REASON_FAILURE_MESSAGE "${_why}")
  set(${name}_FOUND ${${name}_FOUND} PARENT_SCOPE)
  if(${name}_FOUND AND NOT TARGET ${A_TARGET})
    add_library(${A_TARGET} UNKNOWN IMPORTED)
    set_target_properties(${A_TARGET} PROPERTIES
      IMPORTED_LOCATION "${${name}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${${name}_INCLUDE_DIR}")
    if(${name}_LIBRARY MATCHES "\\.a$")
      set_property(TARGET ${A_TARGET} APPEND PROPERTY INTERFACE_LINK_LIBRARIES Threads::Threads)
    endif()
  endif()
  mark_as_advanced(${name}_INCLUDE_DIR ${name}_LIBRARY)
endfunction()
