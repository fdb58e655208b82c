#!/bin/sh
# `cadenza plugins` lists the frontends with kind, version and library, and
# `plugins describe` prints a schema.
set -u
cadenza="$1"
output=$("$cadenza" plugins 2>&1) || { echo "$output"; echo "cadenza plugins failed"; exit 1; }
echo "$output"
for name in frontend.chars frontend.espeak; do
    echo "$output" | grep -Eq "^$name +frontend +[0-9.]+ +/.*\.so" || { echo "missing $name"; exit 1; }
done
schema=$("$cadenza" plugins describe frontend.espeak 2>&1) || { echo "$schema"; exit 1; }
echo "$schema"
echo "$schema" | grep -Eq "^voice +string +\"en-us\"" || { echo "describe does not show the voice parameter"; exit 1; }
"$cadenza" plugins describe frontend.nonexistent >/dev/null 2>&1
[ $? -eq 1 ] || { echo "describing an unknown plugin must exit 1"; exit 1; }
