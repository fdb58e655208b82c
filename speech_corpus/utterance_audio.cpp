#include "utterance_audio.h"

#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "resampler.h"

namespace cadenza::speech_corpus {

audio::Waveform change_playback_speed(const audio::Waveform& synthesized, double playback_speed, int output_rate) {
    if (!(playback_speed > 0.0)) throw std::invalid_argument("playback speed must be positive");
    audio::Waveform output;
    output.sample_rate = output_rate;
    output.samples = audio::resample(synthesized.samples, synthesized.sample_rate * playback_speed, output_rate);
    return output;
}

SampleRange silence_trim_range(const audio::Waveform& waveform, double margin_seconds, double threshold_db) {
    const size_t frame = std::max<size_t>(1, static_cast<size_t>(waveform.sample_rate / 100));
    const size_t frames = waveform.samples.size() / frame + (waveform.samples.size() % frame ? 1 : 0);
    std::vector<double> level(frames, 0.0);
    double loudest = 0.0;
    for (size_t f = 0; f < frames; ++f) {
        const size_t begin = f * frame, end = std::min(waveform.samples.size(), begin + frame);
        double energy = 0.0;
        for (size_t i = begin; i < end; ++i) energy += static_cast<double>(waveform.samples[i]) * waveform.samples[i];
        level[f] = std::sqrt(energy / static_cast<double>(end - begin));
        loudest = std::max(loudest, level[f]);
    }
    // Below about -90 dBFS there is nothing to keep.
    if (loudest < 3e-5) return {};
    const double threshold = loudest * std::pow(10.0, threshold_db / 20.0);
    size_t first = 0, last = frames - 1;
    while (first < frames && level[first] < threshold) ++first;
    while (last > first && level[last] < threshold) --last;
    const auto margin = static_cast<size_t>(margin_seconds * waveform.sample_rate);
    const size_t begin = first * frame > margin ? first * frame - margin : 0;
    const size_t end = std::min(waveform.samples.size(), (last + 1) * frame + margin);
    return {begin, end};
}

audio::Waveform samples_in(const audio::Waveform& waveform, SampleRange range) {
    audio::Waveform part;
    part.sample_rate = waveform.sample_rate;
    part.samples.assign(waveform.samples.begin() + static_cast<std::ptrdiff_t>(range.begin),
                        waveform.samples.begin() + static_cast<std::ptrdiff_t>(range.end));
    return part;
}

audio::Waveform trim_silence(const audio::Waveform& waveform, double margin_seconds, double threshold_db) {
    return samples_in(waveform, silence_trim_range(waveform, margin_seconds, threshold_db));
}

std::optional<double> probe_corpus_wav(const std::string& path, int sample_rate) {
    SF_INFO info{};
    SNDFILE* file = sf_open(path.c_str(), SFM_READ, &info);
    if (!file) return std::nullopt;
    sf_close(file);
    if (info.channels != 1 || info.samplerate != sample_rate || info.frames <= 0) return std::nullopt;
    return static_cast<double>(info.frames) / info.samplerate;
}

}  // namespace cadenza::speech_corpus
