# Tests of acceptor.exact, acceptor.bias and acceptor.tolerance and of the
# blocked row they draw from (statistical where the claim is, with fixed
# seeds). Included by CMakeLists.txt here.
add_executable(test_acceptors_basic
  ${CMAKE_CURRENT_LIST_DIR}/exact_acceptor_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/bias_acceptor_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/tolerance_acceptor_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/basic_acceptors_validation_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/blocked_row_test.cpp)
target_include_directories(test_acceptors_basic PRIVATE ${PROJECT_SOURCE_DIR}/acceptors)
target_link_libraries(test_acceptors_basic PRIVATE acceptor_harness GTest::gtest_main)
target_compile_definitions(test_acceptors_basic PRIVATE CADENZA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(test_acceptors_basic PRIVATE -Wall -Wextra)
add_dependencies(test_acceptors_basic cadenza_acceptor_exact cadenza_acceptor_bias cadenza_acceptor_tolerance)
gtest_discover_tests(test_acceptors_basic DISCOVERY_TIMEOUT 60)
cadenza_add_sanitized_test(test_acceptors_basic)
