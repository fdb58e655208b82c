#!/bin/sh
# Every pipeline shipped in pipelines/ validates.
set -u
cadenza="$1"
directory="$2"
count=0
for pipeline in "$directory"/*.toml; do
    "$cadenza" validate "$pipeline" || { echo "$pipeline does not validate"; exit 1; }
    count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "no pipelines in $directory"; exit 1; }
echo "$count pipeline(s) valid"
