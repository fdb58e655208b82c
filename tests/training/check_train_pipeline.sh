#!/bin/sh
# cadenza corpus synthetic -> train lm -> train draft -> train mtp -> train medusa,
# on a tiny corpus and model; checks the files each step writes and the
# errors of a bad corpus and of a run that exists without --resume.
set -eu
cadenza="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$cadenza" corpus synthetic --output "$work/corpus.txt" --sequences 300 --vocab 48 --states 8 --seed 1 \
  --prompt-length 2 --length 24 | tee "$work/corpus.out"
grep -q "ideal predictor" "$work/corpus.out"

cat > "$work/config.json" <<JSON
{"vocab_size": 48, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 3,
 "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64, "tie_word_embeddings": true}
JSON

common="--steps 30 --batch 8 --seq-len 32 --warmup 5 --threads 1 --no-progress"
"$cadenza" train lm --corpus "$work/corpus.txt" --config "$work/config.json" --output "$work/target" \
  --lr 3e-3 $common | tee "$work/lm.out"
test -f "$work/target/config.json" && test -f "$work/target/model.safetensors" \
  && test -f "$work/target/training_state.safetensors"
grep -q "unigram baseline accuracy" "$work/lm.out"

"$cadenza" train draft --target "$work/target" --layers 0,2 --train-layers 0 --corpus "$work/corpus.txt" \
  --output "$work/draft" --lr 2e-3 $common | tee "$work/draft.out"
grep -q "agreement with the target" "$work/draft.out"
test -f "$work/draft/model.safetensors"

"$cadenza" train mtp --target "$work/target" --heads 2 --corpus "$work/corpus.txt" --output "$work/mtp.safetensors" \
  $common | tee "$work/mtp.out"
"$cadenza" train medusa --target "$work/target" --heads 2 --corpus "$work/corpus.txt" \
  --output "$work/medusa.safetensors" $common | tee "$work/medusa.out"
test -f "$work/mtp.safetensors" && test -f "$work/medusa.safetensors"
grep -q "head 1 (t+3) accuracy" "$work/medusa.out"

# A run that exists is not overwritten without --resume; --resume with more steps continues it.
if "$cadenza" train mtp --target "$work/target" --heads 2 --corpus "$work/corpus.txt" \
     --output "$work/mtp.safetensors" $common 2> "$work/again.err"; then
  echo "expected a refusal without --resume"; exit 1
fi
grep -q "pass --resume" "$work/again.err"

# --init-from continues from trained weights with a fresh optimizer: its first
# held-out loss is the trained model's, far below a random model's.
"$cadenza" train lm --corpus "$work/corpus.txt" --init-from "$work/target" --output "$work/continued" \
  --lr 1e-3 --steps 2 --batch 8 --seq-len 32 --warmup 1 --threads 1 --no-progress | tee "$work/continued.out"
grep -q "initial weights: $work/target" "$work/continued.out"
trained=$(awk '/held-out/ { h = 1 } h && /loss/ { print $2; exit }' "$work/lm.out")
continued=$(awk '/held-out/ { h = 1 } h && /loss/ { print $2; exit }' "$work/continued.out")
awk -v a="$continued" -v b="$trained" 'BEGIN { exit !(a < b + 0.2 && a < 3.5) }'
if "$cadenza" train lm --corpus "$work/corpus.txt" --output "$work/neither" $common 2> "$work/neither.err"; then
  echo "expected a refusal without --config or --init-from"; exit 1
fi
grep -q "either --config" "$work/neither.err"
if "$cadenza" train lm --corpus "$work/corpus.txt" --config "$work/config.json" --init-from "$work/target" \
     --output "$work/both" $common 2> "$work/both.err"; then
  echo "expected --config and --init-from to exclude each other"; exit 1
fi

# A malformed corpus names its file and line; exit code 1.
printf '1 2 3\n4 x5 6\n' > "$work/bad.txt"
set +e
"$cadenza" train lm --corpus "$work/bad.txt" --config "$work/config.json" --output "$work/bad" $common 2> "$work/bad.err"
code=$?
set -e
test "$code" -eq 1
grep -q "bad.txt:2: malformed token 'x5'" "$work/bad.err"
echo "train pipeline: ok"
