# CUDA detection. EMBER_CUDA=AUTO builds the CUDA backend when nvcc exists; the
# binaries still start on machines without a GPU or driver (cudart is linked
# statically and a missing device reads as "0 GPUs").
set(EMBER_HAVE_CUDA OFF)
if(NOT EMBER_CUDA STREQUAL "OFF" AND NOT EMBER_SANITIZE)
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper (H100/H200) is what the GPU machines have; override for other cards.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED MODULE)  # CMake's finder: the CUDA:: targets
    include(${CMAKE_CURRENT_LIST_DIR}/EmberCuDNN.cmake)  # ember::cudnn, the same way the installed package finds it
    if(NOT TARGET ember::cudnn)
      message(FATAL_ERROR "ember: the CUDA backend needs cuDNN 9, and it was not found: "
                          "pass -DCUDNN_ROOT=<folder with include/cudnn.h and lib/libcudnn.so>")
    endif()
    set(EMBER_HAVE_CUDA ON)
  elseif(EMBER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBER_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "ember: CUDA backend ${EMBER_HAVE_CUDA}")
