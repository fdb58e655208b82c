#!/bin/bash
# Builds cadenza without LibTorch (-DCADENZA_WITH_TORCH=OFF, and CMake may
# not even look for it) in build-notorch/: libcadenza, the frontends, the C
# acceptors, the SDK and `cadenza` with the commands that run no model. Then
# runs that tree's part of the test suite.
#   scripts/test_without_torch.sh
# Exit status: 0 when it built and every test passed.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build="${CADENZA_NOTORCH_BUILD:-$source_dir/build-notorch}"
mkdir -p "$build"
start=$(date +%s)
cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCADENZA_WITH_TORCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON > "$build/configure.log" || { tail -20 "$build/configure.log"; exit 1; }
cmake --build "$build" -- -j"$(nproc)" > "$build/build.log" || { grep -B2 -A12 'FAILED\|error' "$build/build.log" | head -60; exit 1; }
echo "test_without_torch.sh: built without LibTorch in $(( $(date +%s) - start )) s"
(cd "$build" && ctest --output-on-failure -j "$(nproc)" --timeout 600)
