#!/usr/bin/env bash
# `cadenza bench --suite speech` end to end on the test doubles: a tiny corpus
# spoken by flite, voice prompts as `cadenza corpus tts` writes them, two
# pipelines; the table, JSON, CSV and PNG are checked, then bad input.
#   check_speech_bench.sh CADENZA_BINARY SOURCE_DIR   (CADENZA_PLUGIN_PATH: the test doubles)
set -euo pipefail
cadenza=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

mkdir wav
speak() { flite -voice slt -t "$2" -o "wav/$1.wav"; }
speak a "the cat sat on the mat"
speak b "a bird in the hand"
speak c "time flies like an arrow"
speak d "all is well that ends well"
{
  printf 'id\tsplit\tvoice\tvariation\tduration_s\tpath\ttext\n'
  printf 'a\ttest\tflite.slt\tr1.00-p1.00\t1.5\twav/a.wav\tthe cat sat on the mat\n'
  printf 'b\ttest\tflite.slt\tr1.00-p1.00\t1.2\twav/b.wav\ta bird in the hand\n'
  printf 'c\ttest\tflite.slt\tr1.00-p1.00\t1.4\twav/c.wav\ttime flies like an arrow\n'
  printf 'd\ttrain\tflite.slt\tr1.00-p1.00\t1.5\twav/d.wav\tall is well that ends well\n'
} > manifest.tsv
# c has no voice prompt and d is of another split: both are left out.
printf 'id\tprompt_id\tprompt_begin_frame\tprompt_frames\nd\ta\t0\t20\na\tb\t0\t40\nc\tc\t0\t0\nb\ta\t10\t30\n' > prompts.tsv

# Short utterances (end_after) and light weights keep the run quick.
for kind in plain chain; do
  {
    printf '[pipeline]\nname = "%s"\nseed = 1\nmax_audio_seconds = 2.0\n' "$kind"
    printf '[frontend]\nplugin = "frontend.chars"\nvocabulary = "%s/models/frontend/english_chars.vocab"\n' "$source_dir"
    printf '[codec]\nplugin = "test.tone_codec"\n'
    printf '[backbone]\nplugin = "test.markov_backbone"\nend_after = 60\nweight_megabytes = 4.0\n'
    if [ "$kind" = chain ]; then
      printf '[draft]\nplugin = "test.markov_drafter"\nend_after = 60\nnoise = 0.7\ndepth = 3\n'
      printf '[acceptor]\nplugin = "acceptor.exact"\n'
    fi
  } > "$kind.toml"
done

common=(-p plain.toml -p chain.toml --manifest manifest.tsv --prompts prompts.tsv --repeats 2 --jobs 2)
"$cadenza" bench --suite speech "${common[@]}" --json out.json --csv out.csv --plot out.png > table.txt 2> progress.txt
cat table.txt

fail() { echo "check_speech_bench: $*" >&2; exit 1; }
grep -q "2 sentence(s) of split test" table.txt || fail "the heading does not count 2 sentences"
grep -q "1 utterance(s) without a voice prompt skipped" table.txt || fail "the skipped utterance is not reported"
grep -Eq "^original audio \(the reference\): WER [0-9.]+ %" table.txt || fail "no reference WER"
grep -Eq "^the recordings through the first pipeline's codec: WER [0-9.]+ %" table.txt || fail "no resynthesis WER"
grep -q "dWER codec pt" table.txt || fail "no column of WER over the resynthesis"
grep -q "WER %" table.txt && grep -q "TTFA ms" table.txt && grep -q "RTF aud/s" table.txt || fail "missing columns"
grep -Eq "^plain +[0-9]+ +[0-9.]+ +1.00x +1.00 " table.txt || fail "the baseline row is wrong"
grep -Eq "^chain +[0-9]+ " table.txt || fail "no row for chain"
grep -q "\[2/2\] chain: sentence 2/2" progress.txt || fail "no progress"

for field in '"suite": "speech"' '"sentence_count": 2' '"skipped_without_prompt": 1' '"original_audio"' \
             '"wer_percent"' '"cer_percent"' '"wer_delta_points"' '"ttfa_ms"' '"ceiling"' '"realized"' \
             '"original_hypothesis"' '"prompt_id": "b"' '"codec_resynthesis"' '"resynthesis_hypothesis"'; do
  grep -q "$field" out.json || fail "the JSON lacks $field"
done
[ "$(grep -c '"speedup"' out.json)" -eq 2 ] || fail "the JSON does not hold two pipelines"

[ "$(wc -l < out.csv)" -eq 3 ] || fail "the CSV should have a header and two rows"
header=$(head -1 out.csv)
for column in pipeline tokens_per_second speedup mean_accepted_length real_time_factor_audio_s_per_wall_s ceiling \
              realized_fraction ttfa_ms wer_percent cer_percent original_wer_percent \
              resynthesis_wer_percent; do
  echo ",$header," | grep -q ",$column," || fail "the CSV lacks the column $column"
done
columns=$(awk -F, 'NR == 1 { print NF }' out.csv)
awk -F, -v n="$columns" 'NF != n { exit 1 }' out.csv || fail "CSV rows do not have $columns fields"
grep -q '^plain,plain.toml,' out.csv && grep -q '^chain,chain.toml,' out.csv || fail "the CSV rows are not the pipelines"

[ "$(head -c 4 out.png | tail -c 3)" = PNG ] || fail "out.png is not a PNG"

# Bad input: each refused with exit code 1 and a message saying where.
refused() {  # refused EXPECTED_MESSAGE ARGS...
  local expected=$1
  shift
  local status=0
  "$cadenza" bench "$@" > refused.out 2> refused.err || status=$?
  [ "$status" -eq 1 ] || fail "exit code $status, not 1, for: $* ($(cat refused.err))"
  grep -qF -- "$expected" refused.err || fail "expected '$expected' for: $*; got: $(cat refused.err)"
}
refused "needs --prompts" --suite speech -p plain.toml --manifest manifest.tsv
refused "needs --manifest" --suite speech -p plain.toml --prompts prompts.tsv
refused "unknown suite 'singing'" --suite singing -p plain.toml --manifest manifest.tsv --prompts prompts.tsv
refused "--texts is not used by --suite speech" --suite speech "${common[@]}" --texts prompts.tsv
refused "--manifest belongs to --suite speech" -p plain.toml --texts prompts.tsv --manifest manifest.tsv
refused "bench needs --texts" -p plain.toml

printf 'id\tprompt_id\tprompt_begin_frame\tprompt_frames\na\tb\t0\t40\nb\tnobody\t0\t40\n' > unknown.tsv
refused "unknown.tsv:3: prompt utterance 'nobody' is not in manifest.tsv" \
  --suite speech -p plain.toml --manifest manifest.tsv --prompts unknown.tsv
printf 'id\tprompt_id\tprompt_begin_frame\tprompt_frames\na\tb\t0\n' > short.tsv
refused "short.tsv:2: expected 4 tab-separated fields" --suite speech -p plain.toml --manifest manifest.tsv --prompts short.tsv
printf 'id\tprompt_id\tprompt_begin_frame\tprompt_frames\na\tb\t5000\t40\n' > beyond.tsv
refused "beyond.tsv:2: frames [5000, 5040) exceed" --suite speech -p plain.toml --manifest manifest.tsv --prompts beyond.tsv
sed 's#wav/b.wav#wav/missing.wav#' manifest.tsv > missing.tsv
refused "prompts.tsv:3: the audio of prompt utterance 'b' (missing.tsv:3) is missing" \
  --suite speech -p plain.toml --manifest missing.tsv --prompts prompts.tsv
refused "/nonexistent" --suite speech "${common[@]}" --model /nonexistent/en-us
status=0
PATH=/nonexistent "$cadenza" bench --suite speech "${common[@]}" --plot x.png > refused.out 2> refused.err || status=$?
[ "$status" -eq 1 ] && grep -q "install the Debian package gnuplot-nox" refused.err || fail "no gnuplot: $(cat refused.err)"
echo "speech bench: ok"
