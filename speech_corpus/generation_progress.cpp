#include "generation_progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cadenza::speech_corpus {

std::string format_duration(double seconds) {
    const auto total = static_cast<long long>(std::llround(std::max(0.0, seconds)));
    char text[48];
    if (total >= 3600)
        std::snprintf(text, sizeof(text), "%lldh%02lldm%02llds", total / 3600, total / 60 % 60, total % 60);
    else if (total >= 60)
        std::snprintf(text, sizeof(text), "%lldm%02llds", total / 60, total % 60);
    else
        std::snprintf(text, sizeof(text), "%llds", total);
    return text;
}

GenerationProgress::GenerationProgress(std::ostream& stream, bool terminal, size_t total, size_t already_done,
                                       double already_audio_seconds)
    : stream_(stream), terminal_(terminal), total_(total), already_done_(already_done),
      already_audio_seconds_(already_audio_seconds), start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

double GenerationProgress::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void GenerationProgress::record(bool succeeded, double audio_seconds) {
    if (succeeded) {
        ++generated_;
        generated_audio_seconds_ += audio_seconds;
    } else {
        ++failed_;
    }
    tick();
}

void GenerationProgress::tick() {
    if (std::chrono::steady_clock::now() - last_draw_ >= std::chrono::seconds(1)) draw();
}

void GenerationProgress::message(const std::string& text) {
    if (terminal_ && line_open_) stream_ << "\r\033[K";
    stream_ << text << '\n';
    line_open_ = false;
    stream_.flush();
}

void GenerationProgress::draw() {
    last_draw_ = std::chrono::steady_clock::now();
    const size_t done = already_done_ + generated_ + failed_;
    const double elapsed = elapsed_seconds();
    const size_t attempted = generated_ + failed_;
    const size_t remaining = total_ > done ? total_ - done : 0;
    std::string eta = "?";
    if (attempted > 0) eta = format_duration(elapsed / static_cast<double>(attempted) * static_cast<double>(remaining));
    char line[256];
    std::snprintf(line, sizeof(line),
                  "speech corpus: %zu/%zu utterances (%.1f%%), %.2f h of audio, %zu failed, %s elapsed, ETA %s", done,
                  total_, total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0,
                  (already_audio_seconds_ + generated_audio_seconds_) / 3600.0, failed_, format_duration(elapsed).c_str(),
                  eta.c_str());
    if (terminal_) {
        stream_ << "\r\033[K" << line;
        line_open_ = true;
    } else {
        stream_ << line << '\n';
    }
    stream_.flush();
}

void GenerationProgress::finish() {
    draw();
    if (terminal_) stream_ << '\n';
    line_open_ = false;
    stream_.flush();
}

}  // namespace cadenza::speech_corpus
