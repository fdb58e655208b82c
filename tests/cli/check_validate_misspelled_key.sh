#!/bin/sh
# `cadenza validate` on a misspelled key exits 1 and names file:line:column.
set -u
cadenza="$1"
pipeline="$2"
output=$("$cadenza" validate "$pipeline" 2>&1)
status=$?
echo "$output"
[ "$status" -eq 1 ] || { echo "expected exit code 1, got $status"; exit 1; }
echo "$output" | grep -q "misspelled_key.toml:8:1: unknown key 'lowercse' in \[frontend\] for 'frontend.chars' (did you mean 'lowercase'?)" \
    || { echo "expected the position and a suggestion"; exit 1; }
