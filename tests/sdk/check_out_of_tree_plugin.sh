#!/bin/sh
# Installs cadenza into a scratch prefix and builds the SDK's two plugin
# templates against it with find_package(cadenza): the C acceptor
# (example.argmax_acceptor) and the C++ drafter on the SDK's C++ layer
# (example.lookup_drafter). Checks that cadenza loads each from its build and
# that a pipeline resolves to it; then, when the model plugins were built
# (MODELS = yes), synthesizes with each on en-small from the install: the
# acceptor deciding every token of plain decoding, and the drafter's chains
# verified by acceptor.exact, which must accept some of them.
#
# Usage: check_out_of_tree_plugin.sh BUILD_DIR C_TEMPLATE CADENZA CPP_TEMPLATE SOURCE_DIR MODELS
set -eu
[ $# -eq 6 ] || { echo "usage: $0 BUILD_DIR C_TEMPLATE CADENZA CPP_TEMPLATE SOURCE_DIR yes|no"; exit 2; }
build_dir="$1"
template="$2"
cadenza="$3"
cpp_template="$4"
source_dir="$5"
models="$6"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

fail() {
    echo "FAIL: $*"
    exit 1
}

cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null

# build_and_describe SOURCE BUILD PLUGIN PARAMETER: builds SOURCE into BUILD,
# checks that the library, named after PLUGIN, exports only the entry point
# and that cadenza loads PLUGIN from there with PARAMETER in its schema.
build_and_describe() {
    cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$2" >/dev/null
    library="$2/lib$(echo "$3" | tr . _).so"
    [ -f "$library" ] || fail "$1 built no $library"
    exports=$(nm -D --defined-only "$library" | awk '{print $3}')
    [ "$exports" = "cdz_plugin_entry" ] || fail "$3 exports more than cdz_plugin_entry: $exports"
    output=$(CADENZA_PLUGIN_PATH="$2" "$cadenza" plugins describe "$3")
    echo "$output"
    echo "$output" | grep -q "library: $library" || fail "cadenza did not load the out-of-tree build of $3"
    echo "$output" | grep -Eq "^$4" || fail "the schema of $3 is missing $4"
}

# validates_to PIPELINE PLUGIN DIRECTORY: the pipeline resolves PLUGIN to the build in DIRECTORY.
validates_to() {
    resolved=$("$cadenza" validate "$1" 2>&1) || { echo "$resolved"; fail "$1 did not validate"; }
    echo "$resolved" | grep -q "plugin = \"$2\"  # 1.0.0, $3/" \
        || { echo "$resolved"; fail "$1 did not resolve $2 to the out-of-tree build in $3"; }
}

build_and_describe "$template" "$scratch/build" example.argmax_acceptor "min_probability +float"
build_and_describe "$cpp_template" "$scratch/cpp-build" example.lookup_drafter "ngram_max +integer"

# A pipeline names them from its own plugin_paths, and cadenza validates it.
cat > "$scratch/plugins.toml" <<TOML
[pipeline]
plugin_paths = ["build", "cpp-build"]

[acceptor]
plugin = "example.argmax_acceptor"
mode = "sample"
TOML
validates_to "$scratch/plugins.toml" example.argmax_acceptor "$scratch/build"

# The same refused with a parameter out of the drafter's range.
cat > "$scratch/bad.toml" <<TOML
[pipeline]
plugin_paths = ["cpp-build"]

[draft]
plugin = "example.lookup_drafter"
max_tokens = 0
TOML
if "$cadenza" validate "$scratch/bad.toml" >"$scratch/bad.out" 2>&1; then
    fail "a max_tokens of 0 validated"
fi
grep -q "max_tokens" "$scratch/bad.out" || { cat "$scratch/bad.out"; fail "the refusal does not name max_tokens"; }

[ "$models" = yes ] || { echo "no model plugins in this build: no synthesis"; exit 0; }

# Synthesis with the installed cadenza and its plugins, on en-small.
installed="$scratch/prefix/bin/cadenza"
text="Bye bye, bye bye, see you soon."

# on_en_small FILE TABLES: the shipped plain-decoding pipeline (ar.toml) with
# its models by absolute paths into the source tree, the templates' builds
# on its plugin path, and TABLES appended.
on_en_small() {
    sed -e "s|\"\.\./models/|\"$source_dir/models/|" \
        -e 's|^\[pipeline\]$|[pipeline]\nplugin_paths = ["build", "cpp-build"]|' \
        "$source_dir/pipelines/ar.toml" >"$1"
    printf '\n%s\n' "$2" >>"$1"
}

le32() { od -A n -t u4 -j "$2" -N 4 --endian=little "$1" | tr -d ' '; }

# tag FILE OFFSET: the 4 bytes at OFFSET.
tag() { dd if="$1" bs=1 skip="$2" count=4 2>/dev/null; }

# synthesize PIPELINE WAV: speaks the text into WAV, which must be a 16-bit
# PCM WAV (cadenza writes the canonical 44-byte header) of 0.5 to 10 s
# (en-small stops at 11) that is not silent; prints cadenza's report, whose
# statistics line is left in $statistics.
synthesize() {
    report=$("$installed" synth -p "$1" -t "$text" -o "$2") || fail "synthesis with $1 failed"
    echo "$report"
    statistics=$(echo "$report" | grep '^tokens ')
    [ "$(tag "$2" 0)" = RIFF ] && [ "$(tag "$2" 8)" = WAVE ] && [ "$(tag "$2" 36)" = data ] \
        || fail "$2 is not a canonical WAV file"
    byte_rate=$(le32 "$2" 28)
    data_bytes=$(le32 "$2" 40)
    awk -v b="$data_bytes" -v r="$byte_rate" 'BEGIN { exit !(r > 0 && b / r >= 0.5 && b / r <= 10) }' \
        || fail "$2 holds $data_bytes bytes at $byte_rate bytes/s: not 0.5 to 10 s"
    peak=$(od -A n -v -t d2 -j 44 --endian=little "$2" |
           awk '{ for (i = 1; i <= NF; ++i) { v = $i < 0 ? -$i : $i; if (v > m) m = v } } END { print m + 0 }')
    [ "$peak" -ge 1000 ] || fail "$2 is silent (peak $peak)"
}

# field NAME: the number before NAME in the statistics line ("tokens 160 | steps 147 | ...").
field() { echo "$statistics" | tr '|' '\n' | sed -n "s/^ *$1 \([0-9]*\) *$/\1/p"; }

# (a) The C acceptor decides every token of plain decoding (mode = "sample":
# a draw from the target's distribution, as without an acceptor).
on_en_small "$scratch/acceptor.toml" '[acceptor]
plugin = "example.argmax_acceptor"
mode = "sample"'
validates_to "$scratch/acceptor.toml" example.argmax_acceptor "$scratch/build"
synthesize "$scratch/acceptor.toml" "$scratch/acceptor.wav"
[ -n "$(field steps)" ] && [ "$(field tokens)" = "$(field steps)" ] \
    || fail "plain decoding emitted other than one token per step: $statistics"

# (b) The C++ drafter with acceptor.exact: it must be called at every step
# and some of its tokens accepted (more tokens than steps).
on_en_small "$scratch/drafter.toml" '[draft]
plugin = "example.lookup_drafter"

[acceptor]
plugin = "acceptor.exact"'
validates_to "$scratch/drafter.toml" example.lookup_drafter "$scratch/cpp-build"
synthesize "$scratch/drafter.toml" "$scratch/drafter.wav"
tokens=$(field tokens)
steps=$(field steps)
drafts=$(field "draft passes")
[ -n "$tokens" ] && [ -n "$steps" ] && [ -n "$drafts" ] || fail "no statistics in the report: $statistics"
[ "$drafts" -eq "$steps" ] || fail "the drafter was called $drafts times in $steps steps"
[ "$tokens" -gt "$steps" ] || fail "acceptor.exact accepted none of example.lookup_drafter's tokens: $statistics"
echo "example.lookup_drafter: $((tokens - steps)) drafted tokens accepted in $steps steps"
