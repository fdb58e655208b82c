#!/usr/bin/env bash
# Regenerates models/en-small/ from Debian's packages alone: the speech corpus
# (fortunes spoken by flite and festival voices), the mel-FSQ codec and its
# quality gate, then the token corpora for the TTS target.
#
#   scripts/make_en_small.sh [STAGE...]     stages: corpus codec codec-gate tokens
#                                           (default: all, in that order)
#
# Work files (audio, checkpoints) go to $CADENZA_WORK (default build/en-small-work);
# every stage resumes from what is already there, so an interrupted run loses
# little. Shipped files are written into models/en-small/. Needs a built tree
# (scripts/setup.sh). Wall times on 2 cores are in models/en-small/README.md.
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
[ ${#stages[@]} -eq 0 ] && stages=(corpus codec codec-gate tokens)

for stage in "${stages[@]}"; do
  case "$stage" in
    corpus)
      # 10 hours of training audio; resumable (existing WAV files are kept).
      run corpus speech --output "$work/corpus" --train-hours 10 --jobs "$jobs" --seed 1
      ;;
    codec)
      # ~1,536 frames (31 s of audio) per step; 1,400 steps are ~30 min on 2 cores.
      resume=()
      [ -f "$work/codec/training_state.safetensors" ] && resume=(--resume)
      run train codec --manifest "$work/corpus/manifest.tsv" --output "$work/codec" \
        --steps 1400 --batch 16 --seq-len 96 --lr 2e-3 --warmup 100 --seed 1 \
        --checkpoint-every 100 --threads "$jobs" "${resume[@]}"
      cp "$work/codec/codec.safetensors" "$models/codec.safetensors"
      ;;
    codec-gate)
      run codec evaluate --model "$models/codec.safetensors" --manifest "$work/corpus/manifest.tsv" \
        --split test --limit 150 --jobs "$jobs" --json "$models/codec_gate.json"
      ;;
    tokens)
      # The frontend and codec of the model: IPA phonemes from espeak-ng, the mel-FSQ codec.
      cat > "$work/en-small-codec.toml" <<TOML
[pipeline]
name = "en-small-codec"
[frontend]
plugin = "frontend.espeak"
vocabulary = "$root/models/frontend/ipa.vocab"
voice = "en-us"
[codec]
plugin = "codec.mel_fsq"
model = "$models/codec.safetensors"
TOML
      run corpus tts --pipeline "$work/en-small-codec.toml" --manifest "$work/corpus/manifest.tsv" \
        --output "$work/tokens" --prompt-seconds 3 --seed 1
      cp "$work/tokens/layout.json" "$models/layout.json"
      ;;
    *)
      echo "make_en_small: unknown stage '$stage' (corpus, codec, codec-gate, tokens)" >&2
      exit 1
      ;;
  esac
done
