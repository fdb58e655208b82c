// `cadenza transcribe FILE.wav...`: pocketsphinx transcriptions of audio files,
// one line per file (docs/recognition.md).
#pragma once

#include "command.h"
#include "pocketsphinx_recognizer.h"

namespace cadenza::cli {

// --model, --dictionary, --language-model and --decoder-setting, shared with
// `cadenza wer`.
void add_recognizer_options(CLI::App* command, recognition::RecognizerSettings& settings);

Command add_transcribe_command(CLI::App& app);

}  // namespace cadenza::cli
