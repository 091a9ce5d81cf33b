# Recognising a dependency's source tree: kvbench_dep_check_tree (is <dir> that library?) and
# kvbench_dep_version (which version do its headers declare?), both from the manifest's
# source_trees (cmake/deps.json). Used by KvbenchSourceDeps.cmake, and by
# tests/check_source_tree.cmake in script mode, so it sets no project state.
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchManifest.cmake)

# kvbench_dep_check_tree(<DEP> <dir> <out-tree>): the index of the manifest's source tree that
# <dir> is (its marker and every `also` file exist), or a fatal error naming what was expected.
function(kvbench_dep_check_tree dep dir out)
  if(NOT IS_DIRECTORY "${dir}")
    message(FATAL_ERROR "KVBENCH_${dep}_SOURCE_DIR=${dir} is not a directory")
  endif()
  set(_markers "")
  foreach(_t ${KVBENCH_DEP_${dep}_TREES})
    set(_m "${KVBENCH_DEP_${dep}_TREE${_t}_MARKER}")
    list(APPEND _markers "${_m}")
    set(_ok TRUE)
    foreach(_f "${_m}" ${KVBENCH_DEP_${dep}_TREE${_t}_ALSO})
      if(NOT EXISTS "${dir}/${_f}")
        set(_ok FALSE)
      endif()
    endforeach()
    if(_ok)
      set(${out} ${_t} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  string(REPLACE ";" " or " _want "${_markers}")
  list(LENGTH _markers _n)
  if(_n EQUAL 1 AND KVBENCH_DEP_${dep}_TREE0_ALSO)
    string(REPLACE ";" " and " _also "${KVBENCH_DEP_${dep}_TREE0_ALSO}")
    string(APPEND _want " with ${_also}")
  endif()
  set(_lower "${KVBENCH_DEP_${dep}_NAME}")
  set(_how "${KVBENCH_DEP_${dep}_SOURCE_HINT}")
  if(NOT _how)
    set(_how "scripts/get-sources.sh ${_lower} <version> <dir> fetches one from Debian")
  endif()
  message(FATAL_ERROR
    "KVBENCH_${dep}_SOURCE_DIR=${dir} is not a ${_lower} source tree: expected ${_want} in it. "
    ${_how} ".")
endfunction()

# kvbench_dep_version(<DEP> <dir> <tree> <out>): the version tree <tree>'s version file
# declares, from the manifest's version_macros written as `#define NAME N` or `NAME=N`
# (WiredTiger's RELEASE_INFO); "unknown" unless all three parts are found.
function(kvbench_dep_version dep dir tree out)
  set(_file "${dir}/${KVBENCH_DEP_${dep}_TREE${tree}_VERSION_FILE}")
  set(_lines "")
  if(EXISTS "${_file}")
    file(STRINGS "${_file}" _lines REGEX "^(#[ \t]*define[ \t]+)?[A-Z0-9_]+([ \t]+|=)[0-9]+")
  endif()
  set(_parts "")
  foreach(_macro ${KVBENCH_DEP_${dep}_VERSION_MACROS})
    set(_val "")
    foreach(_l ${_lines})
      # Two tests: if() evaluates both sides of an OR, and each MATCHES resets CMAKE_MATCH_1.
      if(_l MATCHES "^#[ \t]*define[ \t]+${_macro}[ \t]+([0-9]+)")
        set(_val ${CMAKE_MATCH_1})
        break()
      elseif(_l MATCHES "^${_macro}=([0-9]+)")
        set(_val ${CMAKE_MATCH_1})
        break()
      endif()
    endforeach()
    list(APPEND _parts "${_val}")
  endforeach()
  string(REPLACE ";" "." _v "${_parts}")
  if(NOT _v MATCHES "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    set(_v "unknown")
  endif()
  set(${out} "${_v}" PARENT_SCOPE)
endfunction()
