# What `cmake --install <build> --prefix P` puts under P:
#
#   include/ember/<folder>/...   every library's headers, in the source tree's layout
#   lib/libember_<folder>.a      the static libraries
#   lib/cmake/ember/             emberConfig.cmake (find_package(ember) -> ember::ember)
#   lib/pkgconfig/ember.pc       pkg-config --cflags --libs ember
#   bin/ember                    the command-line tool
#
# The include directory is include/ember, not include: headers include each other as
# "core/tensor.h". An umbrella header kept in a source folder ember/ (ember/ember.h, in
# a HEADERS file set like the libraries' headers) lands in include/ember/ember/, so
# `#include "ember/ember.h"` resolves the same way in the build tree and in an install.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EMBER_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ember)
get_property(ember_libraries GLOBAL PROPERTY EMBER_LIBRARIES)

# The helper targets ember_eigen and ember_json travel with the libraries that link them.
set_target_properties(ember_eigen PROPERTIES EXPORT_NAME eigen)
set_target_properties(ember_json PROPERTIES EXPORT_NAME json)
install(TARGETS ${ember_libraries} ember ember_eigen ember_json EXPORT emberTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ember)
install(EXPORT emberTargets NAMESPACE ember:: DESTINATION ${EMBER_INSTALL_CMAKEDIR})
if(TARGET ember_cli)
  # The installed tool keeps its build's RUNPATH to the shared libraries it linked outside
  # the system folders (OpenBLAS's OpenMP build, CUDA's), not whatever the loader finds.
  set_target_properties(ember_cli PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ember_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The finders an installed ember needs (the build's own, which its config includes by
# path), and the switches its config reads.
set(ember_finders "")
set(EMBER_HAVE_OPENBLAS OFF)
if(TARGET ember::openblas)
  set(EMBER_HAVE_OPENBLAS ON)
  list(APPEND ember_finders ${PROJECT_SOURCE_DIR}/cmake/EmberOpenBLAS.cmake)
endif()
if(EMBER_HAVE_CUDA)
  list(APPEND ember_finders ${PROJECT_SOURCE_DIR}/cmake/EmberCuDNN.cmake)
endif()
if(EMBER_HAVE_MPI)
  list(APPEND ember_finders ${PROJECT_SOURCE_DIR}/cmake/EmberMPI.cmake)
endif()
if(EMBER_HAVE_NCCL)
  list(APPEND ember_finders ${PROJECT_SOURCE_DIR}/cmake/EmberNCCL.cmake)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/emberConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/emberConfig.cmake
                              INSTALL_DESTINATION ${EMBER_INSTALL_CMAKEDIR})
# 0.x: a minor version may break the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/emberConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/emberConfig.cmake ${PROJECT_BINARY_DIR}/emberConfigVersion.cmake
              ${ember_finders}
        DESTINATION ${EMBER_INSTALL_CMAKEDIR})

include(EmberPkgConfig)
