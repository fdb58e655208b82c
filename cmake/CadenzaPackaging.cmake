# `cpack -G DEB` in the build tree: one package, cadenza, installed under
# /usr: bin/cadenza, libcadenza.so, the plugins, share/cadenza/{pipelines,
# models,sdk}, the SDK headers, CMake and pkg-config files, and the Python and
# Node bindings. Depends are computed by dpkg-shlibdeps from what the
# binaries and plugins link.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME cadenza)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "cadenza")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "fast autoregressive speech synthesis (codec-language-model TTS)")
set(CPACK_PACKAGE_DESCRIPTION
  "cadenza runs codec-language-model text-to-speech through one decoding loop of\n"
  "drafters, a backbone and acceptance rules, all plugins behind a stable C ABI.\n"
  "This package holds the cadenza command, libcadenza (the embedding API), the\n"
  "plugins, the shipped pipelines and English model, the SDK, and the Python and\n"
  "Node bindings.")
string(REPLACE ";" "" CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "cadenza developers <dev@cadenza>")
set(CPACK_DEBIAN_PACKAGE_SECTION sound)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Plugins are not on the loader's path: tell dpkg-shlibdeps where libcadenza is.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CADENZA_BUILD_LIBRARY_DIR})
# Data the linked libraries do not pull in, and what the bindings run on.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "espeak-ng-data")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-pthread, pocketsphinx-en-us, python3, python3-numpy")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nodejs, pkg-config, cmake")
# The model weights do not compress: gzip is as small as xz here, and fast.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_STRIP_FILES ON)
include(CPack)
