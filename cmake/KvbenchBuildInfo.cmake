# Compiles how kvbench was built (compiler, version, flags, preset, build type, git revision)
# into the binary, so every result carries it.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE KVBENCH_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT KVBENCH_GIT_REVISION)
  set(KVBENCH_GIT_REVISION "unknown")
elseif(_dirty)
  string(APPEND KVBENCH_GIT_REVISION "-dirty")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/KvbenchTargetCpu.cmake)
set(KVBENCH_BUILD_PRESET "${KVBENCH_PRESET}")
if(NOT KVBENCH_BUILD_PRESET)
  set(KVBENCH_BUILD_PRESET "none")
endif()

# Each linked library's provenance (src/common/build_info.h, LibraryOrigin): for a Debian library
# the package that owns the file, for a prefix its path, for a source build the tree, version,
# compiler and flags recorded by cmake/KvbenchSourceDeps.cmake.
set(KVBENCH_LIBRARY_ORIGINS "")
foreach(_dep ${KVBENCH_DEPS})  # manifest order (cmake/deps.json)
  set(_name ${KVBENCH_DEP_${_dep}_NAME})
  set(_find ${KVBENCH_DEP_${_dep}_CMAKE})
  if(NOT ${_find}_FOUND)
    continue()
  endif()
  set(_package "")
  set(_prefix "${KVBENCH_${_dep}_PREFIX}")
  set(_version "")
  set(_source "")
  set(_compiler "")
  set(_flags "")
  if(NOT KVBENCH_${_dep}_ORIGIN)
    set(KVBENCH_${_dep}_ORIGIN system)  # not buildable from source: always Debian's
  endif()
  if(KVBENCH_${_dep}_ORIGIN STREQUAL "system")
    file(REAL_PATH "${${_find}_LIBRARY}" _real)
    execute_process(COMMAND dpkg-query -S "${_real}" OUTPUT_VARIABLE _owner
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _owner MATCHES "^([^ ,]+): ")
      set(_pkg "${CMAKE_MATCH_1}")
      execute_process(COMMAND dpkg-query -W -f=\${Version} "${_pkg}" OUTPUT_VARIABLE _pv
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      set(_package "${_pkg} ${_pv}")
    endif()
  elseif(KVBENCH_${_dep}_ORIGIN STREQUAL "source")
    set(_version "${KVBENCH_${_dep}_ORIGIN_VERSION}")
    set(_source "${KVBENCH_${_dep}_ORIGIN_SOURCE_DIR}")
    set(_compiler "${KVBENCH_${_dep}_ORIGIN_COMPILER}")
    set(_flags "${KVBENCH_${_dep}_ORIGIN_FLAGS}")
  endif()
  string(APPEND KVBENCH_LIBRARY_ORIGINS "      {")
  foreach(_v _name KVBENCH_${_dep}_ORIGIN ${_find}_LIBRARY _package _prefix _version _source
             _compiler _flags)
    kvbench_c_string(_q "${${_v}}")
    string(APPEND KVBENCH_LIBRARY_ORIGINS "${_q}, ")
  endforeach()
  string(APPEND KVBENCH_LIBRARY_ORIGINS "},\n")
  message(STATUS "kvbench: ${_name} from ${KVBENCH_${_dep}_ORIGIN}: "
                 "${_package}${_prefix} ${${_find}_LIBRARY}")
endforeach()

configure_file(${CMAKE_CURRENT_SOURCE_DIR}/src/common/build_info.cc.in
               ${CMAKE_CURRENT_BINARY_DIR}/generated/build_info.cc @ONLY)
