#!/usr/bin/env bash
# Regenerates models/en-small/ from Debian's packages alone: the speech corpus
# (fortunes spoken by flite and festival voices), the mel-FSQ codec and its
# quality gate, the token corpora, the TTS target and its gate, then (once the
# target passes: commit models/en-small/target only then) drafts and calibration.
#
#   scripts/make_en_small.sh [STAGE...]     stages: corpus codec codec-gate tokens target
#                                           target-gate (default: these, in that order),
#                                           drafts calibration (once the target passes
#                                           its gate: they read models/en-small/target)
#
# Work files (audio, checkpoints) go to $CADENZA_WORK (default build/en-small-work);
# every stage resumes from what is already there, so an interrupted run loses
# little. Shipped files are written into models/en-small/. Needs a built tree
# (scripts/setup.sh). Wall times on 2 cores are in docs/en-small.md. Do not
# edit this file while it runs: bash reads it as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(realpath -m "${CADENZA_WORK:-build/en-small-work}")
models="$root/models/en-small"
cadenza="${CADENZA:-$root/build/bin/cadenza}"
jobs=$(nproc)
mkdir -p "$work" "$models"
TIMEFORMAT='  (%R s wall)'
run() { echo "+ cadenza $*" >&2; time "$cadenza" "$@"; }

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(corpus codec codec-gate tokens target target-gate)

for stage in "${stages[@]}"; do
  case "$stage" in
    corpus)
      # 10 hours of training audio (the first codec and target phases use
      # them: manifest-10h.tsv), then extended to 20 h (new sentences; dev and
      # test unchanged). Every WAV comes with its phone alignment (.phones).
      # Resumable: existing WAV files with their alignments are kept.
      if [ ! -f "$work/corpus/manifest-10h.tsv" ]; then
        run corpus speech --output "$work/corpus" --train-hours 10 --jobs "$jobs" --seed 1
        cp "$work/corpus/manifest.tsv" "$work/corpus/manifest-10h.tsv"
      fi
      run corpus speech --output "$work/corpus" --train-hours 20 --jobs "$jobs" --seed 1
      ;;
    codec)
      # The base codec on the 10 h: 3,072 frames (61 s of audio) per step,
      # ~6,600 frames/s on 2 idle cores: 3,600 steps (~6 passes) take ~28 min;
      # then the cosine's tail restarts for 1,400 more steps (~11 min).
      codec_train() {
        run train codec --manifest "$work/corpus/manifest-10h.tsv" --output "$work/codec" \
          --batch 32 --seq-len 96 --lr 2e-3 --warmup 200 --seed 1 --checkpoint-every 200 --threads "$jobs" "$@"
      }
      resumable() { [ -f "$1" ] && echo --resume; true; }
      if [ ! -f "$work/codec/.first-run-done" ]; then
        codec_train --steps 3600 $(resumable "$work/codec/training_state.safetensors")
        touch "$work/codec/.first-run-done"
      fi
      if [ ! -f "$work/codec/.done" ]; then
        codec_train --steps 5000 --resume
        touch "$work/codec/.done"
      fi
      # Its codes jitter from frame to frame, which a TTS target cannot learn
      # (docs/en-small.md); two fine-tunes with a penalty on the latent's change
      # between frames make them 2.2x steadier at the same quality: weight 0.05
      # for 1,000 steps on the 10 h, then 0.04 for 1,200 steps on the 20 h.
      smooth=(--batch 32 --seq-len 96 --warmup 50 --checkpoint-every 200 --threads "$jobs")
      if [ ! -f "$work/codec-smooth1/.done" ]; then
        run train codec --manifest "$work/corpus/manifest-10h.tsv" --output "$work/codec-smooth1" \
          --init-from "$work/codec/codec.safetensors" --latent-smoothness 0.05 --steps 1000 --lr 5e-4 --seed 1 \
          "${smooth[@]}" $(resumable "$work/codec-smooth1/training_state.safetensors")
        touch "$work/codec-smooth1/.done"
      fi
      if [ ! -f "$work/codec-smooth/.done" ]; then
        run train codec --manifest "$work/corpus/manifest.tsv" --output "$work/codec-smooth" \
          --init-from "$work/codec-smooth1/codec.safetensors" --latent-smoothness 0.04 --steps 1200 --lr 3e-4 --seed 0 \
          "${smooth[@]}" $(resumable "$work/codec-smooth/training_state.safetensors")
        touch "$work/codec-smooth/.done"
      fi
      cp "$work/codec-smooth/codec.safetensors" "$models/codec.safetensors"
      ;;
    codec-gate)
      run codec evaluate --model "$models/codec.safetensors" --manifest "$work/corpus/manifest.tsv" \
        --split test --limit 150 --jobs "$jobs" --json "$models/codec_gate.json"
      ;;
    tokens)
      # Token corpora: a frontend (IPA phonemes from espeak-ng; CMU phones) and a codec.
      # The target's first phases learned on the base codec's codes of the 10 h
      # (tokens-base) and on the first smoothed codec's (tokens-smooth1); the
      # shipped codec's codes of the 20 h (tokens) are the target's last phase
      # and what drafts and calibration learn from.
      codec_pipeline() {  # codec_pipeline NAME CODEC: a pipeline file with the frontend and that codec
        cat > "$work/$1.toml" <<TOML
[pipeline]
name = "$1"
[frontend]
plugin = "frontend.espeak"
vocabulary = "$root/models/frontend/ipa.vocab"
voice = "en-us"
[codec]
plugin = "codec.mel_fsq"
model = "$2"
TOML
      }
      tokens_of() {  # tokens_of OUTPUT PIPELINE MANIFEST
        [ -f "$work/$1/.done" ] && return 0
        run corpus tts --pipeline "$work/$2.toml" --manifest "$work/corpus/$3" --output "$work/$1" \
          --prompt-seconds 3 --seed 1
        touch "$work/$1/.done"
      }
      codec_pipeline codec-base "$work/codec/codec.safetensors"
      codec_pipeline codec-smooth1 "$work/codec-smooth1/codec.safetensors"
      codec_pipeline en-small-codec "$models/codec.safetensors"
      tokens_of tokens-base codec-base manifest-10h.tsv
      tokens_of tokens-smooth1 codec-smooth1 manifest-10h.tsv
      tokens_of tokens en-small-codec manifest.tsv
      # The phase-6 target's: the phones each voice spoke (the corpus's .phones
      # alignments, through frontend.flite's vocabulary), also marked among
      # the codes where each phone begins; 58 text slots keep the code ids of
      # the earlier layout, so that phase 6 continues from phase 5.
      cat > "$work/en-small-codec-phones.toml" <<TOML
[pipeline]
name = "en-small-codec-phones"
[frontend]
plugin = "frontend.flite"
vocabulary = "$root/models/frontend/cmu_phones.vocab"
[codec]
plugin = "codec.mel_fsq"
model = "$models/codec.safetensors"
TOML
      if [ ! -f "$work/tokens-phones/.done" ]; then
        run corpus tts --pipeline "$work/en-small-codec-phones.toml" --manifest "$work/corpus/manifest.tsv" \
          --output "$work/tokens-phones" --prompt-seconds 3 --seed 1 --phone-markers --text-slots 58
        touch "$work/tokens-phones/.done"
      fi
      cp "$work/tokens/layout.json" "$models/layout.json"
      # The shipped pipelines' default voice: a 2.8 s train utterance of flite rms.
      mkdir -p "$models/voices"
      cp "$work/corpus/wav/flite.rms/s0021dd36e319-flite_rms-r0.97-p0.93.wav" "$models/voices/rms.wav"
      ;;
    target)
      # The target: 6 layers of width 256 (docs/en-small.md says why), trained on
      # the train split's [text][start][voice prompt][start] | [codes][end],
      # in phases, each from the last one's weights (docs/en-small.md has the
      # numbers of each).
      vocab=$(sed -n 's/.*"end_token": *\([0-9]*\).*/\1/p' "$work/tokens/layout.json")
      vocab=$((vocab + 1))
      cat > "$work/target-config.json" <<JSON
{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
 "vocab_size": $vocab, "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 6,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 1024,
 "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": true, "hidden_act": "silu"}
JSON
      resumable() { [ -f "$1" ] && echo --resume; true; }
      # Phase 1 learns codes-follow-codes (loss plateaus near 7.0 nats), not
      # which text is being spoken.
      if [ ! -f "$work/target/.phase-1-done" ]; then
        run train lm --corpus "$work/tokens-base/train.tokens" --config "$work/target-config.json" --output "$work/target" \
          --steps "${TARGET_STEPS:-1700}" --batch 8 --seq-len 768 --length-buckets --lr 1e-3 --warmup 100 --seed 1 \
          --checkpoint-every 50 --threads "$jobs" $(resumable "$work/target/training_state.safetensors")
        touch "$work/target/.phase-1-done"
      fi
      # Phase 2: heads 0 of layers 1-3 guided to read the text along the
      # diagonal (DC-TTS's guided attention, training only); 2,800 steps,
      # then the same run resumed to 3,800 (a longer cosine tail).
      guided=(--guided-attention 1,2,3 --layout "$work/tokens/layout.json")
      common=(--batch 8 --seq-len 768 --length-buckets --checkpoint-every 50 --threads "$jobs")
      for steps in 2800 3800; do
        [ -f "$work/target-guided/.steps-$steps-done" ] && continue
        run train lm --corpus "$work/tokens-base/train.tokens" --init-from "$work/target" --output "$work/target-guided" \
          --steps "$steps" --lr 1e-3 --warmup 100 --seed 2 "${guided[@]}" "${common[@]}" \
          $(resumable "$work/target-guided/training_state.safetensors")
        touch "$work/target-guided/.steps-$steps-done"
      done
      # Phase 3: code embeddings with the codec's FSQ grid (--code-digits), 400 steps.
      digits=(--code-digits 8,8,8,4,4)
      if [ ! -f "$work/target-digits400/.done" ]; then
        run train lm --corpus "$work/tokens-base/train.tokens" --init-from "$work/target-guided" \
          --output "$work/target-digits400" --steps 400 --lr 5e-4 --warmup 50 --seed 3 "${guided[@]}" "${digits[@]}" \
          "${common[@]}" $(resumable "$work/target-digits400/training_state.safetensors")
        touch "$work/target-digits400/.done"
      fi
      # Phase 4: the first smoothed codec's steadier codes (the 10 h), 2,000 steps.
      if [ ! -f "$work/target-smooth/.done" ]; then
        run train lm --corpus "$work/tokens-smooth1/train.tokens" --init-from "$work/target-digits400" \
          --output "$work/target-smooth" --steps 2000 --lr 5e-4 --warmup 50 --seed 4 "${guided[@]}" "${digits[@]}" \
          "${common[@]}" $(resumable "$work/target-smooth/training_state.safetensors")
        touch "$work/target-smooth/.done"
      fi
      # Phase 5: 4 more layers on top (--add-layers: they start as identity),
      # the shipped codec's codes of the 20 h; planned as 3,000 steps, cut at
      # step 621 to a schedule that ends at 2,200 (the remaining session).
      deep() {
        run train lm --corpus "$work/tokens/train.tokens" --init-from "$work/target-smooth" --add-layers 4 \
          --output "$work/target-deep" --lr 5e-4 --warmup 100 --seed 6 "${guided[@]}" "${digits[@]}" "${common[@]}" "$@"
      }
      if [ ! -f "$work/target-deep/.step-621-done" ]; then
        deep --steps 3000 --stop-after 621 $(resumable "$work/target-deep/training_state.safetensors")
        touch "$work/target-deep/.step-621-done"
      fi
      if [ ! -f "$work/target-deep/.done" ]; then
        deep --steps 2200 --resume
        touch "$work/target-deep/.done"
      fi
      # A schedule on the phone-marker tokens: phones_schedule FROM OUTPUT STEPS LR WARMUP SEED.
      phones_schedule() {
        [ -f "$work/$2/.done" ] && return 0
        run train lm --corpus "$work/tokens-phones/train.tokens" --init-from "$work/$1" --output "$work/$2" \
          --steps "$3" --lr "$4" --warmup "$5" --seed "$6" \
          --guided-attention 1,2,3 --layout "$work/tokens-phones/layout.json" "${digits[@]}" "${common[@]}" \
          $(resumable "$work/$2/training_state.safetensors")
        touch "$work/$2/.done"
      }
      # Phase 6: phone markers (ELLA-V): the same model on tokens whose text is
      # the CMU phones each voice spoke, each phone also marked among the codes
      # where it begins; at synthesis the engine makes the markers follow the
      # text (docs/en-small.md).
      phones_schedule target-deep target-phones 2000 5e-4 100 7
      # Phase 7: a second schedule from phase 6's end (its loss was still falling).
      phones_schedule target-phones target-phones2 1800 3e-4 50 8
      mkdir -p "$models/target"
      cp "$work/target-phones2/config.json" "$work/target-phones2/model.safetensors" "$models/target/"
      ;;
    target-gate)
      # Plain decoding of 100 test sentences with their voice prompts, judged
      # by pocketsphinx against the original audio of the same sentences.
      run bench --suite speech -p "$root/pipelines/ar.toml" --manifest "$work/corpus/manifest.tsv" \
        --prompts "$work/tokens-phones/test_prompts.tsv" --limit 100 --repeats 5 --jobs "$jobs" \
        --json "$models/target_gate.json"
      ;;
    drafts)
      # The drafts, all trained on the train split with the target frozen:
      # SSD's shallow draft (2 of the target's 6 layers), MTP heads (8; the
      # 4-head pipeline uses the first 4), MEDUSA heads (4) and their tree.
      tokens="$work/tokens/train.tokens"
      common=(--corpus "$tokens" --batch 8 --seq-len 768 --length-buckets --seed 1 --checkpoint-every 50 --threads "$jobs")
      resumable() { [ -f "$1" ] && echo --resume; true; }
      run train draft --target "$models/target" --layers 0,5 --train-layers 0,1 --output "$work/draft" \
        --steps "${DRAFT_STEPS:-400}" --lr 1e-3 --warmup 50 "${common[@]}" $(resumable "$work/draft/training_state.safetensors")
      run train mtp --target "$models/target" --heads 8 --output "$work/mtp8.safetensors" \
        --steps "${HEAD_STEPS:-400}" --lr 1e-3 --warmup 50 "${common[@]}" $(resumable "$work/mtp8.training_state.safetensors")
      run train medusa --target "$models/target" --heads 4 --output "$work/medusa4.safetensors" \
        --steps "${HEAD_STEPS:-400}" --lr 1e-3 --warmup 50 "${common[@]}" $(resumable "$work/medusa4.training_state.safetensors")
      mkdir -p "$models/draft"
      cp "$work/draft/config.json" "$work/draft/model.safetensors" "$models/draft/"
      cp "$work/mtp8.safetensors" "$models/mtp8.safetensors"
      cp "$work/medusa4.safetensors" "$models/medusa4.safetensors"
      ;;
    calibration)
      # MEDUSA's 64-node tree from the heads' top-k accuracy on the dev split;
      # Viterbi's transitions (code bigrams of the train split); PCG's groups.
      run build-tree --target "$models/target" --heads "$models/medusa4.safetensors" --corpus "$work/tokens/dev.tokens" \
        --output "$models/medusa4.choices.txt" --budget 64 --top-k 10 --threads "$jobs"
      sed 's/.*|//' "$work/tokens/train.tokens" > "$work/train-targets.txt"
      vocab=$(sed -n 's/.*"vocab_size": *\([0-9]*\).*/\1/p' "$work/tokens/layout.json")
      run build-transitions --corpus "$work/train-targets.txt" --vocab "$vocab" --alpha 0.1 --output "$models/transitions.cdztrn"
      for theta in 0.3 0.4 0.5; do
        run build-groups --embeddings "$models/target" --tensor model.embed_tokens.weight --rows 58:8250 \
          --theta "$theta" --vocab-size "$vocab" --output "$models/groups-$theta.cdzgrp" --quiet
      done
      ;;
    *)
      echo "make_en_small: unknown stage '$stage' (corpus, codec, codec-gate, tokens, target, target-gate, drafts, calibration)" >&2
      exit 1
      ;;
  esac
done
