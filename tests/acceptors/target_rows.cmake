# The acceptors that read the target's rows on demand (plugin ABI 1.1): the
# same results as with every row filled, and only the rows their walk reaches.
# Included by CMakeLists.txt here.
add_executable(test_acceptor_target_rows ${CMAKE_CURRENT_LIST_DIR}/target_rows_test.cpp)
target_link_libraries(test_acceptor_target_rows PRIVATE acceptor_harness cadenza_token_groups GTest::gtest_main)
target_compile_options(test_acceptor_target_rows PRIVATE -Wall -Wextra)
add_dependencies(test_acceptor_target_rows cadenza_acceptor_exact cadenza_acceptor_bias cadenza_acceptor_tolerance
  cadenza_acceptor_pcg)
gtest_discover_tests(test_acceptor_target_rows DISCOVERY_TIMEOUT 60)
cadenza_add_sanitized_test(test_acceptor_target_rows)
