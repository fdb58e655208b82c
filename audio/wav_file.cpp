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
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (!std::filesystem::exists(status)) throw AudioFileError(path + ": cannot read audio: no such file");
    if (!std::filesystem::is_regular_file(status))
        throw AudioFileError(path + ": cannot read audio: not a regular file (a directory, FIFO, device or socket)");

    SF_INFO info{};
    SoundFile file(sf_open(path.c_str(), SFM_READ, &info));
    if (!file) throw AudioFileError(path + ": cannot read audio: " + sf_strerror(nullptr));
    if (info.channels < 1 || info.samplerate <= 0) throw AudioFileError(path + ": audio file has no channels or no sample rate");
    if (info.channels > max_audio_channels)
        throw AudioFileError(path + ": audio file has " + std::to_string(info.channels) + " channels; cadenza reads at most " +
                             std::to_string(max_audio_channels));
    const int64_t frame_limit =
        std::min<int64_t>(static_cast<int64_t>(max_audio_seconds) * info.samplerate, max_audio_samples / info.channels);
    if (info.frames < 0 || info.frames > frame_limit)
        throw AudioFileError(path + ": audio file declares " + std::to_string(info.frames) + " frames at " +
                             std::to_string(info.samplerate) + " Hz; cadenza reads at most " +
                             std::to_string(static_cast<int64_t>(max_audio_seconds)) + " s and " +
                             std::to_string(max_audio_samples) + " samples");

    // In blocks, so that memory follows the samples the file really holds,
    // not the count its header declares.
    const sf_count_t block_frames = std::max(1, 65536 / info.channels);
    std::vector<float> block(static_cast<size_t>(block_frames) * info.channels);
    Waveform waveform;
    waveform.sample_rate = info.samplerate;
    while (static_cast<int64_t>(waveform.samples.size()) < info.frames) {
        const sf_count_t wanted = std::min<sf_count_t>(block_frames, info.frames - waveform.samples.size());
        const sf_count_t read = sf_readf_float(file.get(), block.data(), wanted);
        for (sf_count_t frame = 0; frame < read; ++frame) {
            float sum = 0.0f;
            for (int channel = 0; channel < info.channels; ++channel) sum += block[frame * info.channels + channel];
            waveform.samples.push_back(sum / static_cast<float>(info.channels));
        }
        if (read < wanted)
            throw AudioFileError(path + ": audio file is truncated (" + std::to_string(waveform.samples.size()) + " of " +
                                 std::to_string(info.frames) + " frames)");
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
