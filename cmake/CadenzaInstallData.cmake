# What the command line and the bindings need beside the binaries: the
# shipped pipelines and the models they name, in share/cadenza, so that a
# pipeline's relative paths (../models/...) hold in the install tree too; and
# the SDK's plugin template.
# The build tree has the same layout: share/cadenza/{pipelines,models} link
# to the sources, so `cadenza synth -p default` works from build/bin too.
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/${CADENZA_INSTALL_DATA_DIR})
foreach(data pipelines models)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${data} ${CMAKE_BINARY_DIR}/${CADENZA_INSTALL_DATA_DIR}/${data} SYMBOLIC)
endforeach()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/pipelines DESTINATION ${CADENZA_INSTALL_DATA_DIR}
  FILES_MATCHING PATTERN "*.toml")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/frontend DESTINATION ${CADENZA_INSTALL_DATA_DIR}/models)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/models/en-small DESTINATION ${CADENZA_INSTALL_DATA_DIR}/models)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/plugin_template ${PROJECT_SOURCE_DIR}/sdk/plugin_template_cpp
  DESTINATION ${CADENZA_INSTALL_DATA_DIR}/sdk)
