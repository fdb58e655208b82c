#!/usr/bin/env bash
# The shipped English model end to end, as the README runs it:
#  1. `cadenza synth` with pipelines/default.toml writes a WAV that
#     pocketsphinx transcribes close to the text (half of its words at least);
#  2. the same seed gives the same file, bit for bit;
#  3. the speech bench runs every shipped pipeline on a handful of freshly
#     spoken test sentences and writes its JSON, CSV and plot; plain decoding
#     must stay within 30 WER points of the original audio (a sanity bound on
#     5 sentences; the gate itself is measured on 100, docs/en-small.md).
#   check_shipped_model.sh CADENZA_BINARY SOURCE_DIR
set -euo pipefail
cadenza=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

text="the quick brown fox jumps over the lazy dog"
"$cadenza" synth -p "$source_dir/pipelines/default.toml" -t "$text" -o first.wav --seed 7 | tee synth.log
grep -q "tokens" synth.log
"$cadenza" synth -p "$source_dir/pipelines/default.toml" -t "$text" -o second.wav --seed 7 > /dev/null
cmp first.wav second.wav
"$cadenza" transcribe first.wav | tee transcript.txt
heard=$(cut -f2- transcript.txt | tr 'A-Z' 'a-z')
found=0
for word in $text; do
  case " $heard " in *" $word "*) found=$((found + 1)) ;; esac
done
echo "pocketsphinx heard $found of 9 words: $heard"
[ "$found" -ge 5 ]

# Six fortunes sentences spoken by flite rms; each is prompted by the next one's first 3 s.
"$cadenza" corpus speech --output corpus --limit-sentences 6 --voices flite.rms --variations 1 \
  --train-hours 0.01 --jobs 2 > corpus.log
awk -F'\t' 'BEGIN { n = 0 } NR > 1 && $2 == "test" { id[n] = $1; frames[n] = int($5 * 50); n++ }
  END { print "id\tprompt_id\tprompt_begin_frame\tprompt_frames"
        for (i = 0; i < n; i++) { j = (i + 1) % n; f = frames[j] < 150 ? frames[j] : 150
                                   print id[i] "\t" id[j] "\t0\t" f } }' corpus/manifest.tsv > prompts.tsv
pipelines=()
for name in ar sd-exact mtp-exact recurrent-exact int8-exact ssd-bias pcg pcg-wide vadusa vadusa-medusa mtp-viterbi mtp-viterbi-4 default; do
  [ -f "$source_dir/pipelines/$name.toml" ] && pipelines+=(-p "$source_dir/pipelines/$name.toml")
done
"$cadenza" bench --suite speech "${pipelines[@]}" --manifest corpus/manifest.tsv --prompts prompts.tsv \
  --limit 5 --repeats 3 --json bench.json --csv bench.csv --plot bench.png | tee bench.txt
head -c 8 bench.png | od -An -c | grep -q "P   N   G"
[ "$(wc -l < bench.csv)" -eq $((${#pipelines[@]} / 2 + 1)) ]
# Plain decoding (the first row) within 30 WER points of the original audio.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "wer_delta_points") c = i }
         NR == 2 { delta = $c; printf "plain decoding: %+.1f WER points over the original audio\n", delta }
         END { exit !(c > 0 && delta != "" && delta + 0 <= 30) }' bench.csv
