# `ctest` as the design card types it: `cmake --preset P && ctest` at the repository root builds P
# and runs every one of its tests.
#
# Each build tree's test list starts with a script (TEST_INCLUDE_FILES, from
# cmake/KvbenchCTestBuild.cmake.in) that ctest runs before it reads the test lists of src/, bench/
# and tests/. It builds the tree, so `ctest --preset P`, `ctest --test-dir build/P` and a bare
# `ctest` test what the sources say now; and because the lists gtest_discover_tests writes at build
# time are read after that build, a fresh tree's tests are all there (a FIXTURES_SETUP test that
# built would come too late: ctest has read the lists by then). When the build fails, or the tree
# is for another machine, every selected test fails with one line saying why, so `-R` and `-L`
# selections fail too instead of quietly finding nothing.
#
# Configuring a preset's own tree (build/<preset>) also writes <source>/CTestTestfile.cmake,
# ignored by git, that sends a bare `ctest` there with the test preset's environment: the preset
# configured last wins, and configure says which it is.

set(_kvbench_ctest_build "${CMAKE_BINARY_DIR}/kvbench-ctest-build.cmake")
file(RELATIVE_PATH KVBENCH_CTEST_TREE "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}")
if(KVBENCH_CTEST_TREE MATCHES "^\\.\\.")
  set(KVBENCH_CTEST_TREE "${CMAKE_BINARY_DIR}")
endif()
set(KVBENCH_CTEST_BUILD_HINT "cmake --build ${KVBENCH_CTEST_TREE}")
if(KVBENCH_PRESET)
  set(KVBENCH_CTEST_BUILD_HINT "cmake --build --preset ${KVBENCH_PRESET}")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/KvbenchCTestBuild.cmake.in "${_kvbench_ctest_build}" @ONLY)
set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${_kvbench_ctest_build}")

# The root CTestTestfile.cmake: only for a preset's own tree.
if(NOT KVBENCH_PRESET)
  return()
endif()
file(REAL_PATH "${CMAKE_SOURCE_DIR}/build/${KVBENCH_PRESET}" _preset_tree)
file(REAL_PATH "${CMAKE_BINARY_DIR}" _this_tree)
if(NOT _preset_tree STREQUAL _this_tree)
  message(STATUS "kvbench: a bare ctest at the repository root is not pointed at this tree "
                 "(not build/${KVBENCH_PRESET}): use ctest --test-dir ${CMAKE_BINARY_DIR}")
  return()
endif()

# The test preset's environment (the sanitizers' options), its ${sourceDir} expanded; a label
# filter cannot be applied from a test list, so configure says how to type it.
file(READ "${CMAKE_SOURCE_DIR}/CMakePresets.json" _presets)
string(JSON _n LENGTH "${_presets}" testPresets)
set(KVBENCH_CTEST_ENV "")
set(_filter "")
math(EXPR _last "${_n} - 1")
foreach(_i RANGE ${_last})
  string(JSON _name GET "${_presets}" testPresets ${_i} name)
  if(NOT _name STREQUAL KVBENCH_PRESET)
    continue()
  endif()
  string(JSON _env ERROR_VARIABLE _none GET "${_presets}" testPresets ${_i} environment)
  if(NOT _none)
    string(JSON _m LENGTH "${_env}")
    math(EXPR _m "${_m} - 1")
    foreach(_j RANGE ${_m})
      string(JSON _key MEMBER "${_env}" ${_j})
      string(JSON _value GET "${_env}" "${_key}")
      string(REPLACE "\${sourceDir}" "${CMAKE_SOURCE_DIR}" _value "${_value}")
      string(APPEND KVBENCH_CTEST_ENV "set(ENV{${_key}} [==[${_value}]==])\n")
    endforeach()
  endif()
  string(JSON _filter ERROR_VARIABLE _none GET "${_presets}" testPresets ${_i} filter include label)
  if(_none)
    set(_filter "")
  endif()
endforeach()
set(KVBENCH_CTEST_NOTE "")
if(_filter)
  set(KVBENCH_CTEST_NOTE " (its test preset selects label ${_filter}: ctest -L ${_filter})")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/KvbenchCTestRoot.cmake.in
               "${CMAKE_SOURCE_DIR}/CTestTestfile.cmake" @ONLY)
message(STATUS "kvbench: ctest at the repository root now builds and tests build/${KVBENCH_PRESET}"
               "${KVBENCH_CTEST_NOTE}")
