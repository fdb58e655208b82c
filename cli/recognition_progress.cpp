#include "recognition_progress.h"

#include <unistd.h>

#include <cstdio>
#include <memory>

#include "progress.h"

namespace cadenza::cli {

std::function<void(const recognition::TranscriptionProgress&)> recognition_progress_printer(const std::string& label) {
    const bool terminal = isatty(STDERR_FILENO) != 0;
    auto last = std::make_shared<double>(-1e9);
    return [terminal, last, label](const recognition::TranscriptionProgress& p) {
        const bool finished = p.done == p.total;
        if (!finished && p.elapsed_seconds - *last < (terminal ? 1.0 : 30.0)) return;
        *last = p.elapsed_seconds;
        std::fprintf(stderr, "%s%s: %zu/%zu utterances (%.0f%%), %s of audio, %s elapsed, ~%s left%s",
                     terminal ? "\r" : "", label.c_str(), p.done, p.total, 100.0 * p.done / p.total,
                     training::format_duration(p.audio_seconds_done).c_str(),
                     training::format_duration(p.elapsed_seconds).c_str(),
                     training::format_duration(p.remaining_seconds).c_str(), terminal && !finished ? "   " : "\n");
        std::fflush(stderr);
    };
}

}  // namespace cadenza::cli
