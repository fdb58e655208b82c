# libFuzzer targets for the parsers a user can hand cadenza (clang only).
# Configure a separate build tree with
#   cmake -B build-fuzz -G Ninja -DCADENZA_FUZZ=ON -DCADENZA_BUILD_TESTS=OFF \
#         -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
# and build the `fuzz_targets` target: every library is then compiled with
# coverage for the fuzzer and AddressSanitizer + UndefinedBehaviorSanitizer.
# scripts/fuzz.sh builds them, replays the seed corpora in tests/fuzz_corpus
# and runs each target for a while.
option(CADENZA_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(CADENZA_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CADENZA_FUZZ needs clang (libFuzzer); CMAKE_CXX_COMPILER is ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
  add_custom_target(fuzz_targets)
endif()

# cadenza_add_fuzz_target(NAME SOURCES ... LIBRARIES ... [DEPENDS ...]): a
# fuzzer executable in build-fuzz/fuzz/, part of `fuzz_targets`, built after
# DEPENDS (plugins it loads); nothing without CADENZA_FUZZ.
function(cadenza_add_fuzz_target name)
  if(NOT CADENZA_FUZZ)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;INCLUDES;DEPENDS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES})
  target_include_directories(${name} PRIVATE ${ARG_INCLUDES} ${PROJECT_SOURCE_DIR}/tests/fuzz_support)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  add_dependencies(fuzz_targets ${name})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
endfunction()
