# cadenza_add_plugin(<target> SOURCES <files...> [LIBRARIES <libs...>])
#
# A plugin is a MODULE library exporting only cdz_plugin_entry. It links
# nothing of cadenza: the ABI headers and the header-only C++ SDK over them
# (cadenza/sdk/) are all it sees of the host. Used by cadenza's own build and,
# through find_package(cadenza), by third parties.
set(CADENZA_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map)

function(cadenza_add_plugin target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE cadenza::abi cadenza::sdk ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(CADENZA_BUILD_PLUGIN_DIR)  # inside cadenza's own build: the loader searches it
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CADENZA_BUILD_PLUGIN_DIR})
  endif()
  target_link_options(${target} PRIVATE -Wl,--version-script=${CADENZA_PLUGIN_EXPORTS_MAP})
  # In the fuzz build clang leaves the sanitizer runtime to the executable
  # that loads the plugin.
  if(NOT CADENZA_FUZZ)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
  set_property(GLOBAL APPEND PROPERTY CADENZA_PLUGIN_TARGETS ${target})
  cadenza_add_plugin_manifest(${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${CADENZA_INSTALL_PLUGIN_DIR})
endfunction()

# After linking, the library's manifest (`cadenza plugins manifest`: what its
# entry point returns, without the function tables) goes into its section
# .cadenza_plugins, so that cadenza lists the library and validates pipelines
# against it without loading it (and what it links). The program is cadenza's
# own build's, or the installed bin/cadenza (CADENZA_PROGRAM, set by
# find_package(cadenza)); without either, or in the sanitizer and fuzz
# builds, the library is loaded to be described.
function(cadenza_add_plugin_manifest target)
  if(CADENZA_SANITIZE OR CADENZA_FUZZ)
    return()
  endif()
  if(CADENZA_BUILD_PLUGIN_DIR)  # inside cadenza's own build (cadenza_cli may come later)
    set(program $<TARGET_FILE:cadenza_cli>)
    add_dependencies(${target} cadenza_cli)
  elseif(CADENZA_PROGRAM)
    set(program ${CADENZA_PROGRAM})
  else()
    return()
  endif()
  set(manifest ${CMAKE_CURRENT_BINARY_DIR}/${target}.cadenza_plugins.toml)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${program} --log-level warn plugins manifest $<TARGET_FILE:${target}> --output ${manifest}
    COMMAND ${CMAKE_OBJCOPY} --add-section .cadenza_plugins=${manifest} --set-section-flags .cadenza_plugins=readonly
            $<TARGET_FILE:${target}>
    COMMENT "Writing the manifest of ${target}"
    VERBATIM)
endfunction()
