# Finds OpenBLAS, preferring Debian's OpenMP build (libopenblas0-openmp: one thread
# pool shared with our OpenMP loops; docs/DESIGN.md). Defines ember::openblas.
# Used by the build (cmake/EmberDeps.cmake) and by the installed emberConfig.cmake.
find_library(OPENBLAS_LIBRARY NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp NO_DEFAULT_PATH)
if(NOT OPENBLAS_LIBRARY)
  find_library(OPENBLAS_LIBRARY NAMES openblas)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS REQUIRED_VARS OPENBLAS_LIBRARY)
if(OpenBLAS_FOUND AND NOT TARGET ember::openblas)
  add_library(ember::openblas UNKNOWN IMPORTED)
  set_target_properties(ember::openblas PROPERTIES IMPORTED_LOCATION "${OPENBLAS_LIBRARY}")
endif()
