#!/bin/sh
# cadenza corpus synthetic -> train lm -> train draft -> train mtp -> train medusa
# -> train recurrent,
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

# The recurrent draft needs a code grid: refused without one; with tokens 8..47
# declared codes on a 5 x 4 x 2 grid it trains and reports every step.
if "$cadenza" train recurrent --target "$work/target" --corpus "$work/corpus.txt" \
     --output "$work/recurrent.safetensors" $common 2> "$work/recurrent.err"; then
  echo "expected train recurrent to need --code-digits"; exit 1
fi
grep -q "needs --code-digits and --layout" "$work/recurrent.err"
cat > "$work/layout.json" <<JSON
{"text_token_offset": 0, "text_token_count": 6, "audio_token_offset": 8, "audio_token_count": 40,
 "audio_start_token": 6, "end_token": 7, "phone_markers": false, "vocab_size": 48}
JSON
"$cadenza" train recurrent --target "$work/target" --corpus "$work/corpus.txt" --output "$work/recurrent.safetensors" \
  --code-digits 5,4,2 --layout "$work/layout.json" --cell-size 16 --depth 2 $common | tee "$work/recurrent.out"
grep -q "recurrent draft: cell 16 on hidden 32, trained 2 steps deep, code digits 5,4,2 from token 8" "$work/recurrent.out"
grep -q "step 2 (t+3) acceptance" "$work/recurrent.out"
test -f "$work/recurrent.safetensors" && test -f "$work/recurrent.training_state.safetensors"

# Trained for acceptor.pcg: group total variation is refused without the
# groups; with groups of the target's code embeddings it reports each step's
# group acceptance.
if "$cadenza" train recurrent --target "$work/target" --corpus "$work/corpus.txt" --output "$work/recurrent-g.safetensors" \
     --code-digits 5,4,2 --layout "$work/layout.json" --cell-size 16 --depth 2 --distill-loss group-total-variation \
     $common 2> "$work/recurrent-g.err"; then
  echo "expected group-total-variation to need --groups"; exit 1
fi
grep -q "group-total-variation needs --groups" "$work/recurrent-g.err"
"$cadenza" build-groups --embeddings "$work/target" --tensor model.embed_tokens.weight --rows 8:48 --theta 0.1 \
  --output "$work/groups.cdzgrp" --quiet
"$cadenza" train recurrent --target "$work/target" --corpus "$work/corpus.txt" --output "$work/recurrent-g.safetensors" \
  --code-digits 5,4,2 --layout "$work/layout.json" --cell-size 16 --depth 2 --distill-loss group-total-variation \
  --groups "$work/groups.cdzgrp" $common | tee "$work/recurrent-g.out"
grep -q "0.5 \* group-total-variation against the target's distribution" "$work/recurrent-g.out"
grep -q "step 2 (t+3) group acceptance" "$work/recurrent-g.out"

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
# --add-layers deepens it: 3 trained layers + 2 new ones that start at zero,
# so at lr 0 the held-out loss is the trained model's to 4 decimals.
"$cadenza" train lm --corpus "$work/corpus.txt" --init-from "$work/target" --add-layers 2 --output "$work/deeper" \
  --lr 0 --steps 1 --batch 8 --seq-len 32 --warmup 0 --threads 1 --no-progress | tee "$work/deeper.out"
grep -q "added layers: 3 trained + 2 new" "$work/deeper.out"
grep -q '"num_hidden_layers": 5' "$work/deeper/config.json"
deeper=$(awk '/held-out/ { h = 1 } h && /loss/ { print $2; exit }' "$work/deeper.out")
test "$deeper" = "$trained" || { echo "deeper model's loss $deeper, trained $trained"; exit 1; }
if "$cadenza" train lm --corpus "$work/corpus.txt" --config "$work/config.json" --add-layers 1 \
     --output "$work/nogrow" $common 2> "$work/nogrow.err"; then
  echo "expected --add-layers without --init-from to be refused"; exit 1
fi
grep -q "add-layers needs --init-from" "$work/nogrow.err"
if "$cadenza" train lm --corpus "$work/corpus.txt" --output "$work/neither" $common 2> "$work/neither.err"; then
  echo "expected a refusal without --config or --init-from"; exit 1
fi
grep -q "either --config" "$work/neither.err"
if "$cadenza" train lm --corpus "$work/corpus.txt" --config "$work/config.json" --init-from "$work/target" \
     --output "$work/both" $common 2> "$work/both.err"; then
  echo "expected --config and --init-from to exclude each other"; exit 1
fi

# --guided-attention: the held-out results report the guide; it needs a
# layout matching the model, a layer and a head inside it.
printf '{"text_token_offset": 0, "text_token_count": 8, "audio_token_offset": 8, "audio_token_count": 38,
  "audio_start_token": 46, "end_token": 47, "vocab_size": 48}\n' > "$work/layout.json"
# A speech-like corpus: [text] [audio start] | [two codes per text id] [end].
awk 'BEGIN { srand(3); for (n = 0; n < 200; n++) {
  len = 3 + int(rand() * 4); text = ""; codes = ""
  for (i = 0; i < len; i++) { id = int(rand() * 8); text = text id " "; codes = codes (8 + 2 * id) " " (9 + 2 * id) " " }
  print text "46 | " codes "47" } }' > "$work/spoken.txt"
# With --code-digits the 38 codes are a 2 x 19 grid.
"$cadenza" train lm --corpus "$work/spoken.txt" --init-from "$work/target" --output "$work/guided" \
  --guided-attention 1,2 --code-digits 2,19 --code-input-noise 0.3 --layout "$work/layout.json" --lr 1e-3 --steps 2 \
  --batch 8 --seq-len 32 --warmup 1 --threads 1 --no-progress --checkpoint-every 1 --stop-after 1 | tee "$work/guided.out"
# The noise is a setting of the run: resuming without it is refused, with it the run finishes.
if "$cadenza" train lm --corpus "$work/spoken.txt" --init-from "$work/target" --output "$work/guided" \
     --guided-attention 1,2 --code-digits 2,19 --layout "$work/layout.json" --lr 1e-3 --steps 2 --batch 8 --seq-len 32 \
     --warmup 1 --threads 1 --no-progress --resume 2> "$work/resume.err"; then
  echo "a resume without --code-input-noise was accepted"; exit 1
fi
grep -q "code_input_noise" "$work/resume.err" || { cat "$work/resume.err"; exit 1; }
"$cadenza" train lm --corpus "$work/spoken.txt" --init-from "$work/target" --output "$work/guided" \
  --guided-attention 1,2 --code-digits 2,19 --code-input-noise 0.3 --layout "$work/layout.json" --lr 1e-3 --steps 2 \
  --batch 8 --seq-len 32 --warmup 1 --threads 1 --no-progress --resume >> "$work/guided.out"
grep -q "code input noise: 30% of the fed target codes" "$work/guided.out"
grep -q "guided attention: head 0 of layers 1,2" "$work/guided.out"
grep -q "code embeddings: digits of the FSQ grid 2,19 from token 8" "$work/guided.out"
grep -q "attention off the text diagonal" "$work/guided.out"
# --text-dropout and --self-feeding are settings of the run too.
fed() {
  "$cadenza" train lm --corpus "$work/spoken.txt" --init-from "$work/target" --output "$work/fed" \
    --layout "$work/layout.json" --lr 1e-3 --steps 2 --batch 8 --seq-len 32 --warmup 1 --threads 1 --no-progress "$@"
}
fed --text-dropout 0.2 --self-feeding 0.3 --checkpoint-every 1 --stop-after 1 > "$work/fed.out"
if fed --text-dropout 0.2 --resume 2> "$work/fed.err"; then
  echo "a resume without --self-feeding was accepted"; exit 1
fi
grep -q "self_feeding" "$work/fed.err" || { cat "$work/fed.err"; exit 1; }
fed --text-dropout 0.2 --self-feeding 0.3 --resume >> "$work/fed.out"
grep -q "text dropout: 20% of the training texts" "$work/fed.out"
grep -q "self-feeding: 30% of the fed target codes" "$work/fed.out"
grep -q "trained steps 1..2 of 2" "$work/fed.out" || { cat "$work/fed.out"; exit 1; }
refuse() {  # refuse EXPECTED-MESSAGE ARGS...: the run fails and says why
  local expected=$1; shift
  if "$cadenza" train lm --corpus "$work/corpus.txt" --init-from "$work/target" --output "$work/refused" \
       --steps 1 --batch 8 --seq-len 32 --threads 1 --no-progress "$@" 2> "$work/refused.err"; then
    echo "expected a refusal: $*"; exit 1
  fi
  grep -q "$expected" "$work/refused.err" || { cat "$work/refused.err"; exit 1; }
}
refuse "needs --layout" --guided-attention 1
refuse "text-dropout needs --layout" --text-dropout 0.1
refuse "self-feeding needs --layout" --self-feeding 0.1
refuse "layer 3 is outside the model's 3 layers" --guided-attention 3 --layout "$work/layout.json"
refuse "guided-head 4 is outside" --guided-attention 1 --guided-head 4 --layout "$work/layout.json"
sed 's/"vocab_size": 48/"vocab_size": 40/; s/"audio_token_count": 38/"audio_token_count": 30/; s/"audio_start_token": 46/"audio_start_token": 38/; s/"end_token": 47/"end_token": 39/' "$work/layout.json" > "$work/small.json"
refuse "a vocabulary of 40 tokens, the model has 48" --guided-attention 1 --layout "$work/small.json"
refuse "code-digits needs --layout" --code-digits 2,19
refuse "code-input-noise needs --layout" --code-input-noise 0.2
refuse "the levels make 36 codes, the layout has 38" --code-digits 6,6 --layout "$work/layout.json"

# Code-digit output heads and draft: the 38 codes as a 2 x 19 grid.
"$cadenza" train mtp --target "$work/target" --heads 2 --corpus "$work/spoken.txt" --output "$work/mtp-digits.safetensors" \
  --code-digits 2,19 --layout "$work/layout.json" --distill-weight 0.5 $common | tee "$work/mtp-digits.out"
grep -q "output: code digits 2,19 from token 8 (32 logits per head instead of 48)" "$work/mtp-digits.out"
grep -q "head 1 (t+3) acceptance" "$work/mtp-digits.out"
"$cadenza" train draft --target "$work/target" --layers 0,2 --train-layers 0 --corpus "$work/spoken.txt" \
  --output "$work/draft-digits" --code-digits 2,19 --layout "$work/layout.json" --lr 2e-3 $common | tee "$work/draft-digits.out"
grep -q "acceptance, sum min(p_target, q_draft)" "$work/draft-digits.out"
grep -q '"tie_word_embeddings": true' "$work/draft-digits/config.json"
# The head's output is a setting of the run: resuming as vocabulary heads is refused.
if "$cadenza" train mtp --target "$work/target" --heads 2 --corpus "$work/spoken.txt" \
     --output "$work/mtp-digits.safetensors" --resume $common 2> "$work/digits-resume.err"; then
  echo "a resume without --code-digits was accepted"; exit 1
fi
grep -q "heads_output" "$work/digits-resume.err" || { cat "$work/digits-resume.err"; exit 1; }
if "$cadenza" train mtp --target "$work/target" --heads 2 --corpus "$work/spoken.txt" --output "$work/x.safetensors" \
     --code-digits 2,19 $common 2> "$work/digits.err"; then
  echo "--code-digits without --layout was accepted"; exit 1
fi
grep -q "code-digits needs --layout" "$work/digits.err"
if "$cadenza" train draft --target "$work/target" --layers 0 --train-layers 0 --corpus "$work/spoken.txt" \
     --output "$work/x" --code-digits 4,8 --layout "$work/layout.json" $common 2> "$work/digits.err"; then
  echo "levels that do not make the layout's codes were accepted"; exit 1
fi
grep -q "code-digits 4,8 make 32 codes, .*layout.json has 38" "$work/digits.err" || { cat "$work/digits.err"; exit 1; }

# A malformed corpus names its file and line; exit code 1.
printf '1 2 3\n4 x5 6\n' > "$work/bad.txt"
set +e
"$cadenza" train lm --corpus "$work/bad.txt" --config "$work/config.json" --output "$work/bad" $common 2> "$work/bad.err"
code=$?
set -e
test "$code" -eq 1
grep -q "bad.txt:2: malformed token 'x5'" "$work/bad.err"
echo "train pipeline: ok"
