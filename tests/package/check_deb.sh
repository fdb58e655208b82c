#!/usr/bin/env bash
# Builds the .deb with cpack, checks its control fields and contents, unpacks
# it with dpkg-deb -x into an empty directory and runs it from there, moved
# away from /usr and from the build tree: the CLI speaks with the shipped
# pipeline, the Python bindings write the same bytes, the SDK's plugin
# template builds against it with CMake, and a C program with pkg-config.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build_dir" && cpack -G DEB -B "$scratch/package" >"$scratch/cpack.log" 2>&1) \
    || { cat "$scratch/cpack.log"; fail "cpack could not build the package"; }
deb=$(ls "$scratch"/package/cadenza_*.deb)
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

# Control fields: the name, and Depends on the runtime packages the binaries link.
grep -qx cadenza <<< "$(dpkg-deb --field "$deb" Package)" || fail "the package is not named cadenza"
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
for runtime in libc6 libstdc++6 libsndfile1 libsoxr0 libespeak-ng1 libflite1 libtorch; do
    grep -q "$runtime" <<< "$depends" || fail "Depends lacks $runtime"
done
# Every Depends package must exist on this Debian: installed here (we built against it), or provided
# by an installed package (libspdlog1.10 provides libspdlog1.10-fmt9).
# (A file, not a pipe into grep -q: with pipefail, grep leaving early fails the pipe.)
dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Provides}\n' | awk '$1 == "ii" {$1 = ""; print}' \
    | sed 's/([^)]*)//g; s/,/ /g' | tr ' ' '\n' | sed '/^$/d' > "$scratch/installed.txt"
for package in $(echo "$depends" | tr ',' '\n' | sed 's/(.*)//; s/|.*//' | tr -d ' '); do
    grep -qx "$package" "$scratch/installed.txt" \
        || fail "Depends names $package, which no installed Debian package is or provides"
done

# Contents.
contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for path in ./usr/bin/cadenza ./usr/bin/cadenza-torch ./usr/lib/libcadenza.so.0 ./usr/lib/cadenza/plugins/libcadenza_backbone_llama.so \
            ./usr/share/cadenza/pipelines/default.toml ./usr/share/cadenza/models/en-small/target/model.safetensors \
            ./usr/include/cadenza/cadenza.h ./usr/include/cadenza/plugin.h ./usr/lib/cmake/cadenza/cadenzaConfig.cmake \
            ./usr/lib/pkgconfig/cadenza.pc ./usr/lib/python3/dist-packages/cadenza/__init__.py \
            ./usr/lib/node_modules/cadenza/lib/index.js ./usr/share/cadenza/sdk/plugin_template/CMakeLists.txt; do
    grep -qx "$path" <<< "$contents" || fail "the package lacks $path"
done
if grep -E '/test_|tests/plugins|__pycache__|node_modules/koffi' >/dev/null <<< "$contents"; then
    fail "the package holds test or cache files: $(grep -E '/test_|tests/plugins|__pycache__|node_modules/koffi' <<< "$contents")"
fi

# Unpacked into an empty directory, moved: nothing may point back at the build tree.
root="$scratch/root"
mkdir "$root"
dpkg-deb -x "$deb" "$root"
mv "$root" "$scratch/moved"
root="$scratch/moved"
if grep -rlF "$build_dir" "$root" >/dev/null; then
    fail "the package mentions the build tree $build_dir: $(grep -rlF "$build_dir" "$root" | head -3)"
fi

unset CADENZA_PLUGIN_PATH CADENZA_LIBRARY
cadenza="$root/usr/bin/cadenza"
plugins=$("$cadenza" plugins)
echo "$plugins" | tail -n 1
grep -q "^backbone.llama .* $root/usr/lib/cadenza/plugins/libcadenza_backbone_llama.so" <<< "$plugins" \
    || fail "cadenza does not find its plugins in $root/usr/lib/cadenza/plugins"
if grep -F "$build_dir" >/dev/null <<< "$plugins"; then fail "cadenza loads plugins from the build tree"; fi
sections=$(readelf -S "$root/usr/lib/cadenza/plugins/libcadenza_backbone_llama.so")
grep -q '\.cadenza_plugins' <<< "$sections" || fail "the packaged backbone.llama lost its manifest section"
doctor=$("$cadenza" doctor)
grep -q "^LibTorch       [0-9]" <<< "$doctor" || fail "cadenza doctor does not run the packaged cadenza-torch: $doctor"

pipeline="$root/usr/share/cadenza/pipelines/default.toml"
(cd "$scratch" && "$cadenza" synth -p "$pipeline" -t "hello there" -o "$scratch/cli.wav" --seed 7)
[ -s "$scratch/cli.wav" ] || fail "synth wrote nothing"
frames=$(/usr/bin/python3 -c "import sys, wave; print(wave.open(sys.argv[1]).getnframes())" "$scratch/cli.wav")
[ "$frames" -gt 4800 ] || fail "synth wrote only $frames samples"
# The model speaks: pocketsphinx must hear at least one of the two words (seed 7 repeats bit for bit).
heard=$("$cadenza" transcribe "$scratch/cli.wav" 2>/dev/null || true)
echo "pocketsphinx heard: $heard"
grep -Eqw "hello|there" <<< "$heard" || fail "pocketsphinx heard neither word of 'hello there'"

# A shipped pipeline by its bare name: found relative to the program, the same speech.
(cd "$scratch" && "$cadenza" synth -p default -t "hello there" -o "$scratch/by-name.wav" --seed 7 >/dev/null)
cmp "$scratch/cli.wav" "$scratch/by-name.wav" || fail "synth -p default spoke otherwise than the pipeline's path"

# The Python bindings from the package: the same bytes for the same seed.
PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -m cadenza synth -p "$pipeline" \
    -t "hello there" -o "$scratch/python.wav" --seed 7 >/dev/null
cmp "$scratch/cli.wav" "$scratch/python.wav" || fail "the Python bindings wrote other bytes than the CLI"
library=$(PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c "import cadenza; print(cadenza.version().path)")
case "$library" in "$root"/*) ;; *) fail "the Python bindings loaded $library, not the package's" ;; esac

# The SDK: the plugin template builds against the package with CMake and loads.
cmake -S "$root/usr/share/cadenza/sdk/plugin_template" -B "$scratch/template" -DCMAKE_PREFIX_PATH="$root/usr" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$scratch/template" >/dev/null
described=$(CADENZA_PLUGIN_PATH="$scratch/template" "$cadenza" plugins describe example.argmax_acceptor)
grep -q "library: $scratch/template/" <<< "$described" || fail "the template plugin did not load"

# pkg-config: a C program against the embedding API, linked and run.
cat > "$scratch/version.c" <<'C'
#include <stdio.h>
#include <cadenza/cadenza.h>
int main(void) {
    cdz_version version = {.struct_size = sizeof(cdz_version)};
    cdz_version_get(&version);
    printf("%s %u.%u\n", version.library_version, version.abi_major, version.abi_minor);
    return version.abi_major == CDZ_ABI_VERSION_MAJOR && version.abi_minor == CDZ_ABI_VERSION_MINOR ? 0 : 1;
}
C
flags=$(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" pkg-config --cflags --libs cadenza)
echo "pkg-config: $flags"
case "$flags" in *"$root/usr/"*) ;; *) fail "pkg-config's flags do not point into the package: $flags" ;; esac
cc -std=c99 -Wall -Werror "$scratch/version.c" -o "$scratch/version" $flags
LD_LIBRARY_PATH="$root/usr/lib" "$scratch/version" || fail "the pkg-config program failed"
echo "the package builds, unpacks and runs relocated"
