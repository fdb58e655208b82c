#!/bin/sh
# Plugins build against abi/ and the SDK only: no file under acceptors/,
# drafts/, codecs/ or plugins/ includes a header of core/, and no CMake file
# there puts core/ on an include path or links a core library.
set -eu
source_dir="$1"
cd "$source_dir"
plugin_dirs="acceptors drafts codecs plugins"
status=0

for header in $(cd core && find . -name '*.h' | sed 's|^\./||'); do
    name=$(basename "$header")
    # A plugin directory may have a header of the same name of its own.
    if [ -n "$(find $plugin_dirs -name "$name" | head -n 1)" ]; then continue; fi
    hits=$(grep -rlE "#include [\"<]([^\">]*/)?$name[\">]" $plugin_dirs --include='*.c' --include='*.cpp' \
        --include='*.h' --include='*.hpp' || true)
    for file in $hits; do
        echo "$file includes core's $header"
        status=1
    done
done

hits=$(grep -rnE 'PROJECT_SOURCE_DIR\}/core|CMAKE_SOURCE_DIR\}/core|\bcadenza_(core|torch)\b' $plugin_dirs \
    --include=CMakeLists.txt --include='*.cmake' || true)
if [ -n "$hits" ]; then
    echo "$hits" | sed 's/$/  (core on a plugin'"'"'s include path or link line)/'
    status=1
fi

[ "$status" -eq 0 ] && echo "no plugin includes core/"
exit "$status"
