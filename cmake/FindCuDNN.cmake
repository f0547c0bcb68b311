# Finds cuDNN 9. Honours CUDNN_ROOT (a prefix with include/ and lib/ or lib64/, or
# PyTorch's nvidia/cudnn package folder), then the CUDA toolkit's own folders.
# Defines ember::cudnn.
set(_cudnn_hints ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_ROOT} /usr/local/cuda /usr)
find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${_cudnn_hints} PATH_SUFFIXES include)
# NAMES_PER_DIR: CUDNN_ROOT's libcudnn.so.9 (PyTorch's wheel has no libcudnn.so) wins over a
# libcudnn.so in a folder searched later.
find_library(CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR HINTS ${_cudnn_hints}
             PATH_SUFFIXES lib lib64 lib/x64 lib/x86_64-linux-gnu)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CuDNN REQUIRED_VARS CUDNN_LIBRARY CUDNN_INCLUDE_DIR)
if(CuDNN_FOUND AND NOT TARGET ember::cudnn)
  add_library(ember::cudnn UNKNOWN IMPORTED)
  set_target_properties(ember::cudnn PROPERTIES IMPORTED_LOCATION "${CUDNN_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${CUDNN_INCLUDE_DIR}")
endif()
