# Tests of acceptor.pcg (statistical, fixed seeds) and of `cadenza
# build-groups`. Included by CMakeLists.txt here.
add_executable(test_acceptor_pcg ${CMAKE_CURRENT_LIST_DIR}/pcg_test.cpp)
target_link_libraries(test_acceptor_pcg PRIVATE acceptor_harness cadenza_pcg_sampler GTest::gtest_main)
target_compile_definitions(test_acceptor_pcg PRIVATE CADENZA_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_compile_options(test_acceptor_pcg PRIVATE -Wall -Wextra)
add_dependencies(test_acceptor_pcg cadenza_acceptor_pcg)
gtest_discover_tests(test_acceptor_pcg DISCOVERY_TIMEOUT 60)
cadenza_add_sanitized_test(test_acceptor_pcg)

# The command line: writes embeddings, runs the cadenza binary, reads the
# groups file back.
add_executable(test_build_groups_cli ${PROJECT_SOURCE_DIR}/tests/cli/build_groups_test.cpp)
target_link_libraries(test_build_groups_cli PRIVATE cadenza_token_groups cadenza_safetensors GTest::gtest_main)
target_compile_definitions(test_build_groups_cli PRIVATE CADENZA_CLI="$<TARGET_FILE:cadenza_cli>")
target_compile_options(test_build_groups_cli PRIVATE -Wall -Wextra)
add_dependencies(test_build_groups_cli cadenza_cli)
gtest_discover_tests(test_build_groups_cli DISCOVERY_TIMEOUT 60)
