// The audio of a streaming synthesis: the codes cut into chunks at step
// boundaries (10 frames or more, the rest at the end), decoded by the codec's
// stream, and handed to the audio callback on the synthesis thread, one call
// per chunk. With a decode thread (the pipeline's codec_thread) the codec
// decodes beside the decoding loop and the chunks it finished are handed
// over at the next step; the loop runs at most one chunk ahead of the
// audio it handed over (it waits otherwise), so that a callback that cancels
// stops it within a few chunks and a slow codec holds no backlog. Without,
// each chunk is decoded between steps. The chunks depend on the codes alone,
// so the audio and the calls are the same either way; only when they come
// differs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "audio_decode_thread.h"
#include "cadenza/plugin.h"
#include "engine_stages.h"
#include "plugin_instance.h"

namespace cadenza {

class SynthesisAudioStream {
public:
    // Returns false to cancel the synthesis.
    using Callback = std::function<bool(const float* samples, size_t count)>;

    // `codec` must stream (info.can_stream).
    SynthesisAudioStream(const PluginInstance& codec, const cdz_codec_info& info, Callback on_audio, bool decode_thread);
    ~SynthesisAudioStream();

    // After a step, with every frame so far: a chunk when 10 or more are new,
    // then the audio that is ready. Throws Error(CANCELLED) when the callback
    // says so, or the codec's error.
    void after_step(const std::vector<int32_t>& codes);
    // After the last token: the last chunk, and every chunk's audio delivered.
    void finish(const std::vector<int32_t>& codes);

    double codec_seconds() const;  // the codec's decoding time (beside the loop with a decode thread)
    double audio_seconds() const { return audio_seconds_; }

private:
    void cut(const std::vector<int32_t>& codes, bool last);
    void deliver(const std::vector<std::vector<float>>& pieces);
    void deliver(const float* samples, size_t count);

    const PluginInstance& codec_;
    cdz_codec_info info_;
    Callback on_audio_;
    std::unique_ptr<PluginSession> stream_;
    std::unique_ptr<AudioDecodeThread> thread_;  // after stream_: stops before the stream goes
    size_t streamed_frames_ = 0;
    size_t chunks_submitted_ = 0, chunks_delivered_ = 0;  // with the decode thread
    double inline_codec_seconds_ = 0.0;
    double audio_seconds_ = 0.0;
};

}  // namespace cadenza
