#!/bin/bash
# Builds cadenza's libFuzzer targets with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer, cmake/CadenzaFuzz.cmake) in build-fuzz/, replays
# the seed corpora of tests/fuzz_corpus/ (every input once: a crash or a
# sanitizer report fails), then fuzzes each target for SECONDS (default 30)
# from a scratch copy of its corpus and prints the executions it reached.
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# Exit status: 0 when every replay and run ended without a finding.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
build="${CADENZA_FUZZ_BUILD:-$source_dir/build-fuzz}"
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(strict_json safetensors pipeline_toml llama_config mel_codec_config
  medusa_choices token_corpus token_groups transitions wav_input frontend_text torch_checkpoint codes_file)

command -v clang++ > /dev/null || { echo "fuzz.sh: clang++ is missing (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$build"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$source_dir" -B "$build" -G Ninja -DCADENZA_FUZZ=ON -DCADENZA_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    > "$build/configure.log" || { tail -20 "$build/configure.log"; exit 1; }
fi
cmake --build "$build" --target $(printf 'fuzz_%s ' "${targets[@]}") -- -j"$(nproc)" > "$build/build.log" ||
  { tail -30 "$build/build.log"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in "${targets[@]}"; do
  program="$build/fuzz/fuzz_$target"
  seeds="$source_dir/tests/fuzz_corpus/$target"
  if ! "$program" -runs=0 "$seeds" > "$work/$target.replay.log" 2>&1; then
    echo "FAIL $target: replaying $seeds"; tail -20 "$work/$target.replay.log"; status=1; continue
  fi
  mkdir -p "$work/$target"
  cp "$seeds"/* "$work/$target/"
  if ! (cd "$work" && "$program" -seed="${CADENZA_FUZZ_SEED:-1}" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        "$work/$target" > "$work/$target.log" 2>&1); then
    echo "FAIL $target: a finding (the input is in $work, kept)"; tail -30 "$work/$target.log"; trap - EXIT; status=1
    continue
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$target.log" | grep -o '[0-9]*$')
  echo "ok   $target: replayed $(ls "$seeds" | wc -l) seeds; $runs executions in $seconds s without a finding"
done
exit $status
