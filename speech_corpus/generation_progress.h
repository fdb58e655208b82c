#pragma once
// Progress of corpus generation on a stream (standard error): utterances
// done of the total, hours of audio, failures, elapsed time and the ETA. On a
// terminal one line is redrawn in place; otherwise each update is a new line.
#include <chrono>
#include <ostream>
#include <string>

namespace cadenza::speech_corpus {

class GenerationProgress {
public:
    // `already_done` utterances (and their audio) exist before this run.
    GenerationProgress(std::ostream& stream, bool terminal, size_t total, size_t already_done,
                       double already_audio_seconds);

    // Called after each finished utterance; draws at most once a second.
    void record(bool succeeded, double audio_seconds);
    // Redraws when a second has passed since the last drawing.
    void tick();
    // A message on its own line (the progress line is redrawn after it).
    void message(const std::string& text);
    // The final line.
    void finish();

    size_t generated() const { return generated_; }
    size_t failed() const { return failed_; }
    double generated_audio_seconds() const { return generated_audio_seconds_; }
    double elapsed_seconds() const;

private:
    void draw();

    std::ostream& stream_;
    bool terminal_;
    size_t total_, already_done_;
    double already_audio_seconds_;
    size_t generated_ = 0, failed_ = 0;
    double generated_audio_seconds_ = 0.0;
    std::chrono::steady_clock::time_point start_, last_draw_;
    bool line_open_ = false;
};

// "1h02m03s", "4m05s", "6s".
std::string format_duration(double seconds);

}  // namespace cadenza::speech_corpus
