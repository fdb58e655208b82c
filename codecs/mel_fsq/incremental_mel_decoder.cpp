#include "incremental_mel_decoder.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "mel_fsq_codec.h"

namespace cadenza::mel_fsq {

void IncrementalMelDecoder::GrowingFrames::append(const at::Tensor& more) {
    const int64_t needed = count + more.size(1);
    if (needed > frames.size(1)) {
        at::Tensor grown = at::empty({frames.size(0), std::max<int64_t>(needed, 2 * frames.size(1))}, frames.options());
        grown.narrow(1, 0, count).copy_(frames.narrow(1, 0, count));
        frames = grown;
    }
    frames.narrow(1, count, more.size(1)).copy_(more);
    count = needed;
}

IncrementalMelDecoder::IncrementalMelDecoder(const MelFsqCodec& codec)
    : pad_(codec.config().kernel_size / 2),
      mel_mean_(codec.mel_mean()),
      mel_std_(codec.mel_std()),
      codec_(codec) {
    const MelCodecConfig& config = codec.config();
    const auto& tensors = codec.model().tensors();
    std::vector<std::string> names{"decoder.input"};
    for (int64_t b = 0; b < config.decoder_blocks; ++b)
        for (const char* conv : {".conv1", ".conv2"}) names.push_back("decoder.blocks." + std::to_string(b) + conv);
    names.push_back("decoder.output");
    for (const std::string& name : names) {
        const at::Tensor& weight = tensors.at(name + ".weight");  // [out, in, kernel], contiguous
        Convolution conv;
        conv.weight = weight.reshape({weight.size(0), -1});
        conv.bias = tensors.at(name + ".bias");
        conv.kernel = weight.size(2);
        conv.input.frames = at::zeros({weight.size(1), 64}, weight.options());
        conv.input.count = pad_;  // the zeros before the first frame
        convs_.push_back(std::move(conv));
    }
    const at::TensorOptions options = convs_.front().weight.options();
    residuals_.resize(static_cast<size_t>(config.decoder_blocks) + 1);
    for (GrowingFrames& residual : residuals_) residual.frames = at::empty({config.width, 64}, options);
    mel_.frames = at::empty({config.n_mels, 64}, options);
}

void IncrementalMelDecoder::push(const at::Tensor& codes, bool is_last) {
    if (convs_.front().input_ended) throw std::logic_error("the code sequence has already ended");
    if (codes.numel() > 0) {
        const at::Tensor values = codec_.quantizer().values(codes.to(mel_mean_.device(), at::kLong).reshape({1, -1}));
        convs_.front().input.append(values.squeeze(0));
    }
    if (is_last) end_input(convs_.front());
    for (size_t c = 0; c < convs_.size(); ++c) {
        take_output(c, advance(convs_[c]));
        const Convolution& conv = convs_[c];
        if (conv.input_ended && conv.computed == conv.input.count - 2 * pad_ && c + 1 < convs_.size())
            end_input(convs_[c + 1]);
    }
}

void IncrementalMelDecoder::end_input(Convolution& conv) const {
    conv.input.append(at::zeros({conv.input.frames.size(0), pad_}, conv.input.frames.options()));
    conv.input_ended = true;
}

// Output frame t reads input frames t .. t + 2 * pad (counting the leading
// padding): im2col's matrix [count, in * kernel] is a strided view of them.
at::Tensor IncrementalMelDecoder::advance(Convolution& conv) const {
    const int64_t frames = conv.input.count - (conv.input_ended ? 2 * pad_ : pad_);
    const int64_t ready = conv.input_ended ? frames : frames - pad_;
    const int64_t count = std::max<int64_t>(0, ready - conv.computed);
    if (count == 0) return at::empty({conv.weight.size(0), 0}, conv.weight.options());
    const at::Tensor& input = conv.input.frames;
    const at::Tensor columns =
        input.as_strided({count, input.size(0), conv.kernel}, {1, input.stride(0), 1}, input.storage_offset() + conv.computed)
            .reshape({count, -1});
    conv.computed += count;
    return at::addmm(conv.bias, columns, conv.weight.t()).t();  // [out, count]
}

void IncrementalMelDecoder::take_output(size_t index, const at::Tensor& out) {
    if (out.size(1) == 0) return;
    const size_t last = convs_.size() - 1;
    if (index == last) {
        mel_.append(out * mel_std_.unsqueeze(1) + mel_mean_.unsqueeze(1));
        return;
    }
    at::Tensor stream = out;  // what the next convolution reads, before its gelu
    if (index == 0) {
        residuals_[0].append(out);
    } else if (index % 2 == 0) {  // conv2 of block (index - 2) / 2: the residual sum
        const size_t block = (index - 2) / 2;
        const int64_t first = residuals_[block + 1].count;
        stream = residuals_[block].view(first, first + out.size(1)) + out;
        residuals_[block + 1].append(stream);
    }
    convs_[index + 1].input.append(at::gelu(stream));
}

at::Tensor IncrementalMelDecoder::log_mel(int64_t begin, int64_t end) const {
    if (begin < 0 || end > mel_.count || begin > end)
        throw std::out_of_range("log-mel frames " + std::to_string(begin) + ".." + std::to_string(end) +
                                " of " + std::to_string(mel_.count) + " final");
    return mel_.view(begin, end).contiguous();
}

}  // namespace cadenza::mel_fsq
