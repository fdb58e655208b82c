#include "mel_stream_decoder.h"

#include <algorithm>
#include <stdexcept>

namespace cadenza::mel_fsq {

MelStreamDecoder::MelStreamDecoder(const MelFsqCodec& codec, StreamOptions options)
    : codec_(codec), options_(options), mel_decoder_(codec) {
    if (options_.chunk_frames < 1 || options_.overlap_frames < 0 || options_.last_iterations < 0)
        throw std::invalid_argument("stream chunk_frames must be >= 1, overlap_frames and last_iterations >= 0");
}

std::vector<float> MelStreamDecoder::push(const at::Tensor& codes, bool is_last) {
    if (finished_) throw std::logic_error("the stream has already ended");
    if (codes.dim() != 1) throw std::invalid_argument("codes must be one-dimensional [frames]");
    const at::Tensor c = codes.to(at::kCPU, at::kLong).contiguous();
    mel_decoder_.push(c, is_last);
    frames_ += c.numel();
    finished_ = is_last;

    const MelCodecConfig& config = codec_.config();
    const int64_t hop = config.hop_length;
    const int64_t frames = frames_;
    const int64_t total = frames >= 2 ? (frames - 1) * hop : 0;
    const int64_t final_frames = mel_decoder_.final_frames();
    // Samples near the right end of a window still lack the frames after it.
    const int64_t guard = config.n_fft / 2;
    const int64_t cut = is_last ? total : std::max<int64_t>(0, (final_frames - 1) * hop - guard);
    if (!is_last && cut - emitted_ < options_.chunk_frames * hop) return {};
    if (cut <= emitted_) return {};

    const int64_t begin = std::max<int64_t>(0, emitted_ / hop - options_.overlap_frames);
    const int64_t end = final_frames;
    if (end - begin < 2) {
        std::vector<float> silence(static_cast<size_t>(std::max<int64_t>(0, cut - emitted_)), 0.0f);
        emitted_ = std::max(emitted_, cut);
        return silence;
    }
    const at::Tensor log_mel = mel_decoder_.log_mel(begin, end);
    const at::Tensor magnitude = codec_.analysis().magnitude_from_log_mel(log_mel);

    // Phases of the frames whose analysis window lies within emitted audio.
    at::Tensor phase = at::zeros({magnitude.size(0), 0}, at::kFloat);
    const int64_t known_length = emitted_ - begin * hop;
    if (known_length > config.n_fft && begin * hop >= history_start_) {
        const int64_t whole = (known_length - config.n_fft / 2) / hop + 1;
        const at::Tensor known = at::from_blob(history_.data() + (begin * hop - history_start_), {known_length},
                                               at::kFloat);
        phase = stft_phases(known, codec_.analysis().window(), StftShape{config.n_fft, hop, config.win_length},
                            std::min<int64_t>(whole, known_length / hop + 1));
    }
    GriffinLimOptions griffin_lim = options_.griffin_lim;
    if (is_last && options_.last_iterations > 0) griffin_lim.iterations = options_.last_iterations;
    const at::Tensor audio = griffin_lim_from(magnitude.to(at::kFloat), phase, codec_.analysis().window(),
                                              StftShape{config.n_fft, hop, config.win_length}, griffin_lim)
                                 .contiguous();
    const float* samples = audio.data_ptr<float>();
    const int64_t window_start = begin * hop, window_length = audio.numel();

    std::vector<float> out;
    const int64_t stop = std::min(cut, window_start + window_length);
    for (int64_t n = emitted_; n < stop; ++n) {
        float value = samples[n - window_start];
        const int64_t into_tail = n - emitted_;
        if (into_tail < static_cast<int64_t>(tail_.size())) {
            const float fade_in = static_cast<float>(into_tail + 1) / static_cast<float>(tail_.size() + 1);
            value = fade_in * value + (1.0f - fade_in) * tail_[static_cast<size_t>(into_tail)];
        }
        out.push_back(value);
    }
    // Past the window (only at the very end with fewer frames than a window): silence.
    for (int64_t n = stop; n < cut; ++n) out.push_back(0.0f);
    tail_.clear();
    for (int64_t n = cut; n < std::min(cut + hop, window_start + window_length); ++n)
        tail_.push_back(samples[n - window_start]);

    history_.insert(history_.end(), out.begin(), out.end());
    emitted_ = cut;
    // Keep enough emitted audio for the next window's overlap.
    const int64_t keep_from = std::max<int64_t>(0, (emitted_ / hop - options_.overlap_frames - 1) * hop);
    if (keep_from > history_start_) {
        history_.erase(history_.begin(), history_.begin() + (keep_from - history_start_));
        history_start_ = keep_from;
    }
    return out;
}

}  // namespace cadenza::mel_fsq
