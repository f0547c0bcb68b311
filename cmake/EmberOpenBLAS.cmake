# Finds OpenBLAS, preferring Debian's OpenMP build (libopenblas0-openmp: one thread
# pool shared with our OpenMP loops; docs/DESIGN.md), and defines ember::openblas:
#
#   include(${ember_cmake_dir}/EmberOpenBLAS.cmake)
#   if(TARGET ember::openblas) ...   # not defined when no OpenBLAS was found
#
# The build (cmake/EmberDeps.cmake) and the installed emberConfig.cmake both include it
# by path, never through find_package(OpenBLAS): that name belongs to everyone, and a
# project's own FindOpenBLAS.cmake, or Debian's OpenBLASConfig.cmake (which
# CMAKE_FIND_PACKAGE_PREFER_CONFIG picks), would answer with other targets and
# variables. Every name here is ember's own: the target, created once, and the cache
# variable EMBER_OPENBLAS_LIBRARY (set it to use another OpenBLAS).
if(NOT TARGET ember::openblas)
  find_library(EMBER_OPENBLAS_LIBRARY NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp
               NO_DEFAULT_PATH DOC "The OpenBLAS library ember links (Debian's OpenMP build when there is one)")
  if(NOT EMBER_OPENBLAS_LIBRARY)
    find_library(EMBER_OPENBLAS_LIBRARY NAMES openblas)
  endif()
  if(EMBER_OPENBLAS_LIBRARY)
    add_library(ember::openblas UNKNOWN IMPORTED)
    set_target_properties(ember::openblas PROPERTIES IMPORTED_LOCATION "${EMBER_OPENBLAS_LIBRARY}")
  endif()
endif()
