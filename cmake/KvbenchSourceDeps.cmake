# Where each dependency comes from, and building it from source with the preset's toolchain.
#
# For each DEP the manifest (cmake/deps.json) marks source_build (ROCKSDB, LZ4, ...):
#   -DKVBENCH_<DEP>_SOURCE_DIR=<dir>  build it from that source tree, at configure time, with the
#                                     compiler, target flags (KVBENCH_ARCH_FLAGS) and frame pointers
#                                     kvbench uses, as a Release build (-O2 -DNDEBUG), static;
#   -DKVBENCH_<DEP>_ROOT=<prefix>     use the library installed under <prefix> (include/, lib/);
#   neither                           Debian's package, found on the system paths.
# Source builds go to ${KVBENCH_DEPS_CACHE}/<dep>-<version>-<hash>/ (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/kvbench/deps), where <hash> covers the library, its version,
# the source tree's identity, the compilers (id, version, path), all flags, the build type and the
# recipe in this file; a stamp file there records that key in full, and a later configure with
# the same key reuses the build instead of rebuilding. ccache is used when it is installed.
#
# Each dependency's provenance ends up in KVBENCH_<DEP>_ORIGIN (system, prefix, source) and
# KVBENCH_<DEP>_ORIGIN_* variables that cmake/KvbenchBuildInfo.cmake compiles into the binary.

include(${CMAKE_CURRENT_LIST_DIR}/KvbenchManifest.cmake)
set(KVBENCH_SOURCE_DEPS "")
foreach(_d ${KVBENCH_DEPS})
  if(KVBENCH_DEP_${_d}_SOURCE_BUILD)
    list(APPEND KVBENCH_SOURCE_DEPS ${_d})
  endif()
endforeach()
if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_kvb_cache_default "$ENV{XDG_CACHE_HOME}/kvbench/deps")
else()
  set(_kvb_cache_default "$ENV{HOME}/.cache/kvbench/deps")
endif()
set(KVBENCH_DEPS_CACHE "${_kvb_cache_default}" CACHE PATH
    "Where libraries built from source are kept, one directory per build key")
cmake_host_system_information(RESULT _kvb_ncpu QUERY NUMBER_OF_LOGICAL_CORES)
set(KVBENCH_DEPS_JOBS "${_kvb_ncpu}" CACHE STRING "Parallel jobs for building dependencies")
# ccache hits across copies of one tree (kvb bisect's worktree per commit) need the compile lines
# to name every file by the same path: ccache (CCACHE_BASEDIR) rewrites absolute paths relative to
# the build directory, so the build directory must sit at the same place relative to the tree.
# ON: a CMake-built library is built in <tree>/.kvbench-build (removed once installed) instead of
# beside its install prefix. Writes into the tree: for trees kvb owns; the build key ignores it.
option(KVBENCH_DEPS_BUILD_IN_TREE "Build source dependencies inside their source tree" OFF)
mark_as_advanced(KVBENCH_DEPS_BUILD_IN_TREE)
# ON (kvb bisect's slots): a CMake-built library stays a part of this build. It is built inside
# its tree (<tree>/.kvbench-build, kept) and installed beside it (<tree>/.kvbench-live/prefix), so
# the paths kvbench compiles and links with stay the same whatever commit the tree holds, and
# every `cmake --build` first brings it up to date (target kvbench_dep_<lib>: its own incremental
# build, then its install, which copies only what changed): after a checkout of another commit in
# the tree, a build recompiles the library's changed files and what includes a changed header,
# and relinks, with no configure of kvbench. The recipe (compilers, flags, options) is configured
# once; a configure of kvbench with another recipe starts the library's build afresh.
option(KVBENCH_DEPS_LIVE "Keep source dependencies built in their tree, up to date at every build"
       OFF)
mark_as_advanced(KVBENCH_DEPS_LIVE)
find_program(KVBENCH_CCACHE ccache)
mark_as_advanced(KVBENCH_CCACHE)
foreach(_d ${KVBENCH_SOURCE_DEPS})
  set(KVBENCH_${_d}_SOURCE_DIR "" CACHE PATH "Build ${_d} from this source tree")
  set(KVBENCH_${_d}_ROOT "" CACHE PATH "Use ${_d} installed under this prefix")
  if(KVBENCH_${_d}_SOURCE_DIR AND KVBENCH_${_d}_ROOT)
    message(FATAL_ERROR "KVBENCH_${_d}_SOURCE_DIR and KVBENCH_${_d}_ROOT are both set; choose one.")
  endif()
endforeach()

# The flags every source-built library is compiled with: kvbench's target and frame-pointer
# flags, Release optimisation without assertions. Recorded verbatim in the build audit.
set(KVBENCH_DEPS_C_FLAGS "${CMAKE_C_FLAGS} -fno-omit-frame-pointer")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  string(APPEND KVBENCH_DEPS_C_FLAGS " -mno-omit-leaf-frame-pointer")
endif()
string(APPEND KVBENCH_DEPS_C_FLAGS " ${KVBENCH_ARCH_FLAGS}")
# Every function its own section, so that a layout seed (KvbenchLayout.cmake) can move it; the
# seed itself is a link flag and never part of the library's build key.
if(KVBENCH_LAYOUT_ON)
  string(APPEND KVBENCH_DEPS_C_FLAGS " -ffunction-sections")
endif()
set(KVBENCH_DEPS_CXX_FLAGS "${CMAKE_CXX_FLAGS} ${KVBENCH_DEPS_C_FLAGS}")
set(KVBENCH_DEPS_C_FLAGS "${CMAKE_C_FLAGS} ${KVBENCH_DEPS_C_FLAGS}")
set(KVBENCH_DEPS_RELEASE_FLAGS "-O2 -DNDEBUG")
foreach(_v KVBENCH_DEPS_C_FLAGS KVBENCH_DEPS_CXX_FLAGS)
  string(REGEX REPLACE " +" " " ${_v} "${${_v}}")
  string(STRIP "${${_v}}" ${_v})
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/KvbenchSourceTree.cmake)

# What identifies the tree's contents beyond its version number: get-sources.sh's tarball
# checksum, else the git commit (and whether the work tree is dirty), else its path.
function(kvbench_dep_tree_identity dir out)
  if(EXISTS "${dir}/.kvbench-source")
    file(STRINGS "${dir}/.kvbench-source" _s REGEX "^sha256=")
    set(${out} "tarball ${_s}" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND git -C "${dir}" rev-parse --show-toplevel
    OUTPUT_VARIABLE _top OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0)
    file(REAL_PATH "${_top}" _top)
    file(REAL_PATH "${dir}" _real)
  endif()
  if(_rc EQUAL 0 AND _top STREQUAL _real)
    execute_process(COMMAND git -C "${dir}" rev-parse HEAD OUTPUT_VARIABLE _head
      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND git -C "${dir}" status --porcelain --untracked-files=no
      OUTPUT_VARIABLE _dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_dirty)
      string(SHA256 _dh "${_dirty}")
      execute_process(COMMAND git -C "${dir}" diff HEAD OUTPUT_VARIABLE _diff ERROR_QUIET)
      string(SHA256 _dd "${_diff}")
      set(${out} "git ${_head} dirty ${_dd}" PARENT_SCOPE)
    else()
      set(${out} "git ${_head}" PARENT_SCOPE)
    endif()
    return()
  endif()
  file(REAL_PATH "${dir}" _real)
  set(${out} "path ${_real}" PARENT_SCOPE)
endfunction()

# The cmake -D arguments that build <dep>: our small projects for the C libraries, the library's
# own CMake for RocksDB and WiredTiger.
function(kvbench_dep_recipe dep dir marker out_project out_args)
  set(_args "")
  if(dep STREQUAL "ROCKSDB")
    set(_proj "${dir}")
    if(KVBENCH_ARCH_FLAGS MATCHES "native")
      set(_portable 0)
    else()
      set(_portable 1)
    endif()
    list(APPEND _args -DPORTABLE=${_portable} -DWITH_GFLAGS=OFF -DWITH_TESTS=OFF
      -DWITH_ALL_TESTS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_TOOLS=OFF -DWITH_CORE_TOOLS=OFF
      -DWITH_TRACE_TOOLS=OFF -DWITH_EXAMPLES=OFF -DWITH_JNI=OFF -DWITH_LIBURING=OFF
      -DWITH_SNAPPY=ON -DWITH_LZ4=ON -DWITH_ZSTD=ON -DWITH_ZLIB=ON -DWITH_BZ2=ON
      -DROCKSDB_BUILD_SHARED=OFF -DFAIL_ON_WARNINGS=OFF -DUSE_RTTI=ON
      # Only librocksdb.a is built (324 objects at 7.10). A unity build, 8 .cc files a
      # translation unit: rocksdb's headers are most of a file's compile time, so the library
      # compiles in 0.41x the time (2810 -> 1164 s at load ~10 here, docs/presets.md), and a
      # bisect step that touches a widely included header costs less as a whole unity rebuild
      # than as the plain build's partial one (512 s vs 1001 s). CMake before 4.0 names the
      # files in a unit by absolute path, so another worktree (kvb bisect's next commit) gets
      # no ccache hit on a unit: every step is a whole unity build. It also compiles other
      # code: fillseq +3.6%, readrandom +0.3% instructions against the plain build, and a
      # file added to the list moves the later units' boundaries (+0.4% on fillseq).
      -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8)
  elseif(dep STREQUAL "WIREDTIGER" AND EXISTS "${dir}/build_posix/configure.ac.in")
    # WiredTiger 3.x: autotools (kvbench_dep_build_autotools), a shared library with the snappy
    # extension beside it, which is where the adapter looks for it, as with Debian's package.
    set(_proj autotools)
    list(APPEND _args --enable-snappy --disable-static --with-pic)
  elseif(dep STREQUAL "WIREDTIGER")
    set(_proj "${dir}")
    # Untested (no WiredTiger tree was at hand): the option names of WiredTiger 10/11's CMake.
    # Snappy is built in, as a static library cannot load the extension beside a shared one.
    list(APPEND _args -DENABLE_STATIC=ON -DENABLE_SHARED=OFF -DHAVE_DIAGNOSTIC=OFF
      -DHAVE_UNITTEST=OFF -DENABLE_PYTHON=OFF -DENABLE_STRICT=OFF -DWT_STANDALONE_BUILD=ON
      -DENABLE_SNAPPY=ON -DHAVE_BUILTIN_EXTENSION_SNAPPY=ON -DCC_OPTIMIZE_LEVEL=-O2)
  else()
    set(_l ${KVBENCH_DEP_${dep}_NAME})
    set(_proj "${PROJECT_SOURCE_DIR}/cmake/deps/${_l}")
    get_filename_component(_srcdir "${dir}/${marker}" DIRECTORY)
    if(dep STREQUAL "LZ4" OR dep STREQUAL "ZSTD")
      set(_srcdir "${dir}")
    endif()
    list(APPEND _args "-DKVBENCH_DEP_SOURCE_DIR=${_srcdir}")
  endif()
  set(${out_project} "${_proj}" PARENT_SCOPE)
  set(${out_args} "${_args}" PARENT_SCOPE)
endfunction()

# A cross build's toolchain reaches the library's build too: its toolchain file (compiler
# target, sysroot) for CMake projects, --host/--target/--sysroot for autotools.
set(KVBENCH_DEPS_TOOLCHAIN_ARGS "")
if(CMAKE_TOOLCHAIN_FILE AND CMAKE_CROSSCOMPILING)
  list(APPEND KVBENCH_DEPS_TOOLCHAIN_ARGS "-DCMAKE_TOOLCHAIN_FILE=${CMAKE_TOOLCHAIN_FILE}")
  if(KVBENCH_ARM64_SYSROOT)
    list(APPEND KVBENCH_DEPS_TOOLCHAIN_ARGS "-DKVBENCH_ARM64_SYSROOT=${KVBENCH_ARM64_SYSROOT}")
  endif()
endif()

# kvbench_dep_build_autotools(<dir> <root> <prefix> <log> <args> <out-rc>): WiredTiger 3.x.
# The tree is copied (reconf writes into it), configured with kvbench's compilers and flags,
# and only the library and the snappy extension are built and installed.
function(kvbench_dep_build_autotools dir root prefix log args out_rc)
  find_program(KVBENCH_AUTORECONF autoreconf)
  find_program(KVBENCH_LIBTOOLIZE libtoolize)
  if(NOT KVBENCH_AUTORECONF OR NOT KVBENCH_LIBTOOLIZE)
    message(FATAL_ERROR "building WiredTiger 3.x from ${dir} needs autoconf, automake and "
                        "libtool: apt-get install autoconf automake libtool")
  endif()
  file(COPY "${dir}/" DESTINATION "${root}/src")
  set(cc "${CMAKE_C_COMPILER}")
  set(cflags "${KVBENCH_DEPS_C_FLAGS} ${KVBENCH_DEPS_RELEASE_FLAGS}")
  set(ldflags "")
  set(host "")
  if(CMAKE_CROSSCOMPILING)
    set(host "--host=${CMAKE_LIBRARY_ARCHITECTURE}")
    if(CMAKE_C_COMPILER_TARGET)
      string(APPEND cc " --target=${CMAKE_C_COMPILER_TARGET}")
    endif()
    if(CMAKE_SYSROOT)
      string(APPEND cc " --sysroot=${CMAKE_SYSROOT}")
    endif()
  endif()
  if(KVBENCH_CCACHE)
    set(cc "${KVBENCH_CCACHE} ${cc}")
  endif()
  file(MAKE_DIRECTORY "${root}/build")
  string(REPLACE ";" " " args "${args}")
  set(steps
    "sh build_posix/reconf|${root}/src"
    "${root}/src/configure --prefix=${prefix} ${host} ${args}|${root}/build"
    "touch auto-includes.chk|${root}/build"
    "make -j${KVBENCH_DEPS_JOBS} libwiredtiger.la|${root}/build"
    "make -j${KVBENCH_DEPS_JOBS} -C ext/compressors/snappy|${root}/build"
    "make install-libLTLIBRARIES install-includeHEADERS|${root}/build"
    "make -C ext/compressors/snappy install-libLTLIBRARIES|${root}/build")
  foreach(step IN LISTS steps)
    string(REPLACE "|" ";" step "${step}")
    list(GET step 0 command)
    list(GET step 1 where)
    separate_arguments(command UNIX_COMMAND "${command}")
    file(APPEND "${log}" "+ ${command}\n")
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "CC=${cc}" "CFLAGS=${cflags}"
                            "LDFLAGS=${ldflags}" ${command}
      WORKING_DIRECTORY "${where}" OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    file(APPEND "${log}" "${out}")
    file(APPEND "${log}.err" "${err}")
    if(NOT rc EQUAL 0)
      break()
    endif()
  endforeach()
  file(REMOVE_RECURSE "${root}/src")
  set(${out_rc} ${rc} PARENT_SCOPE)
endfunction()

# kvbench_dep_build_key(<DEP> <dir> <version> <project> <args> <out-key>): what identifies a
# build of <dep> from <dir>: the library, its version, the tree, the compilers, every flag, the
# options and the recipe, one "name=value" line each (the stamp file's text).
function(kvbench_dep_build_key dep dir version project args out_key)
  kvbench_dep_tree_identity("${dir}" identity)
  # The recipe: the -D options, our CMakeLists.txt for the C libraries, and a number to bump when
  # this file changes how a library is built.
  set(recipe "kvbench-deps-recipe-1")
  if(project MATCHES "^${PROJECT_SOURCE_DIR}/")
    file(SHA256 "${project}/CMakeLists.txt" _h)
    string(APPEND recipe " ${_h}")
  endif()
  string(REPLACE ";" " " args_str "${args}")
  string(REPLACE "${dir}" "<source_dir>" args_str "${args_str}")
  set(key
"library=${KVBENCH_DEP_${dep}_NAME}
version=${version}
source_dir=${dir}
source_identity=${identity}
c_compiler=${CMAKE_C_COMPILER} ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}
cxx_compiler=${CMAKE_CXX_COMPILER} ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}
c_flags=${KVBENCH_DEPS_C_FLAGS}
cxx_flags=${KVBENCH_DEPS_CXX_FLAGS}
build_type=Release ${KVBENCH_DEPS_RELEASE_FLAGS}
arch_flags=${KVBENCH_ARCH_FLAGS}
options=${args_str}
recipe=${recipe}
")
  if(CMAKE_CROSSCOMPILING)
    string(APPEND key "target=${CMAKE_SYSTEM_PROCESSOR} ${CMAKE_C_COMPILER_TARGET} sysroot=${CMAKE_SYSROOT}\n")
  endif()
  set(${out_key} "${key}" PARENT_SCOPE)
endfunction()

# kvbench_dep_cmake_update(<bdir> <log> <out-rc>): builds a configured library (its incremental
# build) and installs it.
function(kvbench_dep_cmake_update bdir log out_rc)
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${bdir}" --parallel ${KVBENCH_DEPS_JOBS}
    OUTPUT_FILE "${log}.build" ERROR_VARIABLE err RESULT_VARIABLE rc)
  file(APPEND "${log}.err" "${err}")
  if(rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} --install "${bdir}"
      OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
    file(APPEND "${log}.err" "${err}")
  endif()
  set(${out_rc} ${rc} PARENT_SCOPE)
endfunction()

# kvbench_dep_cmake_build(<project> <bdir> <prefix> <log> <args> <out-rc>): configures, builds
# (in <bdir>) and installs a CMake project with kvbench's compilers, flags and toolchain.
function(kvbench_dep_cmake_build project bdir prefix log args out_rc)
  set(launcher "")
  if(KVBENCH_CCACHE)
    set(launcher -DCMAKE_C_COMPILER_LAUNCHER=${KVBENCH_CCACHE}
                 -DCMAKE_CXX_COMPILER_LAUNCHER=${KVBENCH_CCACHE})
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${project}" -B "${bdir}" -G "${CMAKE_GENERATOR}"
      -DCMAKE_BUILD_TYPE=Release
      "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DCMAKE_C_FLAGS=${KVBENCH_DEPS_C_FLAGS}" "-DCMAKE_CXX_FLAGS=${KVBENCH_DEPS_CXX_FLAGS}"
      "-DCMAKE_ASM_FLAGS=${KVBENCH_DEPS_C_FLAGS}"
      "-DCMAKE_C_FLAGS_RELEASE=${KVBENCH_DEPS_RELEASE_FLAGS}"
      "-DCMAKE_CXX_FLAGS_RELEASE=${KVBENCH_DEPS_RELEASE_FLAGS}"
      "-DCMAKE_ASM_FLAGS_RELEASE=${KVBENCH_DEPS_RELEASE_FLAGS}"
      -DCMAKE_POSITION_INDEPENDENT_CODE=ON "-DCMAKE_INSTALL_PREFIX=${prefix}"
      -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${launcher}
      ${KVBENCH_DEPS_TOOLCHAIN_ARGS} ${args}
    OUTPUT_FILE "${log}" ERROR_FILE "${log}.err" RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    kvbench_dep_cmake_update("${bdir}" "${log}" rc)
  endif()
  set(${out_rc} ${rc} PARENT_SCOPE)
endfunction()

# kvbench_dep_failed(<what> <log> <rc>): stops configuration with the last lines of the log.
function(kvbench_dep_failed what log rc)
  file(STRINGS "${log}.err" tail)
  list(LENGTH tail n)
  if(n GREATER 30)
    math(EXPR first "${n} - 30")
    list(SUBLIST tail ${first} 30 tail)
  endif()
  list(JOIN tail "\n" tail)
  message(FATAL_ERROR "building ${what} failed (${rc}); logs: "
                      "${log}, ${log}.build, ${log}.err. Last lines:\n${tail}")
endfunction()

# kvbench_dep_live(<DEP> <dir> <version> <project> <args> <recipe>): KVBENCH_DEPS_LIVE's build of
# <dep> in <dir>/.kvbench-build, installed in <dir>/.kvbench-live/prefix: configured once per
# <recipe> (the build key without the tree's identity and version), brought up to date by every
# later configure and, through the target kvbench_dep_<lib> that the library's imported target
# depends on (KvbenchFindLib.cmake), by every build. It is installed afresh into .kvbench-live/
# stage, then synced into the prefix by content (KvbenchDepSync.cmake): only a file that changed
# gets a new time stamp. The library and its headers are the target's byproducts, so a link
# waits for it; a header it changes is seen by the next build, as ninja reads the headers' time
# stamps when it starts (kvb bisect builds kvbench_dep_<lib> first, then its targets).
function(kvbench_dep_live dep dir version project args recipe)
  set(lower ${KVBENCH_DEP_${dep}_NAME})
  set(root "${dir}/.kvbench-live")
  set(bdir "${dir}/.kvbench-build")
  set(log "${root}/build.log")
  set(sync ${CMAKE_COMMAND} "-DFROM=${root}/stage" "-DTO=${root}/prefix"
           -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/KvbenchDepSync.cmake")
  set(configured FALSE)
  if(EXISTS "${root}/kvbench-live.stamp" AND EXISTS "${bdir}/CMakeCache.txt")
    file(READ "${root}/kvbench-live.stamp" old)
    if(old STREQUAL recipe)
      set(configured TRUE)
    endif()
  endif()
  if(configured)
    message(STATUS "kvbench: ${lower} ${version} in ${dir}: bringing its build up to date")
    file(REMOVE "${log}.err")
    file(REMOVE_RECURSE "${root}/stage")
    kvbench_dep_cmake_update("${bdir}" "${log}" rc)
  else()
    message(STATUS "kvbench: building ${lower} ${version} in ${dir}, kept there and brought up "
                   "to date by every build (KVBENCH_DEPS_LIVE; log: ${log})")
    file(REMOVE_RECURSE "${root}/stage" "${root}/kvbench-live.stamp" "${bdir}")
    file(MAKE_DIRECTORY "${root}")
    kvbench_dep_cmake_build("${project}" "${bdir}" "${root}/stage" "${log}" "${args}" rc)
  endif()
  if(rc EQUAL 0)
    execute_process(COMMAND ${sync} ERROR_VARIABLE err RESULT_VARIABLE rc)
    file(APPEND "${log}.err" "${err}")
  endif()
  if(NOT rc EQUAL 0)
    file(REMOVE "${root}/kvbench-live.stamp")
    kvbench_dep_failed("${lower} ${version} in ${dir}" "${log}" ${rc})
  endif()
  file(WRITE "${root}/kvbench-live.stamp" "${recipe}")
  file(GLOB_RECURSE headers "${root}/prefix/include/*")
  add_custom_target(kvbench_dep_${lower}
    COMMAND ${CMAKE_COMMAND} --build "${bdir}"
    COMMAND ${CMAKE_COMMAND} -E rm -rf "${root}/stage"
    COMMAND ${CMAKE_COMMAND} --install "${bdir}"
    COMMAND ${sync}
    BYPRODUCTS "${root}/prefix/lib/lib${KVBENCH_DEP_${dep}_LIBRARY}.a" ${headers}
    COMMENT "Bringing ${lower} up to date in ${dir}" VERBATIM)
endfunction()

# kvbench_dep_build(<DEP> <dir> <version> <project> <args> <root> <key>): builds <dep> into
# <root> (its prefix/, logs, and the stamp holding <key> and the build's time), or stops
# configuration with the last lines of its log.
function(kvbench_dep_build dep dir version project args root key)
  set(lower ${KVBENCH_DEP_${dep}_NAME})
  set(log "${root}/build.log")
  message(STATUS "kvbench: building ${lower} ${version} from ${dir} into ${root} "
                 "(log: ${log}; -j${KVBENCH_DEPS_JOBS})")
  file(REMOVE_RECURSE "${root}")
  file(MAKE_DIRECTORY "${root}")
  set(bdir "${root}/build")
  if(KVBENCH_DEPS_BUILD_IN_TREE AND NOT project STREQUAL "autotools")  # autotools: a copy
    set(bdir "${dir}/.kvbench-build")
    file(REMOVE_RECURSE "${bdir}")
  endif()
  string(TIMESTAMP t0 "%s")
  if(project STREQUAL "autotools")
    kvbench_dep_build_autotools("${dir}" "${root}" "${root}/prefix" "${log}" "${args}" rc)
  else()
    kvbench_dep_cmake_build("${project}" "${bdir}" "${root}/prefix" "${log}" "${args}" rc)
  endif()
  if(NOT rc EQUAL 0)
    kvbench_dep_failed("${lower} ${version} from ${dir}" "${log}" ${rc})
  endif()
  string(TIMESTAMP t1 "%s")
  math(EXPR seconds "${t1} - ${t0}")
  # The objects are not needed once installed (ccache keeps what a rebuild would reuse).
  file(REMOVE_RECURSE "${bdir}")
  file(WRITE "${root}/kvbench-build.stamp" "${key}build_seconds=${seconds}\n")
  message(STATUS "kvbench: built ${lower} ${version} in ${seconds} s")
endfunction()

# kvbench_dep_from_source(<DEP>): builds it (or reuses the cached build) and sets
# KVBENCH_<DEP>_PREFIX and the provenance variables in the caller's scope.
function(kvbench_dep_from_source dep)
  set(dir "${KVBENCH_${dep}_SOURCE_DIR}")
  file(REAL_PATH "${dir}" dir)
  kvbench_dep_check_tree(${dep} "${dir}" tree)
  set(marker "${KVBENCH_DEP_${dep}_TREE${tree}_MARKER}")
  kvbench_dep_version(${dep} "${dir}" ${tree} version)
  kvbench_dep_recipe(${dep} "${dir}" "${marker}" project args)
  set(lower ${KVBENCH_DEP_${dep}_NAME})
  kvbench_dep_build_key(${dep} "${dir}" "${version}" "${project}" "${args}" key)
  # The source path is not in the hash, so the same tarball unpacked elsewhere reuses the build;
  # a git or plain tree is identified by its path through source_identity anyway.
  string(REGEX REPLACE "source_dir=[^\n]*\n" "" hashed "${key}")
  string(SHA256 hash "${hashed}")
  string(SUBSTRING "${hash}" 0 12 hash)
  set(root "${KVBENCH_DEPS_CACHE}/${lower}-${version}-${hash}")
  set(stamp "${root}/kvbench-build.stamp")
  set(reused FALSE)
  if(EXISTS "${stamp}")
    file(READ "${stamp}" old)
    string(REGEX REPLACE "source_dir=[^\n]*\n" "" old_hashed "${old}")
    string(REGEX REPLACE "build_seconds=[^\n]*\n" "" old_hashed "${old_hashed}")
    if(old_hashed STREQUAL hashed)
      set(reused TRUE)
    endif()
  endif()
  if(KVBENCH_DEPS_LIVE AND NOT project STREQUAL "autotools")
    string(REGEX REPLACE "(version|source_identity)=[^\n]*\n" "" recipe "${hashed}")
    string(APPEND recipe "live=installed into stage/, synced into prefix/\n")
    kvbench_dep_live(${dep} "${dir}" "${version}" "${project}" "${args}" "${recipe}")
    set(root "${dir}/.kvbench-live")
  elseif(reused)
    message(STATUS "kvbench: ${lower} ${version} from source: reusing ${root}")
  else()
    kvbench_dep_build(${dep} "${dir}" "${version}" "${project}" "${args}" "${root}" "${key}")
  endif()
  set(KVBENCH_${dep}_PREFIX "${root}/prefix" PARENT_SCOPE)
  set(KVBENCH_${dep}_ORIGIN source PARENT_SCOPE)
  set(KVBENCH_${dep}_ORIGIN_VERSION "${version}" PARENT_SCOPE)
  set(KVBENCH_${dep}_ORIGIN_SOURCE_DIR "${dir}" PARENT_SCOPE)
  set(KVBENCH_${dep}_ORIGIN_BUILD_DIR "${root}" PARENT_SCOPE)
  # The compiler recorded is the one that compiled the library: the preset's C compiler for the
  # C libraries (lz4, zstd, xxhash, lmdb, WiredTiger), its C++ compiler for RocksDB.
  if(dep STREQUAL "ROCKSDB" OR dep STREQUAL "WIREDTIGER")
    set(flags "${KVBENCH_DEPS_CXX_FLAGS} ${KVBENCH_DEPS_RELEASE_FLAGS}")
  else()
    set(flags "${KVBENCH_DEPS_C_FLAGS} ${KVBENCH_DEPS_RELEASE_FLAGS}")
  endif()
  if(dep STREQUAL "ROCKSDB")
    set(compiler "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
  else()
    set(compiler "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}")
  endif()
  set(KVBENCH_${dep}_ORIGIN_COMPILER "${compiler}" PARENT_SCOPE)
  if(args MATCHES "-DPORTABLE=([01])")
    string(APPEND flags " (PORTABLE=${CMAKE_MATCH_1})")
  endif()
  if(args MATCHES "-DCMAKE_UNITY_BUILD_BATCH_SIZE=([0-9]+)")
    string(APPEND flags " (unity build, ${CMAKE_MATCH_1} files a unit)")
  endif()
  set(KVBENCH_${dep}_ORIGIN_FLAGS "${flags}" PARENT_SCOPE)
endfunction()

# Resolves every dependency's origin before the Find modules run: they look only in
# KVBENCH_<DEP>_PREFIX when it is set.
foreach(_d ${KVBENCH_SOURCE_DEPS})
  set(KVBENCH_${_d}_PREFIX "")
  set(KVBENCH_${_d}_ORIGIN system)
  if(KVBENCH_${_d}_SOURCE_DIR)
    kvbench_dep_from_source(${_d})
  elseif(KVBENCH_${_d}_ROOT)
    file(REAL_PATH "${KVBENCH_${_d}_ROOT}" KVBENCH_${_d}_PREFIX)
    if(NOT IS_DIRECTORY "${KVBENCH_${_d}_PREFIX}")
      message(FATAL_ERROR "KVBENCH_${_d}_ROOT=${KVBENCH_${_d}_ROOT} is not a directory")
    endif()
    set(KVBENCH_${_d}_ORIGIN prefix)
  endif()
endforeach()
