# cmake -DFROM=<dir> -DTO=<dir> -P KvbenchDepSync.cmake
#
# Makes TO hold what FROM holds, file by file by content: a file whose content differs (or that
# TO lacks) is copied and gets a new time stamp; one that is the same is left as it is, time
# stamp and all; one FROM no longer has is removed. KVBENCH_DEPS_LIVE's install
# (KvbenchSourceDeps.cmake): the library is installed afresh into FROM, then synced into the
# prefix kvbench compiles and links with, so that what uses a changed header or library is
# rebuilt and nothing else. (cmake --install alone gives a copy the source's time stamp, to the
# second, and skips a file whose time stamp it finds equal: after a checkout less than a second
# after a build, a changed header would look older than the objects built from the old one.)
if(NOT IS_DIRECTORY "${FROM}" OR NOT TO)
  message(FATAL_ERROR "usage: cmake -DFROM=<dir> -DTO=<dir> -P KvbenchDepSync.cmake")
endif()
file(GLOB_RECURSE _have RELATIVE "${FROM}" LIST_DIRECTORIES false "${FROM}/*")
foreach(_f IN LISTS _have)
  get_filename_component(_d "${TO}/${_f}" DIRECTORY)
  file(MAKE_DIRECTORY "${_d}")
  file(COPY_FILE "${FROM}/${_f}" "${TO}/${_f}" ONLY_IF_DIFFERENT)
endforeach()
file(GLOB_RECURSE _old RELATIVE "${TO}" LIST_DIRECTORIES false "${TO}/*")
foreach(_f IN LISTS _old)
  if(NOT EXISTS "${FROM}/${_f}")
    file(REMOVE "${TO}/${_f}")
  endif()
endforeach()
