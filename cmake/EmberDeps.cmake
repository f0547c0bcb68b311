# Third-party libraries, all from Debian packages (scripts/setup.sh installs them).
# Header-only ones can also come from third_party/ or CMAKE_PREFIX_PATH (gpu-check.sh
# --prepare carries them, with zlib and Google Benchmark, in .device-carry/ to machines
# that reach no package registry).
find_package(OpenMP REQUIRED)
find_package(Threads REQUIRED)
find_package(ZLIB REQUIRED)

find_path(EIGEN3_INCLUDE_DIR Eigen/Core PATHS ${CMAKE_SOURCE_DIR}/third_party/include /usr/include/eigen3 PATH_SUFFIXES eigen3)
find_path(CATCH2_INCLUDE_DIR catch2/catch.hpp PATHS ${CMAKE_SOURCE_DIR}/third_party/include /usr/include)
find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp PATHS ${CMAKE_SOURCE_DIR}/third_party/include /usr/include)
find_path(NLOHMANN_INCLUDE_DIR nlohmann/json.hpp PATHS ${CMAKE_SOURCE_DIR}/third_party/include /usr/include)
foreach(dir EIGEN3_INCLUDE_DIR CATCH2_INCLUDE_DIR CLI11_INCLUDE_DIR NLOHMANN_INCLUDE_DIR)
  if(NOT ${dir})
    message(FATAL_ERROR "${dir} not found: run scripts/setup.sh")
  endif()
endforeach()

# Eigen hands its large products to OpenBLAS's OpenMP build (one thread pool shared
# with our OpenMP loops). Without it Eigen's own GEMM runs at about half the speed.
# EMBER_USE_BLAS=OFF keeps Eigen's own GEMM: gpu-check.sh uses it on GPU machines,
# which lack OpenBLAS and where libopenblas.a would drag in libgfortran.
option(EMBER_USE_BLAS "Let Eigen call OpenBLAS for large products" ON)
if(EMBER_USE_BLAS)
  include(${CMAKE_CURRENT_LIST_DIR}/EmberOpenBLAS.cmake)  # ember::openblas, the same way the installed package finds it
  if(NOT TARGET ember::openblas)
    message(STATUS "ember: OpenBLAS not found, Eigen uses its own GEMM (scripts/setup.sh installs OpenBLAS)")
  endif()
endif()

# Eigen is private to kernels/ (no public header includes it): its headers are a
# build-time need only, so an installed ember does not look for Eigen.
add_library(ember_eigen INTERFACE)
target_include_directories(ember_eigen SYSTEM INTERFACE $<BUILD_INTERFACE:${EIGEN3_INCLUDE_DIR}>)
target_compile_definitions(ember_eigen INTERFACE EIGEN_NO_CUDA)
if(TARGET ember::openblas)
  message(STATUS "ember: Eigen uses OpenBLAS at ${EMBER_OPENBLAS_LIBRARY}")
  target_compile_definitions(ember_eigen INTERFACE EIGEN_USE_BLAS EMBER_HAVE_OPENBLAS)
  target_link_libraries(ember_eigen INTERFACE ember::openblas)
endif()

add_library(ember_catch2 INTERFACE)
target_include_directories(ember_catch2 SYSTEM INTERFACE ${CATCH2_INCLUDE_DIR})
add_library(ember_cli11 INTERFACE)
target_include_directories(ember_cli11 SYSTEM INTERFACE ${CLI11_INCLUDE_DIR})
# memory/memory_run.h includes nlohmann/json.hpp, so an installed ember needs it too:
# there it is the nlohmann_json package (emberConfig.cmake finds it).
add_library(ember_json INTERFACE)
target_include_directories(ember_json SYSTEM INTERFACE $<BUILD_INTERFACE:${NLOHMANN_INCLUDE_DIR}>)
target_link_libraries(ember_json INTERFACE $<INSTALL_INTERFACE:nlohmann_json::nlohmann_json>)
