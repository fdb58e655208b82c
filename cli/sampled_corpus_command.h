// `cadenza corpus sampled`: a token corpus of the target's own samples, for
// self-distillation of drafts (MEDUSA-2, SSD): each prompt of an existing
// token corpus (text ids, audio start, voice prompt, audio start) continued
// by the pipeline's backbone exactly as a synthesis samples it.
#pragma once

#include <functional>
#include <utility>

#include <CLI/CLI.hpp>

namespace cadenza::cli {

// Adds `sampled` under `corpus`; returns its app and what runs it.
std::pair<CLI::App*, std::function<int()>> add_sampled_corpus_subcommand(CLI::App& corpus);

}  // namespace cadenza::cli
