// `cadenza corpus speech`: an English speech corpus spoken by flite's and
// festival's voices from the sentences of the fortune files
// (docs/speech_corpus.md).
#pragma once

#include <functional>
#include <utility>

#include <CLI/CLI.hpp>

namespace cadenza::cli {

// Adds `speech` under `corpus`; returns its app and what runs it.
std::pair<CLI::App*, std::function<int()>> add_speech_corpus_subcommand(CLI::App& corpus);

}  // namespace cadenza::cli
