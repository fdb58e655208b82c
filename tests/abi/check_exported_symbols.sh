#!/bin/sh
# Fails if the shared library exports any dynamic symbol not starting with cdz_.
set -eu
library="$1"
symbols=$(nm -D --defined-only "$library" | awk '{print $3}')
[ -n "$symbols" ] || { echo "no exported symbols found in $library"; exit 1; }
others=$(printf '%s\n' "$symbols" | grep -v '^cdz_' || true)
if [ -n "$others" ]; then
    echo "$library exports symbols outside the cdz_ prefix:"
    printf '%s\n' "$others"
    exit 1
fi
echo "$library exports $(printf '%s\n' "$symbols" | wc -l) symbols, all cdz_"
