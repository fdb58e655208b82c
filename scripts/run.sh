#!/usr/bin/env bash
# Sets everything up, then runs cadenza's main job: the environment report,
# every plugin found, every shipped pipeline resolved and validated, and the
# shipped English model speaking one sentence through pipelines/default.toml
# (build/hello.wav), with pocketsphinx's transcription of what it said.
#   scripts/run.sh ["TEXT TO SPEAK"]
set -euo pipefail
cd "$(dirname "$0")/.."
text=${1:-"the quick brown fox jumps over the lazy dog"}
scripts/setup.sh
build/bin/cadenza doctor
build/bin/cadenza plugins
build/bin/cadenza validate pipelines/*.toml
build/bin/cadenza synth -p pipelines/default.toml -t "$text" -o build/hello.wav
build/bin/cadenza transcribe build/hello.wav
