#!/usr/bin/env bash
# The codec workflow on a tiny real corpus: corpus speech -> train codec
# (an interrupted run resumed equals an uninterrupted one, byte for byte) ->
# codec roundtrip through a pipeline -> codec evaluate (pocketsphinx) ->
# corpus tts. Quality is not asserted here (a few steps on a few sentences).
#   check_codec_workflow.sh CADENZA_BINARY SOURCE_DIR
set -euo pipefail
cadenza=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$cadenza" corpus speech --output corpus --limit-sentences 8 --voices flite.slt,flite.kal16 --variations 1 \
  --train-hours 0.01 --jobs 2 > corpus.log
grep -q "train" corpus/manifest.tsv

common=(--manifest corpus/manifest.tsv --steps 12 --batch 4 --seq-len 32 --width 16 --encoder-blocks 1
        --decoder-blocks 1 --seed 3 --threads 1 --no-progress)
"$cadenza" train codec "${common[@]}" --output whole > /dev/null
"$cadenza" train codec "${common[@]}" --output resumed --stop-after 5 > /dev/null
"$cadenza" train codec "${common[@]}" --output resumed --resume > /dev/null
cmp whole/codec.safetensors resumed/codec.safetensors
if "$cadenza" train codec "${common[@]}" --output whole > refused.log 2>&1; then
  echo "a second run into the same output must be refused without --resume" >&2
  exit 1
fi

cat > codec.toml <<TOML
[pipeline]
name = "codec-test"
[frontend]
plugin = "frontend.espeak"
vocabulary = "$source_dir/models/frontend/ipa.vocab"
[codec]
plugin = "codec.mel_fsq"
model = "$work/whole/codec.safetensors"
TOML
first=$(awk -F'\t' 'NR == 2 { print $6 }' corpus/manifest.tsv)
"$cadenza" codec roundtrip -p codec.toml "corpus/$first" -o roundtrip.wav | tee roundtrip.log
grep -q "real time" roundtrip.log
test -s roundtrip.wav
"$cadenza" codec encode -p codec.toml "corpus/$first" -o codes.safetensors > /dev/null
"$cadenza" codec decode -p codec.toml codes.safetensors -o decoded.wav > /dev/null
cmp roundtrip.wav decoded.wav

"$cadenza" codec evaluate --model whole/codec.safetensors --manifest corpus/manifest.tsv --split test --limit 2 \
  --jobs 1 --json gate.json 2> /dev/null | tee evaluate.log
grep -q "original audio" evaluate.log
grep -q '"resynthesized"' gate.json

"$cadenza" corpus tts --pipeline codec.toml --manifest corpus/manifest.tsv --output tokens > tts.log 2>&1
grep -q "audio_start_token" tokens/layout.json
test -s tokens/train.tokens
echo "codec workflow: ok"
