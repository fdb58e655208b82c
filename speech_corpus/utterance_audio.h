#pragma once
// What happens to a synthesizer's output before it enters the corpus: the
// playback-speed change of the variation, the conversion to the corpus's
// sample rate, and trimming of leading and trailing silence.
#include <cstddef>
#include <optional>
#include <string>

#include "wav_file.h"

namespace cadenza::speech_corpus {

constexpr int corpus_sample_rate = 16000;

// Plays `synthesized` faster by `playback_speed` (pitch, formants and tempo
// all scale by it) and resamples to `output_rate`, in one resampling: the
// signal is read as if recorded at rate * speed.
audio::Waveform change_playback_speed(const audio::Waveform& synthesized, double playback_speed, int output_rate);

struct SampleRange {
    size_t begin = 0, end = 0;  // [begin, end); empty for all-silent audio
};

// The samples trim_silence keeps.
SampleRange silence_trim_range(const audio::Waveform& waveform, double margin_seconds = 0.1,
                               double threshold_db = -45.0);

// The samples of `waveform` in `range`, at its rate.
audio::Waveform samples_in(const audio::Waveform& waveform, SampleRange range);

// Cuts silence at both ends, keeping `margin_seconds` before the first and
// after the last 10 ms frame whose RMS level is within `threshold_db` of the
// loudest frame's. All-silent audio comes back empty.
audio::Waveform trim_silence(const audio::Waveform& waveform, double margin_seconds = 0.1, double threshold_db = -45.0);

// The duration of a corpus WAV file read from its header, or nullopt when the
// file is missing, unreadable, empty, not mono or not at `sample_rate`.
std::optional<double> probe_corpus_wav(const std::string& path, int sample_rate = corpus_sample_rate);

}  // namespace cadenza::speech_corpus
