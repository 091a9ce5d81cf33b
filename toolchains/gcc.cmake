# Selects the GNU compilers from PATH (gcc/g++). Used by the *-gcc-* presets.
set(CMAKE_C_COMPILER gcc)
set(CMAKE_CXX_COMPILER g++)
