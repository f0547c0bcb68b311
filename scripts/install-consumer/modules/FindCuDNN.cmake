# A project's own FindCuDNN.cmake, as many have. Its target and variables name a library
# that does not exist: if ember's package ran this file or read what it set, the link fails.
set(CUDNN_LIBRARY /nonexistent/libcudnn.so CACHE FILEPATH "The project's cuDNN")
set(CUDNN_INCLUDE_DIR /nonexistent/include CACHE PATH "The project's cuDNN headers")
set(CuDNN_FOUND TRUE)
if(NOT TARGET CuDNN::CuDNN)
  add_library(CuDNN::CuDNN UNKNOWN IMPORTED)
  set_target_properties(CuDNN::CuDNN PROPERTIES IMPORTED_LOCATION ${CUDNN_LIBRARY})
endif()
