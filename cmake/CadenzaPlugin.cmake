# cadenza_add_plugin(<target> SOURCES <files...> [LIBRARIES <libs...>])
#
# A plugin is a MODULE library exporting only cdz_plugin_entry. It links
# nothing of cadenza: the ABI headers are all it sees of the host. Used by
# cadenza's own build and, through find_package(cadenza), by third parties.
set(CADENZA_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin_exports.map)

function(cadenza_add_plugin target)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE cadenza::abi ${ARG_LIBRARIES})
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
  install(TARGETS ${target} LIBRARY DESTINATION ${CADENZA_INSTALL_PLUGIN_DIR})
endfunction()
