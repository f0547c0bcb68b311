# A project's own FindOpenBLAS.cmake, as many have. Its target and variables name a library
# that does not exist: if ember's package ran this file or read what it set, the link fails.
set(OPENBLAS_LIBRARY /nonexistent/libopenblas.so CACHE FILEPATH "The project's OpenBLAS")
set(OpenBLAS_LIBRARIES ${OPENBLAS_LIBRARY})
set(OpenBLAS_FOUND TRUE)
if(NOT TARGET OpenBLAS::OpenBLAS)
  add_library(OpenBLAS::OpenBLAS UNKNOWN IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES IMPORTED_LOCATION ${OPENBLAS_LIBRARY})
endif()
