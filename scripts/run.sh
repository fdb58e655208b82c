#!/usr/bin/env bash
# Sets everything up, then runs cadenza's main job: the environment report,
# every plugin found, and every shipped pipeline resolved and validated.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/bin/cadenza doctor
build/bin/cadenza plugins
build/bin/cadenza validate pipelines/*.toml
