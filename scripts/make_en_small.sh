#!/usr/bin/env bash
# Regenerates models/en-small/ from Debian's packages alone: the speech corpus
# (fortunes spoken by flite and festival voices), the mel-FSQ codec and its
# quality gate, the token corpus, the TTS target and its gate, then (once the
# target passes its gate) the target's own samples, drafts and calibration.
#
#   scripts/make_en_small.sh [STAGE...]     stages: corpus codec codec-gate tokens target
#                                           target-gate sampled drafts calibration
#                                           (default: all, in that order)
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
# --resume when a run left its training state FILE: resumable FILE
resumable() { [ -f "$1" ] && echo --resume; true; }
# A number or flag of the target's token layout (tokens stage): layout_value KEY
layout_value() { sed -n "s/.*\"$1\": *\([0-9a-z]*\).*/\1/p" "$work/tokens-phones/layout.json"; }
# The [frontend] and [codec] tables of every pipeline file made here.
phones_and_codec_tables() {
  cat <<TOML
[frontend]
plugin = "frontend.flite"
vocabulary = "$root/models/frontend/cmu_phones.vocab"
[codec]
plugin = "codec.mel_fsq"
model = "$models/codec.safetensors"
TOML
}

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(corpus codec codec-gate tokens target target-gate sampled drafts calibration)

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
      # The target's token corpus: the text is the CMU phones each voice
      # spoke (the corpus's .phones alignments, through frontend.flite's
      # vocabulary), each phone also marked among the shipped codec's codes
      # where it begins (ELLA-V; docs/en-small.md). 58 text slots, codes
      # 58-8249, start 8250, end 8251.
      { printf '[pipeline]\nname = "en-small-codec-phones"\n'; phones_and_codec_tables; } > "$work/en-small-codec-phones.toml"
      if [ ! -f "$work/tokens-phones/.done" ]; then
        run corpus tts --pipeline "$work/en-small-codec-phones.toml" --manifest "$work/corpus/manifest.tsv" \
          --output "$work/tokens-phones" --prompt-seconds 3 --seed 1 --phone-markers --text-slots 58
        touch "$work/tokens-phones/.done"
      fi
      cp "$work/tokens-phones/layout.json" "$models/layout.json"
      # The shipped pipelines' default voice: a 2.8 s train utterance of flite rms.
      mkdir -p "$models/voices"
      cp "$work/corpus/wav/flite.rms/s0021dd36e319-flite_rms-r0.97-p0.93.wav" "$models/voices/rms.wav"
      ;;
    target)
      # The target: a LLaMA of width 256 (docs/en-small.md says why) trained
      # on the phone-marker tokens of the train split,
      # [phones][start][voice prompt][start] | [codes and phone markers][end],
      # with heads 0 of layers 1-3 guided along the text diagonal and code
      # embeddings on the codec's FSQ grid. It trains in schedules that each
      # fit in a 3-hour session; after each, its weights go to
      # models/en-small/target (committed: a later session may start on a
      # fresh machine) and the schedule is appended to its
      # phases.txt, so that each schedule runs once and the next one starts
      # from there.
      vocab=$(layout_value vocab_size)
      cat > "$work/target-config.json" <<JSON
{"architectures": ["LlamaForCausalLM"], "model_type": "llama",
 "vocab_size": $vocab, "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 6,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "max_position_embeddings": 1024,
 "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": true, "hidden_act": "silu"}
JSON
      target_dir="$models/target"
      target_schedule() {  # target_schedule NAME TRAIN_LM_OPTIONS...
        grep -q "^$1:" "$target_dir/phases.txt" 2>/dev/null && return 0
        local name=$1
        shift
        run train lm --corpus "$work/tokens-phones/train.tokens" --output "$work/$name" \
          --guided-attention 1,2,3 --layout "$work/tokens-phones/layout.json" --code-digits 8,8,8,4,4 \
          --batch 8 --seq-len 768 --length-buckets --checkpoint-every 50 --threads "$jobs" "$@" \
          $(resumable "$work/$name/training_state.safetensors")
        mkdir -p "$target_dir"
        cp "$work/$name/config.json" "$work/$name/model.safetensors" "$target_dir/"
        local options=${*//"$work/"/}
        echo "$name: train lm ${options//"$root/"/} (tokens-phones, guide 1,2,3, code digits 8,8,8,4,4, batch 8 x 768, length buckets)" \
          >> "$target_dir/phases.txt"
      }
      # Phase 1, from random weights: 2,000 steps (~1 h 20 min on 2 idle cores).
      target_schedule phase-1 --config "$work/target-config.json" --steps 2000 --lr 1e-3 --warmup 100 --seed 1
      # Phase 2: a second schedule from phase 1 (its loss was still falling),
      # 2,800 steps (~1 h 55 min).
      target_schedule phase-2 --init-from "$target_dir" --steps 2800 --lr 5e-4 --warmup 50 --seed 2
      # Phase 3: the same schedule again from phase 2 (46.3% WER, its loss
      # still falling ~0.04 nats per 200 steps at its end).
      target_schedule phase-3 --init-from "$target_dir" --steps 2800 --lr 5e-4 --warmup 50 --seed 3
      ;;
    target-gate)
      # Sampled speech of the first 100 test sentences, each with its own
      # voice prompt and seed, judged by pocketsphinx beside the original
      # recordings and their resynthesis by the codec; the gate: WER at most
      # 8 points above the resynthesis' ("dWER codec pt" <= 8). Sampling at
      # t 0.7 / top-p 0.9, the best of six settings on 100 dev sentences
      # after phase 2 (docs/en-small.md); phases 1 and 2 were gated at 0.5 / 0.8.
      {
        printf '[pipeline]\nname = "target-t0.7-p0.9"\nseed = 1\nmax_audio_seconds = 12\n'
        phones_and_codec_tables
        printf '[backbone]\nplugin = "backbone.llama"\ncheckpoint = "%s"\n' "$models/target"
        for key in text_token_count audio_token_offset audio_token_count audio_start_token end_token phone_markers; do
          echo "$key = $(layout_value $key)"
        done
        cat <<TOML
[sampling]
temperature = 0.7
top_p = 0.9

[logits]
processors = ["phone_markers"]

[logits.phone_markers]
max_phone_seconds = 0.5
TOML
      } > "$work/target-gate.toml"
      run bench --suite speech -p "$work/target-gate.toml" --manifest "$work/corpus/manifest.tsv" \
        --prompts "$work/tokens-phones/test_prompts.tsv" --split test --limit 100 --repeats 3 --jobs "$jobs" \
        --json "$models/target/gate.json"
      ;;
    drafts)
      # The drafts, all trained on the train split with the target frozen and
      # with code-digit output heads (93 logits for a code's 5 digits, the
      # non-code tokens and "a code", instead of 8,252; docs/drafts.md): SSD's
      # shallow draft (the target's layers 0 and 5, both trained, distilled
      # from the target with weight 0.5) in three phases on the corpus (1,000
      # steps, then two 600-step schedules from there, each with new batches
      # on the same held-out split) and a fourth on the target's own samples
      # (below), 8 MTP heads (the 4-head pipeline uses the first 4)
      # and 4 MEDUSA heads, both with the target's own distribution as a soft
      # label with weight 0.5 (it beat the corpus's codes alone at step 200:
      # held-out acceptance 37.5/24.3/17.2% against 37.1/23.9/16.9% at
      # t+2..t+4). Evaluated on 1% of the sequences held out (~190). The
      # threads are part of the recipe: the shipped files were trained with
      # exactly these (LibTorch's sums differ with the thread count), the MTP
      # heads' first 200 steps under a 3,000-step schedule, then to 1,000 (the
      # schedule shortened). 50-100 min each on one core (docs/en-small.md).
      tokens="$work/tokens-phones/train.tokens"
      digits=(--code-digits 8,8,8,4,4 --layout "$work/tokens-phones/layout.json")
      common=(--corpus "$tokens" --batch 8 --seq-len 768 --length-buckets --checkpoint-every 100
              --holdout 0.01 --warmup 50 --no-progress)
      run train draft --target "$models/target" --layers 0,5 --train-layers 0,1 --output "$work/draft-digits" \
        "${digits[@]}" --steps 1000 --lr 1e-3 --seed 1 --threads 1 "${common[@]}" \
        $(resumable "$work/draft-digits/training_state.safetensors")
      run train draft --target "$models/target" --layers 0,5 --train-layers 0,1 --output "$work/draft-digits-2" \
        --init-from "$work/draft-digits" "${digits[@]}" --steps 600 --lr 5e-4 --seed 2 --split-seed 1 --threads 1 \
        "${common[@]}" $(resumable "$work/draft-digits-2/training_state.safetensors")
      run train draft --target "$models/target" --layers 0,5 --train-layers 0,1 --output "$work/draft-digits-3" \
        --init-from "$work/draft-digits-2" "${digits[@]}" --steps 600 --lr 3e-4 --seed 3 --split-seed 1 --threads 1 \
        "${common[@]}" $(resumable "$work/draft-digits-3/training_state.safetensors")
      mtp=(--target "$models/target" --heads 8 --output "$work/mtp8-digits.safetensors" "${digits[@]}"
           --distill-weight 0.5 --lr 1e-3 --seed 1 "${common[@]}")
      if [ ! -f "$work/mtp8-digits.phase1.done" ]; then
        run train mtp "${mtp[@]}" --steps 3000 --stop-after 200 --threads 2 \
          $(resumable "$work/mtp8-digits.training_state.safetensors")
        touch "$work/mtp8-digits.phase1.done"
      fi
      run train mtp "${mtp[@]}" --steps 1000 --threads 1 --resume
      # Self-distillation (needs the sampled stage): the shallow draft's fourth
      # phase trains on the target's own samples of 2,000 train prompts (300
      # steps gained 1.4 points of held-out acceptance on the target's samples,
      # the corpus's codes 0.4: docs/en-small.md), evaluated on its samples of
      # the held-out prompts.
      run train draft --target "$models/target" --layers 0,5 --train-layers 0,1 --output "$work/draft-digits-4" \
        --init-from "$work/draft-digits-3" "${digits[@]}" --corpus "$work/sampled/train.tokens" --batch 8 \
        --seq-len 768 --length-buckets --checkpoint-every 50 --holdout 0.01 --split-seed 1 --seed 4 --steps 300 \
        --lr 3e-4 --warmup 30 --threads 1 --no-progress --eval-corpus "$work/sampled/heldout.tokens" \
        $(resumable "$work/draft-digits-4/training_state.safetensors")
      run train medusa --target "$models/target" --heads 4 --output "$work/medusa4-digits.safetensors" "${digits[@]}" \
        --distill-weight 0.5 --lr 1e-3 --seed 1 --steps 1000 --threads 1 "${common[@]}" \
        $(resumable "$work/medusa4-digits.training_state.safetensors")
      # The recurrent draft (draft.recurrent: a cell on the target's last hidden
      # state that reads each token, docs/drafts.md) on the target's own
      # samples, evaluated on its samples of the held-out prompts every 200
      # steps (the curve in recurrent.heldout.tsv). ~2.5 s per step on one core: 50 min.
      run train recurrent --target "$models/target" --output "$work/recurrent.safetensors" "${digits[@]}" \
        --cell-size 512 --depth 4 --distill-weight 0.5 --corpus "$work/sampled/train.tokens" --batch 8 --seq-len 768 \
        --length-buckets --checkpoint-every 50 --holdout 0.01 --warmup 40 --steps 1200 --lr 1e-3 --seed 4 --split-seed 1 \
        --threads 1 --no-progress --eval-every 200 --eval-corpus "$work/sampled/heldout.tokens" \
        $(resumable "$work/recurrent.training_state.safetensors")
      # Its later phases, each 600 steps from the one before on the target's
      # samples, evaluated every 100 steps (the curves in
      # recurrent-N.heldout.tsv): recurrent_phase N FROM LR SEED CORPUS
      recurrent_phase() {
        run train recurrent --target "$models/target" --output "$work/recurrent-$1.safetensors" "${digits[@]}" \
          --init-from "$work/$2.safetensors" --cell-size 512 --depth 4 --distill-weight 0.5 \
          --corpus "$work/sampled/$5" --batch 8 --seq-len 768 --length-buckets --checkpoint-every 50 \
          --holdout 0.01 --warmup 30 --steps 600 --lr "$3" --seed "$4" --split-seed 1 --threads 1 \
          --no-progress --eval-every 100 --eval-corpus "$work/sampled/heldout.tokens" \
          $(resumable "$work/recurrent-$1.training_state.safetensors")
      }
      # 2: the target's samples of 8,000 train prompts (the first 2,000 and
      # 6,000 more) at half phase 1's peak learning rate: held-out acceptance
      # at t+2 56.4% -> 57.6%. 3 and 4: the same loss further, on the same
      # 8,000, then on 16,000: 58.4%, 58.9%; in the pipeline `default`'s
      # depth-1 acceptance .672 -> .690 (docs/en-small.md, fifteenth part).
      # 1.9-2.4 s per step on one core: 25 + 20 + 20 min.
      recurrent_phase 2 recurrent 5e-4 5 train-8000.tokens
      recurrent_phase 3 recurrent-2 5e-4 6 train-8000.tokens
      recurrent_phase 4 recurrent-3 3e-4 7 train-16000.tokens
      # 5: the cell trained to be scored by the target's output table as well
      # (--table-scoring: draft.recurrent's candidates, recurrent-exact), 2
      # steps deep at the pipeline's sampling, from phase 4 on the target's
      # samples of the first 3,000 train prompts (docs/en-small.md,
      # twenty-sixth part). ~4 s per step on one core: 40 min.
      head -n 3000 "$work/sampled/train-8000.tokens" > "$work/sampled/train-3000.tokens"
      run train recurrent --target "$models/target" --output "$work/recurrent-table.safetensors" "${digits[@]}" \
        --init-from "$work/recurrent-4.safetensors" --cell-size 512 --depth 2 --table-scoring --distill-weight 0.5 \
        --sampling-temperature 0.7 --sampling-top-p 0.9 --corpus "$work/sampled/train-3000.tokens" --batch 8 \
        --seq-len 768 --length-buckets --checkpoint-every 50 --holdout 0.01 --warmup 20 --steps 600 --lr 2e-3 \
        --seed 9 --split-seed 1 --threads 1 --no-progress --eval-every 100 --eval-corpus "$work/sampled/heldout.tokens" \
        $(resumable "$work/recurrent-table.training_state.safetensors")
      # The target's own code-digit head (draft.shallow's digit_head: it picks
      # the candidates of the target as its own int8 draft, int8-exact):
      # every target layer and the final norm frozen, the head alone trained
      # against the target's distribution on the corpus, evaluated every 250
      # steps (the curve in digit-head/heldout.tsv), then copied out of the
      # draft's directory alone (96 KB). ~0.6-1 s per step on one core: 25 min.
      run train draft --target "$models/target" --layers 0,1,2,3,4,5 --train-layers none --output "$work/digit-head" \
        "${digits[@]}" --corpus "$tokens" --batch 16 --seq-len 256 --length-buckets --distill-weight 1 --lr 3e-3 \
        --warmup 50 --steps 1500 --seed 1 --threads 1 --checkpoint-every 250 --eval-every 250 --no-progress \
        $(resumable "$work/digit-head/training_state.safetensors")
      run model digit-head --target "$models/target" --from "$work/digit-head" \
        --output "$models/target-digit-head.safetensors" --force
      mkdir -p "$models/draft"
      cp "$work/recurrent-4.safetensors" "$models/recurrent.safetensors"
      cp "$work/recurrent-table.safetensors" "$models/recurrent-table.safetensors"
      cp "$work/draft-digits-4/config.json" "$work/draft-digits-4/model.safetensors" "$models/draft/"
      cp "$work/mtp8-digits.safetensors" "$models/mtp8.safetensors"
      cp "$work/medusa4-digits.safetensors" "$models/medusa4.safetensors"
      ;;
    sampled)
      # Sequences the target sampled itself (plain decoding, pipelines/ar.toml,
      # one seed per sequence), continuing the prompts of the token corpus:
      # the held-out prompts (the drafts' 1% split) to evaluate drafts on what
      # the target says, and the first 2,000 and 8,000 train prompts for
      # self-distillation (docs/en-small.md). Resumable; 5-8 sequences/s on one
      # core (the 8,000: 27 min).
      mkdir -p "$work/sampled"
      sampled=(--pipeline pipelines/ar.toml --corpus "$work/tokens-phones/train.tokens" --holdout 0.01 --split-seed 1)
      run corpus sampled "${sampled[@]}" --part heldout --seed 1000001 --output "$work/sampled/heldout.tokens"
      run corpus sampled "${sampled[@]}" --part train --seed 1 --limit 2000 --output "$work/sampled/train.tokens"
      # 6,000 more for the recurrent draft's second phase: the first 2,000
      # lines are train.tokens' (sequence i has seed 1 + i), the file resumes.
      [ -f "$work/sampled/train-8000.tokens" ] || cp "$work/sampled/train.tokens" "$work/sampled/train-8000.tokens"
      run corpus sampled "${sampled[@]}" --part train --seed 1 --limit 8000 --output "$work/sampled/train-8000.tokens"
      # And 8,000 more for its fourth phase (the first 8,000 lines are
      # train-8000.tokens'; 17 min).
      [ -f "$work/sampled/train-16000.tokens" ] || cp "$work/sampled/train-8000.tokens" "$work/sampled/train-16000.tokens"
      run corpus sampled "${sampled[@]}" --part train --seed 1 --limit 16000 --output "$work/sampled/train-16000.tokens"
      ;;
    calibration)
      # MEDUSA's tree from the heads' top-k accuracy on the dev split, cut where
      # expected tokens per measured step cost peak (build-tree's default
      # objective; the cut depends on this machine's costs); Viterbi's
      # transitions (code bigrams of the train split); PCG's groups.
      run build-tree --target "$models/target" --heads "$models/medusa4.safetensors" --corpus "$work/tokens-phones/dev.tokens" \
        --output "$models/medusa4.choices.txt" --budget 64 --top-k 10 --threads "$jobs"
      sed 's/.*|//' "$work/tokens-phones/train.tokens" > "$work/train-targets.txt"
      vocab=$(layout_value vocab_size)
      run build-transitions --corpus "$work/train-targets.txt" --vocab "$vocab" --alpha 0.1 --output "$models/transitions.cdztrn"
      # The code embeddings lie on the codec's FSQ grid (--code-digits), so that
      # codes sharing most digits are close: at theta 0.3-0.5 a group holds
      # 4,000-7,000 of the 8,192 codes (124-206 MiB files); at 0.7 a mean of
      # 738 (pcg-wide.toml), at 0.75 a mean of 383 (pcg.toml).
      for theta in 0.7 0.75; do
        run build-groups --embeddings "$models/target" --tensor model.embed_tokens.weight --rows 58:8250 \
          --theta "$theta" --vocab-size "$vocab" --output "$models/groups-$theta.cdzgrp" --quiet
      done
      ;;
    *)
      echo "make_en_small: unknown stage '$stage' (corpus, codec, codec-gate, tokens, target, target-gate, drafts, sampled, calibration)" >&2
      exit 1
      ;;
  esac
done
