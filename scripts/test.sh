#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite, then builds without
# LibTorch and runs that build's tests (scripts/test_without_torch.sh), then the programs of the
# suite that need no LibTorch again under AddressSanitizer +
# UndefinedBehaviorSanitizer (scripts/sanitize.sh), then replays the fuzz
# targets' seed corpora and fuzzes each briefly (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
(cd build && ctest --output-on-failure -j "$(nproc)" --timeout 600)
scripts/test_without_torch.sh
scripts/sanitize.sh
scripts/fuzz.sh "${CADENZA_FUZZ_SECONDS:-20}"
