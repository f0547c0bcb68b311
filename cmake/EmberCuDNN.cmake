# Finds cuDNN 9 and defines ember::cudnn. Honours CUDNN_ROOT (a prefix with include/ and
# lib/ or lib64/, or PyTorch's nvidia/cudnn package folder), then the CUDA toolkit's own
# folders:
#
#   include(${ember_cmake_dir}/EmberCuDNN.cmake)
#   if(TARGET ember::cudnn) ...   # not defined when no cuDNN was found
#
# Included by path, never through find_package(CuDNN), by the build (cmake/EmberCuda.cmake)
# and by the installed emberConfig.cmake, so that a project's own FindCuDNN.cmake or a
# CuDNN package config cannot answer in its place (cmake/EmberOpenBLAS.cmake says why).
# Its names are ember's own: the target, created once, and the cache variables
# EMBER_CUDNN_LIBRARY and EMBER_CUDNN_INCLUDE_DIR.
if(NOT TARGET ember::cudnn)
  set(_ember_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_ROOT} /usr/local/cuda /usr)
  find_path(EMBER_CUDNN_INCLUDE_DIR cudnn.h HINTS ${_ember_cudnn_hints} PATH_SUFFIXES include
            DOC "The folder with cudnn.h that ember compiles against")
  # NAMES_PER_DIR: CUDNN_ROOT's libcudnn.so.9 (PyTorch's wheel has no libcudnn.so) wins over a
  # libcudnn.so in a folder searched later.
  find_library(EMBER_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR HINTS ${_ember_cudnn_hints}
               PATH_SUFFIXES lib lib64 lib/x64 lib/x86_64-linux-gnu DOC "The cuDNN library ember links")
  unset(_ember_cudnn_hints)
  if(EMBER_CUDNN_LIBRARY AND EMBER_CUDNN_INCLUDE_DIR)
    add_library(ember::cudnn UNKNOWN IMPORTED)
    set_target_properties(ember::cudnn PROPERTIES IMPORTED_LOCATION "${EMBER_CUDNN_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${EMBER_CUDNN_INCLUDE_DIR}")
  endif()
endif()
