// The progress line of a long pocketsphinx run (`cadenza wer`, the speech bench).
#pragma once

#include <functional>
#include <string>

#include "transcription_run.h"

namespace cadenza::cli {

// On a terminal the line is rewritten at most once a second; in a log, one
// line every 30 seconds and one at the end. `label` starts the line.
std::function<void(const recognition::TranscriptionProgress&)> recognition_progress_printer(const std::string& label);

}  // namespace cadenza::cli
