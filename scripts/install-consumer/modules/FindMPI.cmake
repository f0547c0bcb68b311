# A project's own FindMPI.cmake, in place of CMake's. Its targets and variables name a library
# that does not exist: if ember's package ran this file or read what it set, the link fails.
set(MPI_CXX_LIBRARIES /nonexistent/libmpi.so CACHE FILEPATH "The project's MPI")
set(MPI_CXX_INCLUDE_DIRS /nonexistent/include CACHE PATH "The project's MPI headers")
set(MPI_FOUND TRUE)
set(MPI_CXX_FOUND TRUE)
if(NOT TARGET MPI::MPI_CXX)
  add_library(MPI::MPI_CXX UNKNOWN IMPORTED)
  set_target_properties(MPI::MPI_CXX PROPERTIES IMPORTED_LOCATION ${MPI_CXX_LIBRARIES})
endif()
