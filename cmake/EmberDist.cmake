# The engines under dist/ (docs/distributed.md). Sets EMBER_HAVE_MPI and EMBER_HAVE_NCCL, and
# ember::mpi / ember::nccl when they are used:
#
#   EMBER_MPI=AUTO|ON|OFF    MPI for CPU tensors' collectives and to start jobs; AUTO: when found
#                            (scripts/setup.sh installs Debian's Open MPI)
#   EMBER_NCCL=AUTO|ON|OFF   NCCL for CUDA tensors' collectives; needs the CUDA backend; AUTO:
#                            when found (the CUDA toolkit here ships nccl.h and libnccl.so)
#
# Without MPI, dist/ still builds and a process is a group of one ("not built with MPI" when an
# MPI launcher starts several). AUTO skips MPI under EMBER_SANITIZE: Open MPI's own allocations
# at MPI_Init read as leaks to LeakSanitizer.
set(EMBER_MPI AUTO CACHE STRING "Use MPI for dist/: AUTO (if found), ON, OFF")
set_property(CACHE EMBER_MPI PROPERTY STRINGS AUTO ON OFF)
set(EMBER_NCCL AUTO CACHE STRING "Use NCCL for dist/'s CUDA tensors: AUTO (if found with the CUDA backend), ON, OFF")
set_property(CACHE EMBER_NCCL PROPERTY STRINGS AUTO ON OFF)

set(EMBER_HAVE_MPI OFF)
if(EMBER_MPI STREQUAL "AUTO" AND EMBER_SANITIZE)
  message(STATUS "ember: MPI skipped under EMBER_SANITIZE (LeakSanitizer reports Open MPI's own allocations); "
                 "EMBER_MPI=ON uses it")
elseif(NOT EMBER_MPI STREQUAL "OFF")
  include(${CMAKE_CURRENT_LIST_DIR}/EmberMPI.cmake)  # ember::mpi, the same way the installed package finds it
  if(TARGET ember::mpi)
    set(EMBER_HAVE_MPI ON)
    message(STATUS "ember: MPI ${EMBER_MPI_LIBRARY} (mpi.h in ${EMBER_MPI_INCLUDE_DIR})")
  elseif(EMBER_MPI STREQUAL "ON")
    message(FATAL_ERROR "EMBER_MPI=ON but no MPI was found: install Open MPI (Debian: libopenmpi-dev "
                        "openmpi-bin), or set MPI_HOME, or EMBER_MPI_INCLUDE_DIR and EMBER_MPI_LIBRARY")
  endif()
endif()

set(EMBER_HAVE_NCCL OFF)
if(EMBER_NCCL STREQUAL "ON" AND NOT EMBER_HAVE_CUDA)
  message(FATAL_ERROR "EMBER_NCCL=ON needs the CUDA backend (EMBER_CUDA), which is off")
endif()
if(EMBER_HAVE_CUDA AND NOT EMBER_NCCL STREQUAL "OFF")
  include(${CMAKE_CURRENT_LIST_DIR}/EmberNCCL.cmake)  # ember::nccl, the same way the installed package finds it
  if(TARGET ember::nccl)
    set(EMBER_HAVE_NCCL ON)
    message(STATUS "ember: NCCL ${EMBER_NCCL_LIBRARY}")
  elseif(EMBER_NCCL STREQUAL "ON")
    message(FATAL_ERROR "EMBER_NCCL=ON but NCCL was not found: pass -DNCCL_ROOT=<folder with include/nccl.h "
                        "and lib/libnccl.so>")
  endif()
endif()
message(STATUS "ember: dist/ engines: MPI ${EMBER_HAVE_MPI}, NCCL ${EMBER_HAVE_NCCL}")
