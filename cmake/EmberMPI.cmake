# Finds MPI's C API (mpi.h and libmpi; Open MPI from Debian is what CI uses) and defines ember::mpi:
#
#   include(${ember_cmake_dir}/EmberMPI.cmake)
#   if(TARGET ember::mpi) ...   # not defined when no MPI was found
#
# The folders come from the MPI compiler wrapper (mpicxx: Open MPI answers --showme, MPICH and
# Intel MPI -show), or from MPI_HOME. Included by path, never through find_package(MPI), by the
# build (cmake/EmberDist.cmake) and by the installed emberConfig.cmake, so that a project's own
# FindMPI.cmake cannot answer in its place (cmake/EmberOpenBLAS.cmake says why). Its names are
# ember's own: the target, created once, and the cache variables EMBER_MPI_INCLUDE_DIR and
# EMBER_MPI_LIBRARY (set them to use another MPI).
if(NOT TARGET ember::mpi)
  set(_ember_mpi_hints ${MPI_HOME} $ENV{MPI_HOME})
  find_program(EMBER_MPI_WRAPPER NAMES mpicxx mpic++ mpiCC HINTS ${_ember_mpi_hints} PATH_SUFFIXES bin
               DOC "The MPI C++ compiler wrapper ember asks for MPI's folders")
  set(_ember_mpi_include_hints "")
  set(_ember_mpi_library_hints "")
  if(EMBER_MPI_WRAPPER)
    foreach(_ember_mpi_show --showme -show)
      execute_process(COMMAND ${EMBER_MPI_WRAPPER} ${_ember_mpi_show} OUTPUT_VARIABLE _ember_mpi_line
                      RESULT_VARIABLE _ember_mpi_rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_ember_mpi_rc EQUAL 0 AND _ember_mpi_line)
        separate_arguments(_ember_mpi_words UNIX_COMMAND "${_ember_mpi_line}")
        foreach(_ember_mpi_word IN LISTS _ember_mpi_words)
          if(_ember_mpi_word MATCHES "^-I(.+)")
            list(APPEND _ember_mpi_include_hints ${CMAKE_MATCH_1})
          elseif(_ember_mpi_word MATCHES "^-L(.+)")
            list(APPEND _ember_mpi_library_hints ${CMAKE_MATCH_1})
          endif()
        endforeach()
        break()
      endif()
    endforeach()
  endif()
  find_path(EMBER_MPI_INCLUDE_DIR mpi.h HINTS ${_ember_mpi_include_hints} ${_ember_mpi_hints}
            PATH_SUFFIXES include DOC "The folder with mpi.h that ember compiles against")
  find_library(EMBER_MPI_LIBRARY NAMES mpi mpich HINTS ${_ember_mpi_library_hints} ${_ember_mpi_hints}
               PATH_SUFFIXES lib lib64 DOC "The MPI library ember links")
  if(EMBER_MPI_INCLUDE_DIR AND EMBER_MPI_LIBRARY)
    add_library(ember::mpi UNKNOWN IMPORTED)
    # OMPI_SKIP_MPICXX / MPICH_SKIP_MPICXX: the C API only, not the removed C++ bindings.
    set_target_properties(ember::mpi PROPERTIES IMPORTED_LOCATION "${EMBER_MPI_LIBRARY}"
                          INTERFACE_INCLUDE_DIRECTORIES "${EMBER_MPI_INCLUDE_DIR}"
                          INTERFACE_COMPILE_DEFINITIONS "OMPI_SKIP_MPICXX=1;MPICH_SKIP_MPICXX=1")
  endif()
  unset(_ember_mpi_hints)
  unset(_ember_mpi_include_hints)
  unset(_ember_mpi_library_hints)
  unset(_ember_mpi_show)
  unset(_ember_mpi_line)
  unset(_ember_mpi_rc)
  unset(_ember_mpi_words)
  unset(_ember_mpi_word)
endif()
