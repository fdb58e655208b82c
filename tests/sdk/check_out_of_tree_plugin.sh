#!/bin/sh
# Installs cadenza into a scratch prefix, builds the SDK's plugin template
# against it with find_package(cadenza), and checks that cadenza loads it;
# then the same for the C++ template on the SDK's C++ layer, when given.
set -eu
build_dir="$1"
template="$2"
cadenza="$3"
cpp_template="${4:-}"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null

# build_and_describe SOURCE BUILD PLUGIN PARAMETER: builds SOURCE into BUILD,
# checks that the library exports only the entry point and that cadenza
# loads PLUGIN from there with PARAMETER in its schema.
build_and_describe() {
    cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$2" >/dev/null
    library=$(find "$2" -name '*.so' | head -n 1)
    [ -n "$library" ] || { echo "$1 built no library"; exit 1; }
    exports=$(nm -D --defined-only "$library" | awk '{print $3}')
    [ "$exports" = "cdz_plugin_entry" ] || { echo "$3 exports more than cdz_plugin_entry: $exports"; exit 1; }
    output=$(CADENZA_PLUGIN_PATH="$2" "$cadenza" plugins describe "$3")
    echo "$output"
    echo "$output" | grep -q "library: $2/" || { echo "cadenza did not load the out-of-tree build of $3"; exit 1; }
    echo "$output" | grep -Eq "^$4" || { echo "the schema of $3 is missing $4"; exit 1; }
}

build_and_describe "$template" "$scratch/build" example.argmax_acceptor "min_probability +float"

# A pipeline names it from its own plugin_paths, and cadenza validates it.
cat > "$scratch/pipeline.toml" <<TOML
[pipeline]
plugin_paths = ["build"]

[acceptor]
plugin = "example.argmax_acceptor"
mode = "sample"
TOML
resolved=$("$cadenza" validate "$scratch/pipeline.toml")
echo "$resolved"
echo "$resolved" | grep -q "plugin = \"example.argmax_acceptor\"  # 1.0.0, $scratch/build/" \
    || { echo "the pipeline did not resolve to the out-of-tree build"; exit 1; }

# The C++ template: cadenza/sdk/*.hpp and cadenza::sdk from the install.
[ -z "$cpp_template" ] || build_and_describe "$cpp_template" "$scratch/cpp-build" example.greedy_acceptor "max_accepted +int"
