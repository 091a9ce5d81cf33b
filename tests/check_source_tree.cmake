# cmake -DDEP=LZ4 -DDIR=<dir> -P tests/check_source_tree.cmake
# Prints "<marker> <version>" when <dir> is a DEP source tree, else fails with the message a
# configure with -DKVBENCH_<DEP>_SOURCE_DIR=<dir> gives (tests/source_deps_test.py).
include(${CMAKE_CURRENT_LIST_DIR}/../cmake/KvbenchSourceTree.cmake)
kvbench_dep_check_tree(${DEP} "${DIR}" tree)
kvbench_dep_version(${DEP} "${DIR}" ${tree} version)
message("${KVBENCH_DEP_${DEP}_TREE${tree}_MARKER} ${version}")
