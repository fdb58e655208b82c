#!/usr/bin/env bash
# The codec workflow on a tiny real corpus: corpus speech -> train codec
# (an interrupted run resumed equals an uninterrupted one, byte for byte;
# --latent-smoothness makes the codes move less between frames) ->
# codec roundtrip through a pipeline -> codec evaluate (pocketsphinx) ->
# corpus tts -> a tiny target -> target evaluate (teacher-forced codes judged
# by pocketsphinx). Quality is not asserted here (a few steps on a few sentences).
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
"$cadenza" train codec "${common[@]}" --output whole > whole.log
"$cadenza" train codec "${common[@]}" --output resumed --stop-after 5 > /dev/null
"$cadenza" train codec "${common[@]}" --output resumed --resume > /dev/null
cmp whole/codec.safetensors resumed/codec.safetensors
if "$cadenza" train codec "${common[@]}" --output whole > refused.log 2>&1; then
  echo "a second run into the same output must be refused without --resume" >&2
  exit 1
fi

# --latent-smoothness: the codes move less from frame to frame; the setting
# belongs to the run (no resume without it).
"$cadenza" train codec "${common[@]}" --latent-smoothness 5 --output smooth > smooth.log
movement() { sed -n 's/.*codes move \([0-9.]*\) per frame.*/\1/p' "$1"; }
echo "codes move $(movement whole.log) per frame, $(movement smooth.log) with --latent-smoothness 5"
awk -v a="$(movement whole.log)" -v b="$(movement smooth.log)" 'BEGIN { exit !(b < a) }'
if "$cadenza" train codec "${common[@]}" --output smooth --resume > refused.log 2>&1; then
  echo "a smoothed run resumed without --latent-smoothness" >&2
  exit 1
fi
grep -q "latent_smoothness" refused.log

# --init-from: a run from a trained codec starts where it ended (at lr 0 its
# dev L1 is the codec's own); another architecture is refused.
dev_l1() { sed -n 's/.*dev L1 \([0-9.]*\).*/\1/p' "$1"; }
one_step=(--manifest corpus/manifest.tsv --steps 1 --batch 4 --seq-len 32 --encoder-blocks 1 --decoder-blocks 1
          --lr 0 --warmup 0 --threads 1 --no-progress --init-from whole/codec.safetensors)
"$cadenza" train codec "${one_step[@]}" --width 16 --output again > again.log
test "$(dev_l1 again.log)" = "$(dev_l1 whole.log)"
if "$cadenza" train codec "${one_step[@]}" --width 8 --output other > refused.log 2>&1; then
  echo "--init-from accepted a codec of another width" >&2
  exit 1
fi
grep -q "is not this run's" refused.log

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
grep -q "\"text_pad_id\": *0" tokens/layout.json  # the frontend's <pad>, for text dropout
test -s tokens/train.tokens

vocab=$(sed -n 's/.*"vocab_size": *\([0-9]*\).*/\1/p' tokens/layout.json)
cat > target.json <<JSON
{"vocab_size": $vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024, "tie_word_embeddings": true}
JSON
"$cadenza" train lm --corpus tokens/train.tokens --config target.json --output target --steps 2 --batch 2 \
  --seq-len 1024 --threads 1 --no-progress > /dev/null
evaluate=(--target target --codec whole/codec.safetensors --layout tokens/layout.json --manifest corpus/manifest.tsv
          --limit 2 --jobs 1)
"$cadenza" target evaluate "${evaluate[@]}" --tokens tokens/test.tokens --prompts tokens/test_prompts.tsv \
  --json target.json.out --write-audio target-audio 2> /dev/null | tee target.log
grep -q "teacher-forced most likely codes" target.log
grep -q '"teacher_forced_codes"' target.json.out
test "$(ls target-audio/*.predicted.wav | wc -l)" -ge 1
# A prompts file of another split does not name the token file's lines.
head -1 tokens/test_prompts.tsv > short_prompts.tsv
if "$cadenza" target evaluate "${evaluate[@]}" --tokens tokens/test.tokens --prompts short_prompts.tsv \
     > /dev/null 2> refused.log; then
  echo "target evaluate accepted a prompts file without the token file's rows" >&2
  exit 1
fi
grep -q "short_prompts.tsv: 0 rows, but .*test.tokens has" refused.log
echo "codec workflow: ok"
