#!/bin/sh
# In a build without LibTorch, `cadenza train` (and every command of
# cadenza-torch) ends with exit code 1 and says why, and `cadenza doctor`
# still reports the plugin path.
set -u
cadenza="$1"
for command in train build-tree codec target model; do
    output=$("$cadenza" "$command" --help 2>&1)
    code=$?
    [ $code -eq 1 ] || { echo "cadenza $command: exit code $code, expected 1"; echo "$output"; exit 1; }
    echo "$output" | grep -q "CADENZA_WITH_TORCH=OFF" || { echo "cadenza $command does not say why:"; echo "$output"; exit 1; }
done
output=$("$cadenza" doctor 2>&1) || { echo "$output"; exit 1; }
echo "$output"
echo "$output" | grep -q "^LibTorch       none" || { echo "doctor does not say LibTorch is absent"; exit 1; }
echo "$output" | grep -q "^plugin path" || { echo "doctor does not report the plugin path"; exit 1; }
"$cadenza" --help | grep -q "train" || { echo "cadenza --help does not list train"; exit 1; }
exit 0
