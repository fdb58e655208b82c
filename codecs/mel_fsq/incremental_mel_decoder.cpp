#include "incremental_mel_decoder.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mel_convolution_stack.h"
#include "mel_fsq_codec.h"

namespace cadenza::mel_fsq {
namespace {

std::vector<float> to_floats(const at::Tensor& t) {
    const at::Tensor values = t.to(at::kCPU, at::kFloat).contiguous();
    return std::vector<float>(values.data_ptr<float>(), values.data_ptr<float>() + values.numel());
}

}  // namespace

float* IncrementalMelDecoder::Frames::append(int64_t rows) {
    count += rows;
    values.resize(static_cast<size_t>(count * width));
    return row(count - rows);
}

IncrementalMelDecoder::IncrementalMelDecoder(const MelFsqCodec& codec)
    : codec_(codec),
      convolutions_(codec.decoder_stack()),
      pad_(codec.config().kernel_size / 2),
      mel_mean_(to_floats(codec.mel_mean())),
      mel_std_(to_floats(codec.mel_std())) {
    const MelCodecConfig& config = codec.config();
    for (size_t c = 0; c < convolutions_.size(); ++c) {
        Stage stage;
        stage.input.width = convolutions_[c].in;
        std::fill_n(stage.input.append(pad_), pad_ * stage.input.width, 0.0f);  // the zeros before the first frame
        stages_.push_back(std::move(stage));
    }
    residuals_.resize(static_cast<size_t>(config.decoder_blocks) + 1);
    for (Frames& residual : residuals_) residual.width = config.width;
    mel_.width = config.n_mels;
}

void IncrementalMelDecoder::push(const at::Tensor& codes, bool is_last) {
    if (stages_.front().input_ended) throw std::logic_error("the code sequence has already ended");
    if (codes.numel() > 0) {
        // [1, dims, frames] -> time-major rows
        const at::Tensor values = codec_.quantizer()
                                      .values(codes.to(at::kCPU, at::kLong).reshape({1, -1}))
                                      .squeeze(0)
                                      .t()
                                      .to(at::kCPU, at::kFloat)
                                      .contiguous();
        Frames& input = stages_.front().input;
        std::copy_n(values.data_ptr<float>(), values.numel(), input.append(values.size(0)));
    }
    if (is_last) end_input(stages_.front());
    for (size_t c = 0; c < stages_.size(); ++c) {
        advance(c);
        const Stage& stage = stages_[c];
        if (stage.input_ended && stage.computed == stage.input.count - 2 * pad_ && c + 1 < stages_.size())
            end_input(stages_[c + 1]);
    }
}

void IncrementalMelDecoder::end_input(Stage& stage) const {
    std::fill_n(stage.input.append(pad_), pad_ * stage.input.width, 0.0f);
    stage.input_ended = true;
}

// Output frame t reads input rows t .. t + 2 * pad (counting the leading padding).
void IncrementalMelDecoder::advance(size_t index) {
    Stage& stage = stages_[index];
    const int64_t frames = stage.input.count - (stage.input_ended ? 2 * pad_ : pad_);
    const int64_t ready = stage.input_ended ? frames : frames - pad_;
    const int64_t count = std::max<int64_t>(0, ready - stage.computed);
    if (count == 0) return;
    output_.resize(static_cast<size_t>(count * convolutions_[index].out));
    convolutions_.apply(index, stage.input.row(stage.computed), count, output_.data());
    stage.computed += count;
    take_output(index, output_.data(), count);
}

void IncrementalMelDecoder::take_output(size_t index, const float* out, int64_t count) {
    const int64_t width = convolutions_[index].out;
    if (index + 1 == stages_.size()) {
        float* mel = mel_.append(count);
        for (int64_t t = 0; t < count; ++t)
            for (int64_t b = 0; b < width; ++b)
                mel[t * width + b] = out[t * width + b] * mel_std_[b] + mel_mean_[b];
        return;
    }
    const float* stream = out;  // what the next convolution reads, before its gelu
    if (index == 0) {
        std::copy_n(out, count * width, residuals_[0].append(count));
    } else if (index % 2 == 0) {  // conv2 of block (index - 2) / 2: the residual sum
        const size_t block = (index - 2) / 2;
        const int64_t first = residuals_[block + 1].count;
        const float* before = residuals_[block].row(first);
        float* sum = residuals_[block + 1].append(count);
        for (int64_t i = 0; i < count * width; ++i) sum[i] = before[i] + out[i];
        stream = sum;
    }
    gelu_scratch_.resize(static_cast<size_t>(count * width));
    gelu_rows(stream, count * width, stages_[index + 1].input.append(count), gelu_scratch_.data());
}

at::Tensor IncrementalMelDecoder::log_mel(int64_t begin, int64_t end) const {
    if (begin < 0 || end > mel_.count || begin > end)
        throw std::out_of_range("log-mel frames " + std::to_string(begin) + ".." + std::to_string(end) + " of " +
                                std::to_string(mel_.count) + " final");
    const at::Tensor rows = at::from_blob(const_cast<float*>(mel_.row(begin)), {end - begin, mel_.width}, at::kFloat);
    return rows.t().clone(at::MemoryFormat::Contiguous);  // a copy, even of one frame
}

}  // namespace cadenza::mel_fsq
