# Finds NCCL (nccl.h, libnccl.so; the CUDA toolkit here ships it, PyTorch's nvidia/nccl package
# has it too) and defines ember::nccl:
#
#   include(${ember_cmake_dir}/EmberNCCL.cmake)
#   if(TARGET ember::nccl) ...   # not defined when no NCCL was found
#
# Honours NCCL_ROOT (a prefix with include/ and lib/ or lib64/), then the CUDA toolkit's own
# folders. Included by path, never through find_package(NCCL), by the build (cmake/EmberDist.cmake)
# and by the installed emberConfig.cmake, so that a project's own FindNCCL.cmake cannot answer in
# its place (cmake/EmberOpenBLAS.cmake says why). Its names are ember's own: the target, created
# once, and the cache variables EMBER_NCCL_INCLUDE_DIR and EMBER_NCCL_LIBRARY.
if(NOT TARGET ember::nccl)
  set(_ember_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} /usr/local/cuda /usr)
  find_path(EMBER_NCCL_INCLUDE_DIR nccl.h HINTS ${_ember_nccl_hints} PATH_SUFFIXES include
            DOC "The folder with nccl.h that ember compiles against")
  # NAMES_PER_DIR: NCCL_ROOT's libnccl.so.2 (PyTorch's wheel has no libnccl.so) wins over a
  # libnccl.so in a folder searched later.
  find_library(EMBER_NCCL_LIBRARY NAMES nccl libnccl.so.2 NAMES_PER_DIR HINTS ${_ember_nccl_hints}
               PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu DOC "The NCCL library ember links")
  unset(_ember_nccl_hints)
  if(EMBER_NCCL_LIBRARY AND EMBER_NCCL_INCLUDE_DIR)
    add_library(ember::nccl UNKNOWN IMPORTED)
    set_target_properties(ember::nccl PROPERTIES IMPORTED_LOCATION "${EMBER_NCCL_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${EMBER_NCCL_INCLUDE_DIR}")
  endif()
endif()
