# Registers every Catch2 test case with CTest (Debian's catch2 ships Catch.cmake).
find_file(EMBER_CATCH_CMAKE Catch.cmake PATHS /usr/lib/cmake/Catch2 ${PROJECT_SOURCE_DIR}/third_party/cmake NO_DEFAULT_PATH)
if(EMBER_CATCH_CMAKE)
  include(${EMBER_CATCH_CMAKE})
  # -w NoTests: a discovered name that matches no test case fails instead of passing silently.
  catch_discover_tests(ember_tests EXTRA_ARGS -w NoTests PROPERTIES SKIP_RETURN_CODE 77)

  # `ctest -j` starts the costliest tests first, but a fresh build has no timings (and CTest's
  # CTestCostData.txt cannot hold names with spaces), so the longest cases could start last and
  # run alone at the end. Their seconds under ASan + UBSan on a 2-core Zen 3 (scripts/test-sanitizers.sh);
  # only the order follows from them. A name that no longer exists is ignored: keep them current.
  set(ember_long_test_seconds
    "op contract on the cpu: elementwise=235"
    "Trainer: memory running out at any backend allocation of an fp16, checkpointed or accumulated step leaves nothing behind=206"
    "Trainer: memory running out at any backend allocation of a step leaves nothing behind=107"
    "conv2d gradients pass gradcheck=52"
    "Winograd F(2x2, 3x3) and F(4x4, 3x3) hold their error bounds on the zoo's 3x3 layers=73"
    "op contract on the cpu: cnn=40")
  set(costs "")
  foreach(entry IN LISTS ember_long_test_seconds)
    string(REGEX MATCH "^(.*)=([0-9]+)$" _ "${entry}")
    string(APPEND costs "set_tests_properties([==[${CMAKE_MATCH_1}]==] PROPERTIES COST ${CMAKE_MATCH_2})\n")
  endforeach()
  # Included after catch_discover_tests' own file, which adds the tests.
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/ember_tests_costs.cmake "${costs}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${CMAKE_CURRENT_BINARY_DIR}/ember_tests_costs.cmake)
else()
  add_test(NAME ember_tests COMMAND ember_tests)
endif()
