// `cadenza corpus tts`: a speech corpus as token corpora for a zero-shot TTS
// target (training/speech_token_corpus.h), through a pipeline's frontend and
// codec, one file per split, with the token layout the backbone must use.
#pragma once

#include <functional>
#include <utility>

#include <CLI/CLI.hpp>

namespace cadenza::cli {

// Adds `tts` under `corpus`; returns its app and what runs it.
std::pair<CLI::App*, std::function<int()>> add_tts_corpus_subcommand(CLI::App& corpus);

}  // namespace cadenza::cli
