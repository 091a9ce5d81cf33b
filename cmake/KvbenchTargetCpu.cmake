# Two facts the build info records so a result says what it measured (src/common/build_info.h):
#
# KVBENCH_TARGET_CPU: the CPU kvbench's compiler targets with the preset's flags, as the compiler
#   itself reports it, so `-march=native`/`-mcpu=native` is resolved to a name: clang's
#   -target-cpu from `-###` (with the count of target features its driver adds: clang 14 names a
#   CPU newer than it knows "x86-64" and passes the host's features one by one), gcc's -march=
#   (x86) or -mcpu= (aarch64, else -march=) from `-Q --help=target`. Under qemu-user without a
#   matching /proc/cpuinfo, -mcpu=native silently becomes "generic" (scripts/arm64-root.sh).
# KVBENCH_EMULATOR: "" when the build's code runs on the real CPU; otherwise what emulates it:
#   a cross preset's CMAKE_CROSSCOMPILING_EMULATOR, or KVBENCH_EMULATED as scripts/arm64-root.sh
#   sets it inside its root. Timings from an emulated CPU say nothing about a real one.

separate_arguments(_cpu_flags UNIX_COMMAND "${KVBENCH_ARCH_FLAGS}")
if(CMAKE_CXX_COMPILER_TARGET)
  list(PREPEND _cpu_flags "--target=${CMAKE_CXX_COMPILER_TARGET}")
endif()
set(KVBENCH_TARGET_CPU "")
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} ${_cpu_flags} "-###" -x c++ -c /dev/null
                  ERROR_VARIABLE _out OUTPUT_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _out MATCHES "\"-target-cpu\" \"([^\"]+)\"")
    set(KVBENCH_TARGET_CPU "${CMAKE_MATCH_1}")
    string(REGEX MATCHALL "\"-target-feature\" \"\\+" _features "${_out}")
    list(LENGTH _features _n)
    if(_n GREATER 0)
      string(APPEND KVBENCH_TARGET_CPU " +${_n} target features")
    endif()
  endif()
elseif(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} ${_cpu_flags} -Q --help=target
                  OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _out MATCHES "\n  -mcpu=[ \t]+([^ \t\n]+)")
    set(KVBENCH_TARGET_CPU "${CMAKE_MATCH_1}")
  elseif(_rc EQUAL 0 AND _out MATCHES "\n  -march=[ \t]+([^ \t\n]+)")
    set(KVBENCH_TARGET_CPU "${CMAKE_MATCH_1}")
  endif()
endif()
if(NOT KVBENCH_TARGET_CPU)
  set(KVBENCH_TARGET_CPU "unknown")
endif()

set(KVBENCH_EMULATOR "")
if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
  list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " KVBENCH_EMULATOR)
elseif(DEFINED ENV{KVBENCH_EMULATED})
  set(KVBENCH_EMULATOR "$ENV{KVBENCH_EMULATED}")
endif()
string(REGEX REPLACE "[\"\\]" "" KVBENCH_EMULATOR "${KVBENCH_EMULATOR}")  # a C string
if(KVBENCH_EMULATOR)
  message(STATUS "kvbench: target CPU ${KVBENCH_TARGET_CPU} (${KVBENCH_ARCH_FLAGS}), emulated: "
                 "${KVBENCH_EMULATOR}; timings mean nothing for real hardware")
else()
  message(STATUS "kvbench: target CPU ${KVBENCH_TARGET_CPU} (${KVBENCH_ARCH_FLAGS})")
endif()
