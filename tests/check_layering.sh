#!/bin/sh
# The layering rules of the source tree, one per call:
#   plugins-include-no-core: plugins build against abi/ and the SDK only: no
#     file under the plugin folders includes a header of core/, and no CMake
#     file there puts core/ on an include path or links a core library;
#   cli-uses-no-plugin-internals: the CLI uses the public API, the core and
#     the tool libraries (training/, formats/, ...), never a header that lives
#     in a plugin folder.
set -eu
source_dir="$1"
rule="$2"
cd "$source_dir"
plugin_dirs="frontends backbones codecs drafts acceptors torch_support"
status=0

# forbid_includes FROM_DIRS OF_DIRS: a file under FROM_DIRS including a header
# that lives under OF_DIRS (and under no FROM_DIR, which may have a header of
# the same name of its own) breaks the rule.
forbid_includes() {
    for header in $(find $2 -name '*.h' -o -name '*.hpp' | sort); do
        name=$(basename "$header")
        if [ -n "$(find $1 -name "$name" | head -n 1)" ]; then continue; fi
        hits=$(grep -rlE "#include [\"<]([^\">]*/)?$name[\">]" $1 --include='*.c' --include='*.cpp' \
            --include='*.h' --include='*.hpp' || true)
        for file in $hits; do
            echo "$file includes $header"
            status=1
        done
    done
}

case "$rule" in
plugins-include-no-core)
    forbid_includes "$plugin_dirs" core
    hits=$(grep -rnE 'PROJECT_SOURCE_DIR\}/core|CMAKE_SOURCE_DIR\}/core|\bcadenza_(core|torch)\b' $plugin_dirs \
        --include=CMakeLists.txt --include='*.cmake' || true)
    if [ -n "$hits" ]; then
        echo "$hits" | sed 's/$/  (core on a plugin'"'"'s include path or link line)/'
        status=1
    fi
    [ "$status" -eq 0 ] && echo "no plugin includes core/"
    ;;
cli-uses-no-plugin-internals)
    forbid_includes cli "$plugin_dirs"
    [ "$status" -eq 0 ] && echo "the CLI includes no header of $plugin_dirs"
    ;;
*)
    echo "unknown rule '$rule'"
    exit 2
    ;;
esac
exit "$status"
