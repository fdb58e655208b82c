#!/bin/bash
# Hostile input to the command line (issue 24): each case must end in a clean
# error (exit 1, a message naming the input and what is wrong) within its
# time and memory bounds, and leave what it was pointed at as it was.
#   check_hostile_inputs.sh CADENZA SOURCE_DIR
set -u
cadenza="$1"
source_dir="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect_error NAME PATTERN COMMAND...: exit 1 within 60 s and 4 GiB of data,
# and a message matching PATTERN.
expect_error() {
  local name="$1" pattern="$2"
  shift 2
  local output status
  output=$( (ulimit -d 4194304; timeout 60 "$@") 2>&1)
  status=$?
  if [ "$status" -ne 1 ] || ! echo "$output" | grep -q -- "$pattern"; then
    echo "FAIL $name: exit $status, expected 1 and /$pattern/; output:"
    echo "$output" | head -5 | cut -c1-300
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

pipeline="$source_dir/pipelines/ar.toml"

# A table header and a dotted key nesting 50,000 levels (a SIGSEGV in toml++ before).
{ printf '[pipeline]\nname = "deep"\n[a'; for _ in $(seq 50000); do printf '.a'; done; printf ']\n'; } > "$work/deep-header.toml"
expect_error "deep table header" "deep-header.toml:3:65: .*more than 32 dotted parts" "$cadenza" validate "$work/deep-header.toml"
{ printf '[pipeline]\nx'; for _ in $(seq 50000); do printf '.x'; done; printf ' = 1\n'; } > "$work/deep-key.toml"
expect_error "deep dotted key" "deep-key.toml:2:64: .*more than 32 dotted parts" "$cadenza" validate "$work/deep-key.toml"
# Size and error count.
{ printf '[pipeline]\n'; for i in $(seq 60000); do printf 'unknown_key_%d = 1\n' "$i"; done; } > "$work/big.toml"
expect_error "a 1.3 MB pipeline file" "big.toml: larger than 1048576 bytes" "$cadenza" validate "$work/big.toml"
# Paths that are not regular files: a device, a FIFO (which hung), a directory.
expect_error "pipeline /dev/zero" "/dev/zero: not a regular file" "$cadenza" validate /dev/zero
mkfifo "$work/pipe.toml"
expect_error "pipeline FIFO" "pipe.toml: not a regular file" "$cadenza" validate "$work/pipe.toml"
sed "s|^vocabulary = .*|vocabulary = \"/dev/zero\"|" "$pipeline" > "$work/zero-vocabulary.toml"
expect_error "vocabulary /dev/zero" "'vocabulary': not a regular file or directory" \
  "$cadenza" validate "$work/zero-vocabulary.toml"

# Output that is a device or a link is written through, never replaced.
"$cadenza" synth -p "$pipeline" -t "Hello." -o /dev/null > /dev/null 2>&1
if [ -c /dev/null ]; then echo "ok   synth -o /dev/null leaves a device"; else echo "FAIL /dev/null replaced"; failures=$((failures + 1)); fi
touch "$work/target.wav" && ln -s "$work/target.wav" "$work/link.wav"
"$cadenza" synth -p "$pipeline" -t "Hello." -o "$work/link.wav" > /dev/null 2>&1
if [ -L "$work/link.wav" ] && [ -s "$work/target.wav" ]; then echo "ok   synth through a symbolic link"
else echo "FAIL the link was replaced or its target left empty"; failures=$((failures + 1)); fi
expect_error "synth -o a directory" "is a directory" "$cadenza" synth -p "$pipeline" -t "Hello." -o "$work"

# Numbers that were silently wrapped or ignored.
expect_error "seed -1" "a seed is a whole number" "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --seed -1
expect_error "seed 2^64" "a seed is a whole number" "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --seed 18446744073709551616
expect_error "max-seconds nan" "expected a finite number" "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --max-seconds nan
# Voice files: empty, and declaring 1 Hz (2.1 GB and 27 s before).
/usr/bin/python3 - "$work" <<'PY'
import struct, sys
def wav(path, rate, samples):
    data = struct.pack('<%dh' % len(samples), *samples)
    header = b'RIFF' + struct.pack('<I', 36 + len(data)) + b'WAVEfmt ' + struct.pack('<IHHIIHH', 16, 1, 1, rate, rate * 2, 2, 16)
    open(path, 'wb').write(header + b'data' + struct.pack('<I', len(data)) + data)
wav(sys.argv[1] + '/empty.wav', 16000, [])
wav(sys.argv[1] + '/one-hertz.wav', 1, [1000] * 3000)
PY
expect_error "empty voice WAV" "empty.wav: the voice file has no samples" \
  "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --voice "$work/empty.wav"
expect_error "1 Hz voice WAV" "audio at 1 Hz: rates from 1000" \
  "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --voice "$work/one-hertz.wav"

# A codec whose weights are NaN: all-NaN audio with status OK before.
"$cadenza" codec encode -p "$pipeline" -o "$work/codes.safetensors" "$work/target.wav" > /dev/null 2>&1
/usr/bin/python3 - "$source_dir/models/en-small/codec.safetensors" "$work/nan-codec.safetensors" <<'PY'
import json, struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
size = struct.unpack('<Q', data[:8])[0]
header = json.loads(data[8:8 + size])
for name, entry in header.items():
    if name != '__metadata__' and entry['dtype'] == 'F32' and not name.startswith('mel_'):
        begin, end = entry['data_offsets']
        data[8 + size + begin:8 + size + end] = struct.pack('<f', float('nan')) * ((end - begin) // 4)
open(sys.argv[2], 'wb').write(data)
PY
sed "s|^model = .*codec.safetensors\"|model = \"$work/nan-codec.safetensors\"|" "$pipeline" > "$work/nan-codec.toml"
sed -i "s|\"\.\./|\"$source_dir/|" "$work/nan-codec.toml"
expect_error "NaN codec weights" "non-finite sample" \
  "$cadenza" codec decode -p "$work/nan-codec.toml" -o "$work/nan.wav" "$work/codes.safetensors"

# A target whose final norm is NaN: 0 s of audio with status OK before (greedy
# decoding took NaN logits for the end token). Sampled and greedy.
mkdir -p "$work/nan-target"
cp "$source_dir/models/en-small/target/config.json" "$work/nan-target/"
/usr/bin/python3 - "$source_dir/models/en-small/target/model.safetensors" "$work/nan-target/model.safetensors" <<'PY'
import json, struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
size = struct.unpack('<Q', data[:8])[0]
begin, end = json.loads(data[8:8 + size])['model.norm.weight']['data_offsets']
data[8 + size + begin:8 + size + end] = struct.pack('<f', float('nan')) * ((end - begin) // 4)
open(sys.argv[2], 'wb').write(data)
PY
sed -e "s|^checkpoint = .*|checkpoint = \"$work/nan-target\"|" -e "s|\"\.\./|\"$source_dir/|" "$pipeline" > "$work/nan-target.toml"
sed 's/^temperature = .*/temperature = 0/' "$work/nan-target.toml" > "$work/nan-target-greedy.toml"
expect_error "NaN target weights, sampled" "backbone.llama: sampling: .*not finite" \
  "$cadenza" synth -p "$work/nan-target.toml" -t "Hello there." -o "$work/x.wav"
expect_error "NaN target weights, greedy" "backbone.llama: sampling: .*not finite" \
  "$cadenza" synth -p "$work/nan-target-greedy.toml" -t "Hello there." -o "$work/x.wav"

# Special tokens that collide with each other or with the token ranges
# (accepted before, decoding silently wrong).
sed -e "s|\"\.\./|\"$source_dir/|" "$pipeline" > "$work/tokens.toml"
sed 's/^audio_start_token = .*/audio_start_token = 8251/' "$work/tokens.toml" > "$work/start-is-end.toml"
expect_error "audio_start_token == end_token" "audio_start_token and end_token are both 8251" \
  "$cadenza" synth -p "$work/start-is-end.toml" -t "Hi." -o "$work/x.wav"
sed 's/^audio_start_token = .*/audio_start_token = 100/' "$work/tokens.toml" > "$work/start-in-audio.toml"
expect_error "audio_start_token among the codes" "audio_start_token 100 is one of the audio tokens 58..8249" \
  "$cadenza" synth -p "$work/start-in-audio.toml" -t "Hi." -o "$work/x.wav"
sed 's/^end_token = .*/end_token = 5/' "$work/tokens.toml" > "$work/end-in-text.toml"
expect_error "end_token among the text ids" "end_token 5 is one of the text tokens 0..57" \
  "$cadenza" synth -p "$work/end-in-text.toml" -t "Hi." -o "$work/x.wav"

# Foreign libraries on the plugin path: a directory of other programs'
# libraries (gflags' constructor ended the process when dlopened), and a
# library exporting cdz_plugin_entry as data (SIGSEGV in `cadenza plugins`).
sed "s|^\[frontend\]|plugin_paths = [\"/usr/lib/x86_64-linux-gnu\"]\n\n[frontend]|" "$work/nan-target.toml" |
  sed "s|^checkpoint = .*|checkpoint = \"$source_dir/models/en-small/target\"|" > "$work/foreign-paths.toml"
if output=$(timeout 120 "$cadenza" validate "$work/foreign-paths.toml" 2>&1); then
  echo "ok   plugin_paths with a system library directory"
else
  echo "FAIL plugin_paths with a system library directory: $output" | head -5 | cut -c1-300
  failures=$((failures + 1))
fi
# Text with nothing to say (half a second of babble, exit 0, before) and
# text far past what the backbone holds (24 s in the frontend before).
expect_error "empty text" "the text is empty" "$cadenza" synth -p "$pipeline" -t "" -o "$work/x.wav"
expect_error "punctuation-only text" "no letter or digit" "$cadenza" synth -p "$pipeline" -t "?! ..." -o "$work/x.wav"
expect_error "emoji-only text" "no letter or digit" "$cadenza" synth -p "$pipeline" -t "😀🎉" -o "$work/x.wav"
expect_error "100,000 characters" "the text is 100000 bytes" \
  "$cadenza" synth -p "$pipeline" -t "$(head -c 100000 /dev/zero | tr '\0' 'a')" -o "$work/x.wav"

# Messages that quote the input: a NUL cut them short, an 800 KB key was
# echoed whole.
printf '[pipeline]\nname = "nul"\n[frontend]\nplugin = "frontend\\u0000.flite"\n' > "$work/nul.toml"
expect_error "a NUL in a plugin name" 'frontend\\x00\.flite' "$cadenza" validate "$work/nul.toml"
{ printf '[pipeline]\nname = "long"\n'; head -c 800000 /dev/zero | tr '\0' 'k'; printf ' = 1\n'; } > "$work/long-key.toml"
expect_error "an 800 KB key" "more bytes)" "$cadenza" validate "$work/long-key.toml"
if [ "$( (timeout 60 "$cadenza" validate "$work/long-key.toml") 2>&1 | wc -c)" -gt 10000 ]; then
  echo "FAIL an 800 KB key: the message is longer than 10,000 bytes"
  failures=$((failures + 1))
fi

# A CUDA device without CUDA: 74 lines of LibTorch's dispatcher list before.
sed -e 's/^device = .*/device = "cuda:0"/' -e "s|\"\.\./|\"$source_dir/|" "$pipeline" > "$work/cuda.toml"
expect_error "device cuda:0 without CUDA" "device 'cuda:0': this LibTorch has no CUDA support" \
  "$cadenza" synth -p "$work/cuda.toml" -t "Hi." -o "$work/x.wav"
if [ "$( (timeout 60 "$cadenza" synth -p "$work/cuda.toml" -t "Hi." -o "$work/x.wav") 2>&1 | wc -l)" -gt 2 ]; then
  echo "FAIL device cuda:0 without CUDA: more than two lines"
  failures=$((failures + 1))
fi
# User errors exit 1, not the 2 of an internal error.
echo "not audio" > "$work/not-audio.wav"
expect_error "a --voice that is not audio" "not-audio.wav: cannot read audio" \
  "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --voice "$work/not-audio.wav"
expect_error "codes that are not safetensors" "not-audio.wav: header length" \
  "$cadenza" codec decode -p "$pipeline" -o "$work/x.wav" "$work/not-audio.wav"

# Audio input that is not a regular file (a FIFO hung in libsndfile before),
# and a WAV whose 300 channels are past the limit.
mkfifo "$work/voice-pipe.wav"
expect_error "a --voice that is a FIFO" "voice-pipe.wav: cannot read audio: not a regular file" \
  "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --voice "$work/voice-pipe.wav"
expect_error "codec encode of a FIFO" "voice-pipe.wav: cannot read audio: not a regular file" \
  "$cadenza" codec encode -p "$pipeline" -o "$work/codes.safetensors" "$work/voice-pipe.wav"
/usr/bin/python3 - "$work/channels.wav" <<'PY'
import struct, sys
channels, frames = 300, 4
data = b'\0\0' * channels * frames
fmt = struct.pack('<HHIIHH', 1, channels, 16000, 16000 * 2 * channels, 2 * channels, 16)
open(sys.argv[1], 'wb').write(b'RIFF' + struct.pack('<I', 4 + 8 + len(fmt) + 8 + len(data)) + b'WAVE' + b'fmt ' +
                              struct.pack('<I', len(fmt)) + fmt + b'data' + struct.pack('<I', len(data)) + data)
PY
expect_error "a WAV of 300 channels" "channels.wav: .*channels" \
  "$cadenza" synth -p "$pipeline" -t "Hi." -o "$work/x.wav" --voice "$work/channels.wav"

# Codes files: a value past 32 bits (truncated and decoded before), and
# 500,000 frames (10,000 s: past 10 GB before); 5,000 frames (100 s) decode
# in pieces through the codec's stream, within the 4 GiB bound.
write_codes() {  # write_codes FILE FRAMES VALUE
  /usr/bin/python3 - "$@" <<'PY'
import json, struct, sys
path, frames, value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
header = json.dumps({'codes': {'dtype': 'I64', 'shape': [1, frames], 'data_offsets': [0, 8 * frames]}}).encode()
header += b' ' * ((8 - len(header) % 8) % 8)
open(path, 'wb').write(struct.pack('<Q', len(header)) + header + struct.pack('<q', value) * frames)
PY
}
write_codes "$work/huge-value.safetensors" 10 $((1 << 40))
expect_error "a code of 2^40" "huge-value.safetensors.*value 1099511627776 is not a code" \
  "$cadenza" codec decode -p "$pipeline" -o "$work/x.wav" "$work/huge-value.safetensors"
write_codes "$work/long.safetensors" 500000 7
expect_error "500,000 frames of codes" "at most 3600 s are decoded at once" \
  "$cadenza" codec decode -p "$pipeline" -o "$work/x.wav" "$work/long.safetensors"
write_codes "$work/minutes.safetensors" 5000 7
if output=$( (ulimit -d 4194304; timeout 120 "$cadenza" codec decode -p "$pipeline" -o "$work/x.wav" "$work/minutes.safetensors") 2>&1); then
  echo "ok   5,000 frames of codes decode in pieces"
else
  echo "FAIL 5,000 frames of codes: $output" | head -5 | cut -c1-300
  failures=$((failures + 1))
fi

# pocketsphinx settings that aborted or crashed it.
for setting in lw=0 lw=abc maxwpf=0 ds=0; do
  expect_error "transcribe $setting" "decoder setting" "$cadenza" transcribe --decoder-setting "$setting" "$work/target.wav"
done

[ "$failures" -eq 0 ] || { echo "$failures hostile input case(s) failed"; exit 1; }
echo "every hostile input ended in a clean error"
