// `cadenza wer --manifest CORPUS/manifest.tsv --split test ...`: transcribes a
// speech corpus split with pocketsphinx and prints its word and character
// error rates against the manifest's texts (docs/recognition.md).
#pragma once

#include "command.h"

namespace cadenza::cli {

Command add_wer_command(CLI::App& app);

}  // namespace cadenza::cli
