# AddressSanitizer + UndefinedBehaviorSanitizer for the test suite (gcc or
# clang). Configure a separate build tree with -DCADENZA_SANITIZE=ON and build
# the `sanitized_tests` target: the test programs that need no LibTorch, with
# every library and plugin they load compiled with both sanitizers.
# scripts/sanitize.sh builds and runs them.
option(CADENZA_SANITIZE "Compile everything with AddressSanitizer + UndefinedBehaviorSanitizer" OFF)
if(CADENZA_SANITIZE)
  if(CADENZA_FUZZ)
    message(FATAL_ERROR "CADENZA_SANITIZE and CADENZA_FUZZ are separate build trees (the fuzz build is sanitized already)")
  endif()
  add_compile_options(-g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  add_custom_target(sanitized_tests)
endif()

# cadenza_add_sanitized_test(TARGET... [EXCLUDE TEST...]): programs that the
# sanitizer build compiles and scripts/sanitize.sh runs, each on a line of the
# build tree's sanitized_tests.txt with a --gtest_filter leaving out the
# EXCLUDE tests (those that load plugins linking LibTorch, not built there).
function(cadenza_add_sanitized_test)
  if(NOT CADENZA_SANITIZE)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "EXCLUDE" ${ARGN})
  set(filter "*")
  if(ARG_EXCLUDE)
    list(JOIN ARG_EXCLUDE ":" excluded)
    set(filter "-${excluded}")
  endif()
  foreach(target ${ARG_UNPARSED_ARGUMENTS})
    add_dependencies(sanitized_tests ${target})
    set_property(GLOBAL APPEND PROPERTY CADENZA_SANITIZED_TESTS "$<TARGET_FILE:${target}> --gtest_filter=${filter}")
  endforeach()
endfunction()

function(cadenza_write_sanitized_test_list)
  if(CADENZA_SANITIZE)
    get_property(lines GLOBAL PROPERTY CADENZA_SANITIZED_TESTS)
    list(JOIN lines "\n" content)
    file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/sanitized_tests.txt CONTENT "${content}\n")
  endif()
endfunction()
