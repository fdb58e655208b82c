#!/bin/sh
# `cadenza bench` compares plain decoding with two speculative pipelines on
# the test doubles and prints one row per pipeline, the acceptance by
# position, the measured costs, and a JSON file with every figure.
set -eu
cadenza="$1"
bench_dir="$2"
json=$(mktemp)
trap 'rm -f "$json"' EXIT
output=$("$cadenza" bench -p "$bench_dir/plain.toml" -p "$bench_dir/chain_exact.toml" -p "$bench_dir/tree_bias.toml" \
         --texts "$bench_dir/texts.txt" --max-texts 2 --repeats 3 --json "$json")
echo "$output"
for name in plain chain3-exact tree1x3-bias; do
    echo "$output" | grep -Eq "^$name +[0-9]+ +[0-9.]+ +[0-9.]+x +[0-9.]+ " || { echo "no row for $name"; exit 1; }
done
echo "$output" | grep -Eq "^plain +[0-9]+ +[0-9.]+ +1.00x +1.00 " || { echo "the baseline row is wrong"; exit 1; }
echo "$output" | grep -q "target m=1:" || { echo "no cost table"; exit 1; }
# Every size in order, though the chain's step (3 drafts + 1 = 4) is timed
# with one token, apart from the table's other sizes; the chain's table has
# every size up to its step (a step may verify fewer nodes), plain's not.
cost='[0-9.]+ms\([0-9.]+\)'
echo "$output" | grep -Eq "^  plain +after [0-9]+ tokens: target m=1:${cost},2:${cost},4:${cost},8:${cost},16:${cost},32:${cost}( |$)" ||
    { echo "the plain pipeline's cost table is wrong"; exit 1; }
echo "$output" | grep -Eq "^  chain3-exact +after [0-9]+ tokens: target m=1:${cost},2:${cost},3:${cost},4:${cost},8:${cost},16:${cost},32:${cost}( |$)" ||
    { echo "the chain's cost table is wrong"; exit 1; }
echo "$output" | grep -q "ceiling = (p + 1) / (p + q + D / E)" || { echo "no ceiling explanation"; exit 1; }
echo "$output" | grep -Eq "^  chain3-exact +[0-9.]+ ms each; modeled [0-9.]+ ms; the first of each synthesis [0-9.]+ ms$" ||
    { echo "no line for the chain's proposals in the loop"; exit 1; }
echo "$output" | grep -Eq "^  chain3-exact +p = [0-9.]+, q = [0-9.]+, E / D = [0-9.]+x$" || { echo "no p and q for the chain"; exit 1; }
grep -q '"mean_accepted_length"' "$json" || { echo "the JSON lacks the figures"; exit 1; }
[ "$(grep -c '"speedup"' "$json")" -eq 3 ] || { echo "the JSON does not hold three pipelines"; exit 1; }
# Plain decoding only (no drafter): its rate against one target pass per token.
echo "$output" | grep -Eq "^  plain +[0-9.]+ tok/s = [0-9.]+ of 1 / [0-9.]+ ms \([0-9.]+ tok/s\); target passes [0-9.]+ s of [0-9.]+ s wall \([0-9]+%\), outside them [0-9]+%$" ||
    { echo "no plain-decoding line"; exit 1; }
[ "$(echo "$output" | grep -c " of 1 / ")" -eq 1 ] || { echo "a drafting pipeline got a plain-decoding line"; exit 1; }
grep -q '"one_pass_rate_share"' "$json" || { echo "the JSON lacks the plain-decoding figures"; exit 1; }
