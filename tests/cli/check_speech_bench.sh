#!/usr/bin/env bash
# `cadenza bench --suite speech` end to end on the test doubles: a tiny corpus
# spoken by flite, voice prompts as `cadenza corpus tts` writes them, three
# pipelines, one of which cannot fit one sentence in its positions; the table,
# JSON, CSV and PNG are checked (the failed sentence, the bootstrap
# intervals); then a pipeline with an internal error, then bad input.
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

# Short utterances (end_after) and light weights keep the run quick. "tight"
# is plain decoding with 160 positions: sentence a (24 text tokens, a 40-frame
# prompt, 100 frames at most) needs 168 and fails, b needs 154. "buggy" fails
# with an internal error on the letter c (id 7 of the vocabulary): in a only.
for kind in plain chain tight buggy irreproducible; do
  {
    printf '[pipeline]\nname = "%s"\nseed = 1\nmax_audio_seconds = 2.0\n' "$kind"
    printf '[frontend]\nplugin = "frontend.chars"\nvocabulary = "%s/models/frontend/english_chars.vocab"\n' "$source_dir"
    printf '[codec]\nplugin = "test.tone_codec"\n'
    printf '[backbone]\nplugin = "test.markov_backbone"\nend_after = 60\nweight_megabytes = 4.0\n'
    [ "$kind" = tight ] && printf 'max_positions = 160\n'
    [ "$kind" = buggy ] && printf 'fail_on_token = 7\n'
    [ "$kind" = irreproducible ] && printf 'irreproducible = true\n'
    if [ "$kind" = chain ]; then
      printf '[draft]\nplugin = "test.markov_drafter"\nend_after = 60\nnoise = 0.7\ndepth = 3\n'
      printf '[acceptor]\nplugin = "acceptor.exact"\n'
    fi
  } > "$kind.toml"
done

fail() { echo "check_speech_bench: $*" >&2; exit 1; }
common=(-p plain.toml -p chain.toml --manifest manifest.tsv --prompts prompts.tsv --repeats 2 --jobs 2)
status=0
"$cadenza" bench --suite speech "${common[@]}" -p tight.toml --json out.json --csv out.csv --plot out.png \
  > table.txt 2> progress.txt || status=$?
cat table.txt
[ "$status" -eq 0 ] || fail "exit code $status with a sentence that does not fit: $(cat progress.txt)"

grep -q "2 sentence(s) of split test" table.txt || fail "the heading does not count 2 sentences"
grep -q "1 utterance(s) without a voice prompt skipped" table.txt || fail "the skipped utterance is not reported"
grep -Eq "^original audio \(the reference\): WER [0-9.]+ %" table.txt || fail "no reference WER"
grep -Eq "^the recordings through the first pipeline's codec: WER [0-9.]+ %" table.txt || fail "no resynthesis WER"
grep -q "dWER codec pt" table.txt || fail "no column of WER over the resynthesis"
grep -q "WER %" table.txt && grep -q "TTFA ms" table.txt && grep -q "RTF aud/s" table.txt || fail "missing columns"
grep -Eq "^plain +[0-9]+ +[0-9.]+ +1.00x +1.00 " table.txt || fail "the baseline row is wrong"
grep -Eq "^chain +[0-9]+ " table.txt || fail "no row for chain"
grep -q "\[round 1/1, 3/3\] tight: sentence 2/2" progress.txt || fail "no progress"
grep -q "timed in 1 round(s)" table.txt || fail "the heading does not say the rounds"

# In two rounds (one sentence each, every pipeline in turn) the speech is the
# same: each sentence keeps its seed.
"$cadenza" bench --suite speech "${common[@]}" --rounds 2 --json rounds.json > rounds.txt 2> rounds-progress.txt ||
  fail "the run in two rounds failed: $(cat rounds-progress.txt)"
grep -q "\[round 2/2, 2/2\] chain: sentence 2/2" rounds-progress.txt || fail "no progress of the second round"
grep -q "timed in 2 round(s)" rounds.txt || fail "the heading does not say 2 rounds"
hypotheses() { grep '"hypothesis"' "$1"; }
[ "$(hypotheses out.json | head -4)" = "$(hypotheses rounds.json | head -4)" ] ||
  fail "two rounds changed what the pipelines said"

# Timed twice in turn, each sentence keeps its median repeat: the same speech
# again (the repeats are the same audio), and the heading and JSON say so.
"$cadenza" bench --suite speech "${common[@]}" --timing-repeats 2 --json repeats.json > repeats.txt \
  2> repeats-progress.txt || fail "the run with two timing repeats failed: $(cat repeats-progress.txt)"
grep -q "\[round 1/1, repeat 2/2, 2/2\] chain: sentence 2/2" repeats-progress.txt || fail "no progress of the repeats"
grep -q "timed in 1 round(s), each running every pipeline on its block of sentences in turn, 2 times in turn" \
  repeats.txt || fail "the heading does not say the repeats"
grep -q '"timing_repeats": 2' repeats.json || fail "the JSON lacks timing_repeats"
[ "$(hypotheses out.json | head -4)" = "$(hypotheses repeats.json | head -4)" ] ||
  fail "timing repeats changed what the pipelines said"
# With two seeds every pipeline says each sentence twice: with seed 1 + i, as
# in a run with one seed, then with seed 1 + i + 2.
"$cadenza" bench --suite speech "${common[@]}" --seeds 2 --json seeds.json > seeds.txt 2> seeds-progress.txt ||
  fail "the run with two seeds failed: $(cat seeds-progress.txt)"
grep -q "\[round 1/1, 2/2\] chain: sentence 2/2, seed 2/2" seeds-progress.txt || fail "no progress of the second seed"
grep -q "again with seed 1 + i + k x 2 for k = 1..1 (2 syntheses of each sentence)" seeds.txt ||
  fail "the heading does not say the seeds"
grep -q "^WER with 95% bootstrap intervals (2000 resamples of the 2 sentences with replacement, each with its 2 seeds" \
  seeds.txt || fail "the bootstrap heading does not say the seeds"
grep -q '"seeds_per_sentence": 2' seeds.json || fail "the JSON lacks seeds_per_sentence"
[ "$(grep -c '"hypothesis"' seeds.json)" -eq 8 ] || fail "the JSON does not hold 4 syntheses of each pipeline"
# Each pipeline's syntheses carry seeds 1..4 (the JSON lists the pipelines first).
[ "$(grep -o '"seed": [0-9]*' seeds.json | head -8 | tr -d '"seed: ' | tr '\n' ,)" = "1,2,3,4,1,2,3,4," ] ||
  fail "the syntheses' seeds are not 1..4 in each pipeline: $(grep -o '"seed": [0-9]*' seeds.json | tr '\n' ' ')"
[ "$(hypotheses seeds.json | sed -n '1,2p;5,6p')" = "$(hypotheses rounds.json | head -4)" ] ||
  fail "the first seed did not say what a run with one seed says"
# With the audio decoded after each loop: the same tokens, and the first audio
# comes with the whole synthesis, where streamed (the default) a sentence's
# first chunk comes before its end.
"$cadenza" bench --suite speech "${common[@]}" --audio-after-loop --json after.json > after.txt 2> after-progress.txt ||
  fail "the run with the audio after the loop failed: $(cat after-progress.txt)"
grep -q "^audio: decoded after each sentence's decoding loop (--audio-after-loop)" after.txt ||
  fail "the heading does not say the audio came after the loop"
grep -q "^audio: streamed, decoded in chunks beside the decoding loop" table.txt ||
  fail "the heading does not say the audio was streamed"
grep -q '"audio": "after_loop"' after.json && grep -q '"audio": "streamed"' out.json ||
  fail "the JSON does not say how the audio was decoded"
# A sentence's tokens and its time to the first audio against its wall time.
sentence_tokens() { awk '/"tokens": /{ t = $2 } /"ttfa_ms": [0-9]/{ print t }' "$1" | head -4; }
[ "$(sentence_tokens out.json)" = "$(sentence_tokens after.json)" ] || fail "the audio after the loop changed the tokens"
# first_audio JSON: "whole" when every sentence's first audio came at its end, else "sooner".
first_audio() {
  awk '/"ttfa_ms": [0-9]/ { t = $2 + 0; pending = 1 }
       /"wall_seconds": / && pending { w = 1000 * $2; if (t < w - 1e-6 * w) sooner = 1; n++; pending = 0 }
       END { print (n == 0 ? "none" : sooner ? "sooner" : "whole") }' "$1"
}
[ "$(first_audio after.json)" = whole ] || fail "with the audio after the loop a first chunk came before the end"
[ "$(first_audio out.json)" = sooner ] || fail "streamed, no sentence's first audio came before its end"
# A pipeline whose repeats say different things is a bug the suite reports.
status=0
"$cadenza" bench --suite speech -p plain.toml -p irreproducible.toml --manifest manifest.tsv --prompts prompts.tsv \
  --repeats 1 --jobs 2 --timing-repeats 2 > irreproducible.txt 2> irreproducible.err || status=$?
[ "$status" -eq 2 ] || fail "exit code $status, not 2, for repeats that differ: $(cat irreproducible.err)"
grep -q "internal error (a bug; please report it): irreproducible.toml: sentence 'a' (prompts.tsv:3): its timing repeats differ" \
  irreproducible.err || fail "the differing repeats are not reported: $(cat irreproducible.err)"
grep -q "^  irreproducible: 2 of 2, 2 of them internal errors" irreproducible.txt ||
  fail "the table does not count the differing sentences"

# The sentence that does not fit: reported as it happens, counted in the
# table, listed with its error, and the run went on to the next sentence.
grep -q "sentence failed: tight.toml: sentence 'a' (prompts.tsv:3): the text ([0-9]* tokens), the voice prompt ([0-9]* frames), 100 audio frames and 2 spare need [0-9]* positions, more than the backbone's 160" \
  progress.txt || fail "the failure is not reported as it happens: $(cat progress.txt)"
grep -Eq "^tight +[0-9]+ .* 1 +[0-9]+% +[0-9]+% /" table.txt || fail "the table does not count tight's failed sentence"
grep -Eq "^plain +[0-9]+ .* 0 +[0-9]+% +[0-9]+% /" table.txt || fail "the table does not count plain's 0 failed sentences"
grep -q "^  tight: 1 of 2$" table.txt || fail "no list of failed sentences"
grep -q "^    'a' (prompts.tsv:3): the text ([0-9]* tokens), the voice prompt ([0-9]* frames), 100 audio frames and 2 spare need [0-9]* positions, more than the backbone's 160" \
  table.txt || fail "the failed sentence is not listed with its error"
# The bootstrap: WER % [lo, hi] for each, the paired difference for the others.
grep -q "^WER with 95% bootstrap intervals (2000 resamples of the 2 sentences" table.txt || fail "no bootstrap heading"
interval='\[[-+]?[0-9.]+, [-+]?[0-9.]+\]'
grep -Eq "^  plain +WER +[0-9.]+ % $interval\$" table.txt || fail "no WER interval for plain"
grep -Eq "^  chain +WER +[0-9.]+ % $interval   dWER vs plain [-+][0-9.]+ pt $interval\$" table.txt ||
  fail "no paired difference for chain"
grep -Eq "^  tight +WER +[0-9.]+ % $interval   dWER vs plain [-+][0-9.]+ pt $interval\$" table.txt ||
  fail "no paired difference for tight"
# The speedups' intervals, on the same resamples, for the pipelines after the first.
grep -q "^speedup over plain with 95% bootstrap intervals (the same resamples" table.txt ||
  fail "no speedup interval heading"
grep -Eq "^  chain +[0-9.]+x \[[0-9.]+, [0-9.]+\]\$" table.txt || fail "no speedup interval for chain"
grep -Eq "^  plain +[0-9.]+x \[" table.txt && fail "the first pipeline has a speedup interval over itself"

for field in '"suite": "speech"' '"sentence_count": 2' '"skipped_without_prompt": 1' '"original_audio"' \
             '"wer_percent"' '"cer_percent"' '"wer_delta_points"' '"ttfa_ms"' '"ceiling"' '"realized"' \
             '"original_hypothesis"' '"prompt_id": "b"' '"codec_resynthesis"' '"resynthesis_hypothesis"' \
             '"wer_bootstrap"' '"resamples": 2000' '"wer_percent_ci95_low"' '"wer_percent_ci95_high"' \
             '"wer_difference_vs_first_points_ci95_low"' '"wer_difference_vs_first_points_ci95_high"' \
             '"failed_sentence_scoring"' '"failed_sentences": 1' '"failed": true' '"internal_error": false' \
             '"speedup_ci95_low"' '"speedup_ci95_high"' '"speedup_method"' '"loop_seconds"'; do
  grep -q "$field" out.json || fail "the JSON lacks $field"
done
[ "$(grep -c '"speedup"' out.json)" -eq 3 ] || fail "the JSON does not hold three pipelines"
[ "$(grep -c '"wer_difference_vs_first_points"' out.json)" -eq 2 ] || fail "the first pipeline has a difference to itself"
grep -q "\"error\": \"the text ([0-9]* tokens), the voice prompt ([0-9]* frames), 100 audio frames and 2 spare need [0-9]* positions, more than the backbone's 160" out.json ||
  fail "the JSON lacks the failed sentence's error"

[ "$(wc -l < out.csv)" -eq 4 ] || fail "the CSV should have a header and three rows"
header=$(head -1 out.csv)
for column in pipeline tokens_per_second speedup mean_accepted_length real_time_factor_audio_s_per_wall_s ceiling \
              realized_fraction ttfa_ms wer_percent cer_percent original_wer_percent \
              resynthesis_wer_percent failed_sentences internal_errors wer_percent_ci95_low wer_percent_ci95_high \
              wer_difference_vs_first_points wer_difference_vs_first_points_ci95_low \
              wer_difference_vs_first_points_ci95_high speedup_ci95_low speedup_ci95_high; do
  echo ",$header," | grep -q ",$column," || fail "the CSV lacks the column $column"
done
columns=$(awk -F, 'NR == 1 { print NF }' out.csv)
awk -F, -v n="$columns" 'NF != n { exit 1 }' out.csv || fail "CSV rows do not have $columns fields"
grep -q '^plain,plain.toml,' out.csv && grep -q '^chain,chain.toml,' out.csv && grep -q '^tight,tight.toml,' out.csv ||
  fail "the CSV rows are not the pipelines"
# column NAME ROW: a CSV cell by its column's name (row 2 is the first pipeline).
column() { awk -F, -v name="$1" -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i }
                                              NR == row { print $c }' out.csv; }
[ "$(column failed_sentences 2)" = 0 ] && [ "$(column failed_sentences 3)" = 0 ] &&
  [ "$(column failed_sentences 4)" = 1 ] || fail "failed_sentences should be 0, 0, 1"
[ -z "$(column wer_difference_vs_first_points 2)" ] || fail "the first pipeline has a difference to itself in the CSV"
for row in 2 3 4; do
  awk -v lo="$(column wer_percent_ci95_low $row)" -v wer="$(column wer_percent $row)" \
      -v hi="$(column wer_percent_ci95_high $row)" 'BEGIN { exit !(lo <= wer && wer <= hi) }' ||
    fail "row $row: the WER interval does not hold the WER"
done
# tight lost sentence a's 6 words entirely: its word errors are those of b plus 6.
awk -v errors="$(column word_errors 4)" -v words="$(column reference_words 4)" \
    'BEGIN { exit !(errors >= 6 && words == 11) }' || fail "tight's failed sentence is not 6 deleted words"

[ "$(head -c 4 out.png | tail -c 3)" = PNG ] || fail "out.png is not a PNG"

# An internal error (a bug) in one pipeline: loud, exit code 2, but every
# other result is still printed and written.
status=0
"$cadenza" bench --suite speech -p plain.toml -p buggy.toml --manifest manifest.tsv --prompts prompts.tsv \
  --repeats 1 --jobs 2 --json bug.json --csv bug.csv > bug.txt 2> bug.err || status=$?
[ "$status" -eq 2 ] || fail "exit code $status, not 2, after an internal error: $(cat bug.err)"
grep -q "internal error (a bug; please report it): buggy.toml: sentence 'a' (prompts.tsv:3): .*simulated bug on token 7" \
  bug.err || fail "the internal error is not reported as it happens: $(cat bug.err)"
grep -q "1 sentence(s) failed with an internal error" bug.err || fail "no closing word on the internal error"
grep -q "^  buggy: 1 of 2, 1 of them internal errors" bug.txt || fail "the table does not report the internal error"
grep -q "INTERNAL ERROR: .*simulated bug on token 7" bug.txt || fail "the internal error is not listed"
grep -Eq "^plain +[0-9]+ +[0-9.]+ +1.00x" bug.txt || fail "plain's results are lost"
grep -q '"internal_error": true' bug.json && grep -q '"internal_errors": 1' bug.json || fail "bug.json lacks the error"
[ "$(grep -c '"speedup"' bug.json)" -eq 2 ] && [ "$(wc -l < bug.csv)" -eq 3 ] || fail "results lost after the bug"

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
