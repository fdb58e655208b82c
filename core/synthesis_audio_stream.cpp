#include "synthesis_audio_stream.h"

#include "codec_calls.h"
#include "decoding_stats.h"
#include "error.h"
#include "status_object.h"

namespace cadenza {
namespace {

// Frames decoded at once: 200 ms at 50 frames per second.
constexpr size_t chunk_frames = 10;
// Chunks the loop may run ahead of the audio handed to the callback.
constexpr size_t chunks_ahead = 1;

}  // namespace

SynthesisAudioStream::SynthesisAudioStream(const PluginInstance& codec, const cdz_codec_info& info, Callback on_audio,
                                           bool decode_thread)
    : codec_(codec), info_(info), on_audio_(std::move(on_audio)) {
    const auto& vtable = codec.vtable<cdz_codec_vtable>();
    void* stream = nullptr;
    throw_if_error(vtable.stream_create(codec.context(), &stream), codec.name());
    stream_ = std::make_unique<PluginSession>(stream, vtable.stream_destroy);
    if (decode_thread)
        thread_ = std::make_unique<AudioDecodeThread>([this](const std::vector<int32_t>& codes, bool last) {
            const ManagedTensor audio =
                decode_stream_piece(codec_, stream_->get(), codes.data(), static_cast<int64_t>(codes.size()), last);
            return std::vector<float>(audio.data<float>(), audio.data<float>() + audio.dl().shape[0]);
        });
}

SynthesisAudioStream::~SynthesisAudioStream() = default;

void SynthesisAudioStream::after_step(const std::vector<int32_t>& codes) { cut(codes, false); }

void SynthesisAudioStream::finish(const std::vector<int32_t>& codes) { cut(codes, true); }

double SynthesisAudioStream::codec_seconds() const {
    return thread_ ? thread_->decode_seconds() : inline_codec_seconds_;
}

void SynthesisAudioStream::cut(const std::vector<int32_t>& codes, bool last) {
    if (last || codes.size() - streamed_frames_ >= chunk_frames) {
        std::vector<int32_t> chunk(codes.begin() + static_cast<std::ptrdiff_t>(streamed_frames_), codes.end());
        streamed_frames_ = codes.size();
        if (thread_) {
            thread_->submit(std::move(chunk), last);
            ++chunks_submitted_;
        } else {
            ManagedTensor audio;
            {
                ScopedTimer decoding(inline_codec_seconds_);
                audio = decode_stream_piece(codec_, stream_->get(), chunk.data(), static_cast<int64_t>(chunk.size()), last);
            }
            deliver(audio.data<float>(), static_cast<size_t>(audio.dl().shape[0]));
        }
    }
    if (!thread_) return;
    if (last) {
        deliver(thread_->finish());
        return;
    }
    deliver(thread_->take_ready());
    while (chunks_submitted_ - chunks_delivered_ > chunks_ahead) deliver(thread_->wait_ready());
}

void SynthesisAudioStream::deliver(const std::vector<std::vector<float>>& pieces) {
    for (const std::vector<float>& piece : pieces) {
        ++chunks_delivered_;
        deliver(piece.data(), piece.size());
    }
}

void SynthesisAudioStream::deliver(const float* samples, size_t count) {
    audio_seconds_ += static_cast<double>(count) / info_.sample_rate;
    if (count > 0 && !on_audio_(samples, count))
        throw Error(CDZ_STATUS_CANCELLED, "synthesis cancelled by the audio callback");
}

}  // namespace cadenza
