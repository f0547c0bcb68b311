# A project's own FindNCCL.cmake, as many have. Its target and variables name a library that does
# not exist: if ember's package ran this file or read what it set, the link fails.
set(NCCL_LIBRARY /nonexistent/libnccl.so CACHE FILEPATH "The project's NCCL")
set(NCCL_INCLUDE_DIR /nonexistent/include CACHE PATH "The project's NCCL headers")
set(NCCL_FOUND TRUE)
if(NOT TARGET NCCL::NCCL)
  add_library(NCCL::NCCL UNKNOWN IMPORTED)
  set_target_properties(NCCL::NCCL PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY})
endif()
