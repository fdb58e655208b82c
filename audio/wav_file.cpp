#include "wav_file.h"

#include <sndfile.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "replacing_file.h"

namespace cadenza::audio {
namespace {

struct SoundFileCloser {
    void operator()(SNDFILE* file) const { sf_close(file); }
};
using SoundFile = std::unique_ptr<SNDFILE, SoundFileCloser>;

}  // namespace

Waveform read_waveform(const std::string& path) {
    SF_INFO info{};
    SoundFile file(sf_open(path.c_str(), SFM_READ, &info));
    if (!file) throw AudioFileError(path + ": cannot read audio: " + sf_strerror(nullptr));
    if (info.channels < 1 || info.samplerate <= 0) throw AudioFileError(path + ": audio file has no channels or no sample rate");

    std::vector<float> interleaved(static_cast<size_t>(info.frames) * info.channels);
    const sf_count_t read = sf_readf_float(file.get(), interleaved.data(), info.frames);
    if (read != info.frames) throw AudioFileError(path + ": audio file is truncated (" + std::to_string(read) + " of " +
                                                                                                        std::to_string(info.frames) + " frames)");
    Waveform waveform;
    waveform.sample_rate = info.samplerate;
    waveform.samples.resize(static_cast<size_t>(info.frames));
    for (size_t frame = 0; frame < waveform.samples.size(); ++frame) {
        float sum = 0.0f;
        for (int channel = 0; channel < info.channels; ++channel) sum += interleaved[frame * info.channels + channel];
        waveform.samples[frame] = sum / static_cast<float>(info.channels);
    }
    return waveform;
}

void write_waveform(const std::string& path, const Waveform& waveform) {
    if (waveform.sample_rate <= 0) throw AudioFileError(path + ": cannot write audio without a sample rate");
    file_output::ReplacingFile output(path);
    const std::string temporary = output.write_path().string();
    {
        SF_INFO info{};
        info.samplerate = waveform.sample_rate;
        info.channels = 1;
        info.format = SF_FORMAT_WAV | SF_FORMAT_PCM_16;
        SoundFile file(sf_open(temporary.c_str(), SFM_WRITE, &info));
        if (!file) throw AudioFileError(path + ": cannot write audio: " + sf_strerror(nullptr));
        sf_command(file.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);
        const auto count = static_cast<sf_count_t>(waveform.samples.size());
        if (sf_writef_float(file.get(), waveform.samples.data(), count) != count) {
            const std::string reason = sf_strerror(file.get());
            throw AudioFileError(path + ": writing audio failed: " + reason);
        }
    }
    output.commit();
}

}  // namespace cadenza::audio
