#!/bin/bash
# Builds the test programs that need no LibTorch with AddressSanitizer +
# UndefinedBehaviorSanitizer (cmake/CadenzaSanitize.cmake) in build-asan/ and
# runs each, two at a time: a sanitizer report, a leak or a failed test fails.
#   scripts/sanitize.sh
# Exit status: 0 when every program passed.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build="${CADENZA_SANITIZE_BUILD:-$source_dir/build-asan}"
mkdir -p "$build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$source_dir" -B "$build" -G Ninja -DCADENZA_SANITIZE=ON -DCADENZA_WITH_TORCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    > "$build/configure.log" || { tail -20 "$build/configure.log"; exit 1; }
fi
start=$(date +%s)
cmake --build "$build" --target sanitized_tests -- -j"$(nproc)" > "$build/build.log" ||
  { tail -30 "$build/build.log"; exit 1; }
echo "sanitize.sh: built $(wc -l < "$build/sanitized_tests.txt") programs in $(( $(date +%s) - start )) s"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
logs=$(mktemp -d)
run_one() {
  local program=${1%% *} filter=${1#* } logs=$2 name
  name=$(basename "$program")
  local begin=$(date +%s)
  if "$program" "$filter" --gtest_brief=1 > "$logs/$name.log" 2>&1; then
    echo "ok   $name ($(( $(date +%s) - begin )) s)"
  else
    echo "FAIL $name"; tail -60 "$logs/$name.log"; return 1
  fi
}
export -f run_one
if xargs -P "$(nproc)" -I{} bash -c 'run_one "$@"' _ {} "$logs" < "$build/sanitized_tests.txt"; then
  rm -rf "$logs"; exit 0
fi
echo "sanitize.sh: logs kept in $logs"; exit 1
