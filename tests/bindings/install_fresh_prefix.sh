#!/bin/sh
# A fresh install prefix for the bindings' suites and the docs' snippets:
# removed, then `cmake --install` again.
set -eu
build_dir="$1"
prefix="$2"
rm -rf "$prefix"
cmake --install "$build_dir" --prefix "$prefix" >/dev/null
for needed in bin/cadenza bin/cadenza-torch lib/libcadenza.so.0 lib/cadenza/plugins/libcadenza_frontend_chars.so \
              lib/python3/dist-packages/cadenza/_installed.py lib/node_modules/cadenza/installed.json \
              lib/pkgconfig/cadenza.pc share/cadenza/pipelines/default.toml share/cadenza/models/en-small/codec.safetensors; do
    [ -e "$prefix/$needed" ] || { echo "the install has no $needed"; exit 1; }
done
echo "installed into $prefix"
