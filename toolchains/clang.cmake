# Selects the LLVM compilers from PATH (clang/clang++). Used by the *-clang-* presets.
set(CMAKE_C_COMPILER clang)
set(CMAKE_CXX_COMPILER clang++)
