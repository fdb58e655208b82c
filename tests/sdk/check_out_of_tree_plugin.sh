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
cmake -S "$template" -B "$scratch/build" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/build" >/dev/null

library=$(find "$scratch/build" -name '*.so' | head -n 1)
[ -n "$library" ] || { echo "the template built no library"; exit 1; }
exports=$(nm -D --defined-only "$library" | awk '{print $3}')
[ "$exports" = "cdz_plugin_entry" ] || { echo "the plugin exports more than cdz_plugin_entry: $exports"; exit 1; }

output=$(CADENZA_PLUGIN_PATH="$scratch/build" "$cadenza" plugins describe example.argmax_acceptor)
echo "$output"
echo "$output" | grep -q "library: $scratch/build/" || { echo "cadenza did not load the out-of-tree build"; exit 1; }
echo "$output" | grep -Eq "^min_probability +float" || { echo "the schema is missing"; exit 1; }

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

[ -n "$cpp_template" ] || exit 0
# The C++ template: headers cadenza/sdk/*.hpp from the install, target cadenza::sdk.
cmake -S "$cpp_template" -B "$scratch/cpp-build" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/cpp-build" >/dev/null
library=$(find "$scratch/cpp-build" -name '*.so' | head -n 1)
[ -n "$library" ] || { echo "the C++ template built no library"; exit 1; }
exports=$(nm -D --defined-only "$library" | awk '{print $3}')
[ "$exports" = "cdz_plugin_entry" ] || { echo "the C++ plugin exports more than cdz_plugin_entry: $exports"; exit 1; }
output=$(CADENZA_PLUGIN_PATH="$scratch/cpp-build" "$cadenza" plugins describe example.greedy_acceptor)
echo "$output"
echo "$output" | grep -q "library: $scratch/cpp-build/" || { echo "cadenza did not load the C++ out-of-tree build"; exit 1; }
echo "$output" | grep -Eq "^max_accepted +int" || { echo "the C++ plugin's schema is missing"; exit 1; }
