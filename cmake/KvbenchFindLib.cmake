# kvbench_find_library(<Name> HEADER <h> LIBRARY <lib> PACKAGE <debian-pkg> TARGET <ns::tgt>)
#
# Shared body of the Find modules: finds one header and one library, defines an IMPORTED target
# and <Name>_FOUND, and remembers the Debian package that provides it so a missing library is
# reported by package name rather than as a linker error.
include(FindPackageHandleStandardArgs)
function(kvbench_find_library name)
  cmake_parse_arguments(A "" "HEADER;LIBRARY;PACKAGE;TARGET" "" ${ARGN})
  find_path(${name}_INCLUDE_DIR NAMES ${A_HEADER})
  find_library(${name}_LIBRARY NAMES ${A_LIBRARY})
  set(${name}_DEBIAN_PACKAGE ${A_PACKAGE} PARENT_SCOPE)
  find_package_handle_standard_args(${name}
    REQUIRED_VARS ${name}_LIBRARY ${name}_INCLUDE_DIR
    REASON_FAILURE_MESSAGE "install the Debian package ${A_PACKAGE} (scripts/install-deps.sh does)")
  set(${name}_FOUND ${${name}_FOUND} PARENT_SCOPE)
  if(${name}_FOUND AND NOT TARGET ${A_TARGET})
    add_library(${A_TARGET} UNKNOWN IMPORTED)
    set_target_properties(${A_TARGET} PROPERTIES
      IMPORTED_LOCATION "${${name}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${${name}_INCLUDE_DIR}")
  endif()
  mark_as_advanced(${name}_INCLUDE_DIR ${name}_LIBRARY)
endfunction()
