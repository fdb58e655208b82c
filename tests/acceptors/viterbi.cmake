# acceptor.viterbi, the transitions file and `cadenza build-transitions`.
add_executable(test_acceptor_viterbi ${CMAKE_CURRENT_LIST_DIR}/viterbi_test.cpp)
target_link_libraries(test_acceptor_viterbi PRIVATE acceptor_harness cadenza_transition_matrix GTest::gtest_main)
target_compile_definitions(test_acceptor_viterbi PRIVATE
  CADENZA_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
  CADENZA_CLI="$<TARGET_FILE:cadenza_cli>")
add_dependencies(test_acceptor_viterbi cadenza_acceptor_viterbi cadenza_cli)
gtest_discover_tests(test_acceptor_viterbi DISCOVERY_TIMEOUT 60)
