#!/bin/sh
# `cadenza doctor` reports LibTorch, the BLAS in use, threads, CUDA and the
# plugin path; on a machine set up by scripts/setup.sh the BLAS is OpenBLAS.
set -u
cadenza="$1"
output=$("$cadenza" doctor 2>&1) || { echo "$output"; exit 1; }
echo "$output"
for field in "LibTorch" "BLAS" "threads" "CUDA" "plugin path"; do
    echo "$output" | grep -q "^$field" || { echo "doctor does not report $field"; exit 1; }
done
echo "$output" | grep -q "reference BLAS" && { echo "LibTorch runs on the reference BLAS"; exit 1; }
exit 0
