#!/usr/bin/env bash
# Measures backbone.llama on a model too large for the caches: creates
# random weights for models/configs/bench-llama-150m.json (once, with
# `cadenza model init`), writes a plain pipeline around them (frontend.chars,
# backbone.llama, the test.tone_codec double) and runs `cadenza bench`, whose
# cost table gives ms per forward for m = 1..32 tokens and the weight
# bandwidth at m = 1 (GB/s).
#
# Usage: scripts/bench_backbone.sh [extra `cadenza bench` options, e.g. --json out.json]
# Environment: BUILD_DIR (default build), CONFIG (default the 150M config),
#   REPEATS (default 30), TEXTS (default tests/pipelines/bench/texts.txt),
#   MAX_TEXTS (default 1), THREADS (backbone threads, default 0: one per core),
#   MAX_AUDIO_SECONDS (default 1.0).
# The build needs the targets cadenza_cli, cadenza_backbone_llama,
# cadenza_frontend_chars and test_tone_codec.
#
# Token layout of the benchmark vocabulary (73728 = 8192 + 65536): text ids
# 0..8183, audio start 8184, end 8185, audio codes from 8192. Only the first
# 4096 codes are used, to match the tone codec's largest codebook; the head
# still computes all 73728 logits.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${BUILD_DIR:-$root/build}" && pwd)"
config="${CONFIG:-$root/models/configs/bench-llama-150m.json}"
texts="${TEXTS:-$root/tests/pipelines/bench/texts.txt}"
cadenza="$build/bin/cadenza"
doubles="$build/tests/plugins/doubles"
model="$build/bench-models/$(basename "$config" .json)"

for needed in "$cadenza" "$build/lib/cadenza/plugins/libcadenza_backbone_llama.so" "$build/lib/cadenza/plugins/libcadenza_frontend_chars.so" \
              "$doubles/libtest_tone_codec.so"; do
    [ -e "$needed" ] || { echo "bench_backbone.sh: $needed is missing; build cadenza_cli cadenza_backbone_llama" \
                               "cadenza_frontend_chars test_tone_codec in $build" >&2; exit 1; }
done

if [ ! -f "$model/model.safetensors" ] || [ ! -f "$model/config.json" ]; then
    "$cadenza" model init --config "$config" --output "$model" --seed 1 --force
fi

pipeline_dir="$(mktemp -d)"
trap 'rm -rf "$pipeline_dir"' EXIT
pipeline="$pipeline_dir/$(basename "$config" .json).toml"
cat > "$pipeline" <<TOML
# Written by scripts/bench_backbone.sh: plain decoding on $(basename "$config").
[pipeline]
name = "$(basename "$config" .json)"
seed = 1
max_audio_seconds = ${MAX_AUDIO_SECONDS:-1.0}

[sampling]
temperature = 0.8
top_k = 50

[frontend]
plugin = "frontend.chars"
vocabulary = "$root/models/frontend/english_chars.vocab"

[backbone]
plugin = "backbone.llama"
checkpoint = "$model"
threads = ${THREADS:-0}
max_positions = 2048
text_token_offset = 0
text_token_count = 8184
audio_start_token = 8184
end_token = 8185
audio_token_offset = 8192
audio_token_count = 4096

[codec]
plugin = "test.tone_codec"
codebook_size = 4096
step_hz = 1.0
TOML

CADENZA_PLUGIN_PATH="$doubles${CADENZA_PLUGIN_PATH:+:$CADENZA_PLUGIN_PATH}" \
    "$cadenza" bench -p "$pipeline" --texts "$texts" --max-texts "${MAX_TEXTS:-1}" --repeats "${REPEATS:-30}" "$@"
