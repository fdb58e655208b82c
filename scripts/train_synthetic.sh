#!/usr/bin/env bash
# Trains a small speech-layout target on a synthetic hidden-Markov corpus,
# then an SSD shallow draft, MTP and MEDUSA heads, a MEDUSA tree and Viterbi
# transitions, and benchmarks plain decoding against the speculative
# pipelines with `cadenza bench`. A few minutes on 2 cores.
#
#   scripts/train_synthetic.sh [OUTPUT_DIR]     (default build/synthetic)
#
# Needs a built tree (scripts/setup.sh). With CHECK=1 it also fails unless
# the shallow draft and the MEDUSA tree reach a mean accepted length above 1.5.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(realpath -m "${1:-build/synthetic}")
cadenza="${CADENZA:-$root/build/bin/cadenza}"
export CADENZA_PLUGIN_PATH="${CADENZA_TEST_PLUGINS:-$root/build/tests/plugins/doubles}"
# Every run starts afresh; a directory this script did not make is left alone.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/.cadenza-synthetic" ]; then
  echo "train_synthetic: $out exists and was not made by this script; choose another directory" >&2
  exit 1
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.cadenza-synthetic"
cd "$out"

# Layout: text ids 0..255 (frontend.chars uses 75), audio start 256, end 257, 62 audio codes from 258.
layout="--audio-offset 258 --text-vocab 75 --text-length 12 --audio-start 256 --end 257"
TIMEFORMAT='  (%R s)'
run() { echo "+ cadenza $*" >&2; time "$cadenza" "$@"; }

run corpus synthetic --output corpus.txt --sequences 4000 --vocab 62 --states 32 --seed 1 --length 64 $layout
run corpus synthetic --output heldout.txt --sequences 200 --vocab 62 --states 32 --seed 1 --length 64 $layout
cat > target-config.json <<'JSON'
{"vocab_size": 320, "hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4,
 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 512,
 "tie_word_embeddings": true}
JSON
common="--corpus corpus.txt --batch 32 --seq-len 80 --threads 1"
run train lm --config target-config.json --output target --steps 250 --lr 2e-3 --warmup 30 $common
run train draft --target target --layers 0,3 --train-layers 0 --output draft --steps 100 --lr 2e-3 --warmup 20 $common
run train medusa --target target --heads 3 --output medusa-heads.safetensors --steps 150 $common
run train mtp --target target --heads 3 --output mtp-heads.safetensors --steps 150 $common
run build-tree --target target --heads medusa-heads.safetensors --corpus heldout.txt --output medusa-choices.txt \
    --budget 12 --top-k 4 --threads 1
cut -d'|' -f2 corpus.txt > audio-tokens.txt
run build-transitions --corpus audio-tokens.txt --vocab 320 --alpha 0.1 --output transitions.cdztrn

pipeline() {  # name, temperature, extra tables
  cat > "$1.toml" <<TOML
[pipeline]
name = "$1"
seed = 1
max_audio_seconds = 2.0

[sampling]
temperature = $2

[frontend]
plugin = "frontend.chars"
vocabulary = "$root/models/frontend/english_chars.vocab"

[codec]
plugin = "test.tone_codec"
codebook_size = 62

[backbone]
plugin = "backbone.llama"
checkpoint = "target"
text_token_count = 256
audio_start_token = 256
end_token = 257
audio_token_offset = 258
audio_token_count = 62
threads = 1
$3
TOML
}
pipeline plain 0.8 ""
pipeline shallow-exact 0.8 $'[draft]\nplugin = "draft.shallow"\nmodel = "draft"\nlength = 4\nthreads = 1\n[acceptor]\nplugin = "acceptor.exact"'
pipeline shallow-bias 0.8 $'[draft]\nplugin = "draft.shallow"\nmodel = "draft"\nlength = 4\nthreads = 1\n[acceptor]\nplugin = "acceptor.bias"\nbeta = 0.4'
pipeline medusa-tolerance 0.8 $'[draft]\nplugin = "draft.medusa"\nheads = "medusa-heads.safetensors"\ntarget = "target"\nchoices = "medusa-choices.txt"\ntop_k = 4\nthreads = 1\n[acceptor]\nplugin = "acceptor.tolerance"\ntau = 3'
pipeline medusa-exact 0.8 $'[draft]\nplugin = "draft.medusa"\nheads = "medusa-heads.safetensors"\ntarget = "target"\nchoices = "medusa-choices.txt"\ntop_k = 4\nthreads = 1\n[acceptor]\nplugin = "acceptor.exact"'
pipeline mtp-viterbi 0.8 $'[draft]\nplugin = "draft.mtp"\nheads = "mtp-heads.safetensors"\ntarget = "target"\nthreads = 1\n[acceptor]\nplugin = "acceptor.viterbi"\ntransitions = "transitions.cdztrn"\ntop_k = 3'

# Short texts, like the 12-id prompts the target was trained on.
cat > texts.txt <<'TEXT'
hello world.
good morning
draft, verify
speak slowly.
fast speech!
one, two, three.
a quiet room
the red door
sixty tokens
near the end.
TEXT
run bench -p plain.toml -p shallow-exact.toml -p shallow-bias.toml -p medusa-tolerance.toml -p medusa-exact.toml \
    -p mtp-viterbi.toml --texts texts.txt --json bench.json | tee bench.txt

if [ "${CHECK:-0}" = 1 ]; then
  # Column 5 of a table row is the mean accepted length (tokens per step).
  awk '($1 == "shallow-exact" || $1 == "medusa-exact") && $4 ~ /x$/ {
         found++; printf "%s: mean accepted length %s, speedup %s\n", $1, $5, $4
         if ($5 + 0 <= 1.5) { printf "%s: mean accepted length is not above 1.5\n", $1; failed = 1 } }
       END { exit (failed || found != 2) }' bench.txt
fi
