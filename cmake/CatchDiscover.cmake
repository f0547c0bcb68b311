# Registers every Catch2 test case with CTest (Debian's catch2 ships Catch.cmake).
find_file(EMBER_CATCH_CMAKE Catch.cmake PATHS /usr/lib/cmake/Catch2 ${PROJECT_SOURCE_DIR}/third_party/cmake NO_DEFAULT_PATH)
if(EMBER_CATCH_CMAKE)
  include(${EMBER_CATCH_CMAKE})
  # -w NoTests: a discovered name that matches no test case fails instead of passing silently.
  catch_discover_tests(ember_tests EXTRA_ARGS -w NoTests PROPERTIES SKIP_RETURN_CODE 77)
else()
  add_test(NAME ember_tests COMMAND ember_tests)
endif()
