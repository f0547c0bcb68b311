# ember.pc for `pkg-config --cflags --libs ember`. ember installs static archives
# only, so every link needs what they link: the third-party libraries are in Libs
# and Requires, not in the .private fields (those are for what a shared library
# brings along itself, which an archive cannot). The prefix is found from the .pc
# file's own folder, so `cmake --install --prefix` anywhere gives a working file.
get_property(ember_libraries GLOBAL PROPERTY EMBER_LIBRARIES)
# Declared dependencies first; a static link wants each library before those it uses.
set(pc_libs ${ember_libraries})
list(REVERSE pc_libs)
list(TRANSFORM pc_libs PREPEND -l)

if(TARGET ember::openblas)
  list(APPEND pc_libs ${EMBER_OPENBLAS_LIBRARY})
endif()
list(APPEND pc_libs ${OpenMP_CXX_FLAGS})
set(EMBER_PC_CFLAGS "")
if(EMBER_HAVE_CUDA)
  string(APPEND EMBER_PC_CFLAGS " -DEMBER_HAVE_CUDA=1")
  # cudart_static needs libdl and librt (what CUDA::cudart_static links in CMake).
  list(APPEND pc_libs ${EMBER_CUDNN_LIBRARY} ${CUDA_cublas_LIBRARY} ${CUDA_cudart_static_LIBRARY} -ldl -lrt)
endif()
if(EMBER_HAVE_MPI)
  string(APPEND EMBER_PC_CFLAGS " -DEMBER_HAVE_MPI=1")
  list(APPEND pc_libs ${EMBER_MPI_LIBRARY})
endif()
if(EMBER_HAVE_NCCL)
  string(APPEND EMBER_PC_CFLAGS " -DEMBER_HAVE_NCCL=1")
  list(APPEND pc_libs ${EMBER_NCCL_LIBRARY})
endif()
list(APPEND pc_libs ${CMAKE_THREAD_LIBS_INIT})
list(JOIN pc_libs " " EMBER_PC_LIBS)
set(EMBER_PC_REQUIRES "zlib nlohmann_json")  # nlohmann_json: memory/memory_run.h includes it

set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH EMBER_PC_PREFIX_FROM_PCDIR /prefix/${pc_dir} /prefix)  # ../..
string(REGEX REPLACE "/$" "" EMBER_PC_PREFIX_FROM_PCDIR ${EMBER_PC_PREFIX_FROM_PCDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/ember.pc.in ${PROJECT_BINARY_DIR}/ember.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ember.pc DESTINATION ${pc_dir})
