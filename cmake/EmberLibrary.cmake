# ember_library(NAME folder DEPS ...): one static library per folder from its
# *.cpp files (and *.cu files when the CUDA backend is on), with the folder's
# headers as its public file set. Headers include each other as "core/tensor.h",
# so the file set's base is the source root (installed as include/ember/).
# Libraries are registered in the order they are declared (dependencies first) in
# the global property EMBER_LIBRARIES, which the umbrella target and the install use.
function(ember_library name)
  cmake_parse_arguments(ARG "" "" "DEPS;CUDA_DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  set(header_globs *.h *.def *.inc)
  if(EMBER_HAVE_CUDA)
    file(GLOB_RECURSE cuda_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cu)
    list(APPEND sources ${cuda_sources})
    # *_nocuda.cpp files stand in for the CUDA sources when the backend is off.
    list(FILTER sources EXCLUDE REGEX "_nocuda\\.cpp$")
    list(APPEND header_globs *.cuh)
  endif()
  list(TRANSFORM header_globs PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS ${header_globs})
  add_library(${name} STATIC ${sources})
  target_sources(${name} PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES ${headers})
  target_compile_features(${name} PUBLIC cxx_std_17)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  # Installed as ember::<folder> (ember_core -> ember::core).
  string(REGEX REPLACE "^ember_" "" export_name ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${export_name})
  if(EMBER_HAVE_CUDA)
    target_compile_definitions(${name} PUBLIC EMBER_HAVE_CUDA=1)
    target_link_libraries(${name} PUBLIC ${ARG_CUDA_DEPS})
    set_target_properties(${name} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-fopenmp>)
  endif()
  set_property(GLOBAL APPEND PROPERTY EMBER_LIBRARIES ${name})
endfunction()
