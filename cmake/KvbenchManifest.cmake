# Reads the dependency manifest, cmake/deps.json: every library kvbench links is spelled there
# once (scripts/kvbtools reads the same file). Usable in script mode (tests/check_source_tree.cmake).
#
# Sets, for each dependency in manifest order, keyed by DEP = its upper-case name:
#   KVBENCH_DEFAULT_ENGINE             --engine's default (rocksdb)
#   KVBENCH_DEPS                       ROCKSDB, LZ4, ... in manifest order
#   KVBENCH_ENGINE_DEPS                the engines among them
#   KVBENCH_DEP_<DEP>_NAME             rocksdb          (--engine name, adapter file, audit name)
#   KVBENCH_DEP_<DEP>_CMAKE            RocksDB          (<CMAKE>_FOUND, target <CMAKE>::<NAME>)
#   KVBENCH_DEP_<DEP>_ENGINE           ON / OFF
#   KVBENCH_DEP_<DEP>_{DESCRIPTION,DEBIAN,HEADER,LIBRARY,SOURCE_HINT,PREFIX_VERSION_FILE}
#   KVBENCH_DEP_<DEP>_SOURCE_BUILD     ON / OFF
#   KVBENCH_DEP_<DEP>_OPTIONAL         ON for "required": false (used when found)
#   KVBENCH_DEP_<DEP>_{DEBIAN_ARCHES,VERSION_MACROS,STATIC_LINKS}   CMake lists
#   KVBENCH_DEP_<DEP>_TREES            the indices 0..n-1 of its source trees ("" when none), and
#   KVBENCH_DEP_<DEP>_TREE<i>_{MARKER,ALSO,VERSION_FILE}
#   KVBENCH_DEP_<DEP>_INSTALL_HINT     "install <package> (...) and reconfigure"
include_guard(GLOBAL)

set(KVBENCH_MANIFEST "${CMAKE_CURRENT_LIST_DIR}/deps.json")
if(NOT CMAKE_SCRIPT_MODE_FILE)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${KVBENCH_MANIFEST}")
endif()
file(READ "${KVBENCH_MANIFEST}" _kvb_json)

# _kvb_json_list(<out> <path>...): the JSON array at <path> as a CMake list.
function(_kvb_json_list out)
  string(JSON _n ERROR_VARIABLE _err LENGTH "${_kvb_json}" ${ARGN})
  set(_list "")
  if(NOT _err AND _n GREATER 0)
    math(EXPR _last "${_n} - 1")
    foreach(_i RANGE ${_last})
      string(JSON _v GET "${_kvb_json}" ${ARGN} ${_i})
      list(APPEND _list "${_v}")
    endforeach()
  endif()
  set(${out} "${_list}" PARENT_SCOPE)
endfunction()

string(JSON KVBENCH_DEFAULT_ENGINE GET "${_kvb_json}" default_engine)
set(KVBENCH_DEPS "")
set(KVBENCH_ENGINE_DEPS "")
string(JSON _kvb_n LENGTH "${_kvb_json}" deps)
math(EXPR _kvb_last "${_kvb_n} - 1")
foreach(_i RANGE ${_kvb_last})
  string(JSON _name GET "${_kvb_json}" deps ${_i} name)
  string(TOUPPER "${_name}" _D)
  list(APPEND KVBENCH_DEPS ${_D})
  set(KVBENCH_DEP_${_D}_NAME "${_name}")
  foreach(_f cmake engine description debian header library source_build prefix_version_file
             source_hint)
    string(TOUPPER ${_f} _F)
    string(JSON KVBENCH_DEP_${_D}_${_F} ERROR_VARIABLE _err GET "${_kvb_json}" deps ${_i} ${_f})
    if(_err)
      set(KVBENCH_DEP_${_D}_${_F} "")
    endif()
  endforeach()
  foreach(_f debian_arches version_macros static_links)
    string(TOUPPER ${_f} _F)
    _kvb_json_list(KVBENCH_DEP_${_D}_${_F} deps ${_i} ${_f})
  endforeach()
  # "required": false marks an optional library (absent = required, for non-engines).
  string(JSON _req ERROR_VARIABLE _err GET "${_kvb_json}" deps ${_i} required)
  if(NOT _err AND NOT _req)
    set(KVBENCH_DEP_${_D}_OPTIONAL ON)
  else()
    set(KVBENCH_DEP_${_D}_OPTIONAL OFF)
  endif()
  set(KVBENCH_DEP_${_D}_TREES "")
  string(JSON _nt ERROR_VARIABLE _err LENGTH "${_kvb_json}" deps ${_i} source_trees)
  if(NOT _err AND _nt GREATER 0)
    math(EXPR _lt "${_nt} - 1")
    foreach(_t RANGE ${_lt})
      list(APPEND KVBENCH_DEP_${_D}_TREES ${_t})
      string(JSON KVBENCH_DEP_${_D}_TREE${_t}_MARKER GET "${_kvb_json}" deps ${_i} source_trees
             ${_t} marker)
      string(JSON KVBENCH_DEP_${_D}_TREE${_t}_VERSION_FILE GET "${_kvb_json}" deps ${_i}
             source_trees ${_t} version_file)
      _kvb_json_list(KVBENCH_DEP_${_D}_TREE${_t}_ALSO deps ${_i} source_trees ${_t} also)
    endforeach()
  endif()
  set(_where "scripts/install-deps.sh")
  if(KVBENCH_DEP_${_D}_DEBIAN_ARCHES)
    string(REPLACE ";" ", " _arches "${KVBENCH_DEP_${_D}_DEBIAN_ARCHES}")
    string(APPEND _where ": Debian ships it for ${_arches} only")
  endif()
  set(KVBENCH_DEP_${_D}_INSTALL_HINT
      "install ${KVBENCH_DEP_${_D}_DEBIAN} (${_where}) and reconfigure")
  if(KVBENCH_DEP_${_D}_ENGINE)
    list(APPEND KVBENCH_ENGINE_DEPS ${_D})
  endif()
endforeach()
unset(_kvb_json)
