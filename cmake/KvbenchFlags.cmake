# Compiler flags for kvbench's own code. The preset decides the target (-march/-mcpu); every
# build keeps frame pointers so profiles work, and the flags are recorded in the binary.

if(KVBENCH_TARGET_ARCH)
  set(_host ${CMAKE_SYSTEM_PROCESSOR})
  if(_host MATCHES "^(x86_64|AMD64|amd64)$")
    set(_host x86_64)
  elseif(_host MATCHES "^(aarch64|arm64|ARM64)$")
    set(_host aarch64)
  endif()
  if(NOT _host STREQUAL KVBENCH_TARGET_ARCH)
    message(FATAL_ERROR
      "Preset '${KVBENCH_PRESET}' targets ${KVBENCH_TARGET_ARCH} but this machine builds for "
      "${CMAKE_SYSTEM_PROCESSOR}. Use the presets for this machine "
      "(cmake --list-presets shows them: x86-* on x86_64, arm-* on aarch64).")
  endif()
endif()

add_compile_options(-fno-omit-frame-pointer)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  add_compile_options(-mno-omit-leaf-frame-pointer)
endif()
if(KVBENCH_ARCH_FLAGS)
  separate_arguments(_arch UNIX_COMMAND "${KVBENCH_ARCH_FLAGS}")
  add_compile_options(${_arch})
endif()
if(KVBENCH_SANITIZE)
  add_compile_options(-fsanitize=${KVBENCH_SANITIZE} -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KVBENCH_SANITIZE})
endif()

# Warnings for kvbench's own targets only (dependencies' headers are system headers).
set(KVBENCH_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(KVBENCH_WERROR)
  list(APPEND KVBENCH_WARNINGS -Werror)
endif()

# The flags an optimised kvbench source file is compiled with, as recorded in build info.
string(TOUPPER "${CMAKE_BUILD_TYPE}" _bt)
set(KVBENCH_EFFECTIVE_CXX_FLAGS
    "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_bt}} -fno-omit-frame-pointer ${KVBENCH_ARCH_FLAGS}")
if(KVBENCH_SANITIZE)
  string(APPEND KVBENCH_EFFECTIVE_CXX_FLAGS " -fsanitize=${KVBENCH_SANITIZE}")
endif()
string(STRIP "${KVBENCH_EFFECTIVE_CXX_FLAGS}" KVBENCH_EFFECTIVE_CXX_FLAGS)
string(REGEX REPLACE " +" " " KVBENCH_EFFECTIVE_CXX_FLAGS "${KVBENCH_EFFECTIVE_CXX_FLAGS}")
