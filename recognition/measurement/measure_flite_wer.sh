#!/bin/sh
# The measurement of docs/recognition.md: the sentences of
# fortune_sentences.txt spoken by flite's voices, written with a corpus
# manifest (split test) into OUTPUT_DIR, then scored by `cadenza wer`.
#
#   recognition/measurement/measure_flite_wer.sh build/bin/cadenza /tmp/flite_wer [cadenza wer options...]
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 CADENZA OUTPUT_DIR [cadenza wer options...]" >&2
    exit 1
fi
cadenza=$1
output=$2
shift 2
sentences=$(dirname "$0")/fortune_sentences.txt
command -v flite >/dev/null || { echo "$0: flite is not installed (apt-get install flite)" >&2; exit 1; }

mkdir -p "$output/audio"
manifest=$output/manifest.tsv
printf 'id\tsplit\tvoice\tvariation\tduration_s\tpath\ttext\n' > "$manifest.partial"
number=0
while IFS= read -r text; do
    [ -n "$text" ] || continue
    number=$((number + 1))
    for voice in slt rms awb kal16; do
        id=$(printf 'fortune%02d-%s' "$number" "$voice")
        file=audio/$id.wav
        flite -voice "$voice" -t "$text" -o "$output/$file"
        # 16-bit mono WAV with a 44-byte header: the rate is at byte 24.
        bytes=$(wc -c < "$output/$file")
        rate=$(od -An -t u4 -j 24 -N 4 "$output/$file" | tr -d ' ')
        duration=$(awk -v b="$bytes" -v r="$rate" 'BEGIN { printf "%.3f", (b - 44) / (2 * r) }')
        printf '%s\ttest\tflite.%s\tdefault\t%s\t%s\t%s\n' "$id" "$voice" "$duration" "$file" "$text" >> "$manifest.partial"
    done
done < "$sentences"
mv "$manifest.partial" "$manifest"
exec "$cadenza" wer --manifest "$manifest" --split test --by-voice "$@"
