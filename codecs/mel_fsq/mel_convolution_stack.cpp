#include "mel_convolution_stack.h"

#include <algorithm>
#include <cmath>

#include "probability_row.h"
#include "row_combinations.h"
#include "small_matmul.h"

namespace cadenza::mel_fsq {

void gelu_rows(const float* x, int64_t count, float* out, float* scratch) {
    constexpr float inverse_sqrt2 = 0.70710678118654752f;
    for (int64_t i = 0; i < count; ++i) scratch[i] = 0.5f * x[i] * x[i];  // u^2, u = x / sqrt 2
    exponentiate_row(scratch, scratch, count, 0.0f, -1.0f);                // exp(-u^2)
    for (int64_t i = 0; i < count; ++i) {
        const float u = std::fabs(x[i]) * inverse_sqrt2;
        const float t = 1.0f / (1.0f + 0.3275911f * u);
        const float poly =
            t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
        const float erf = std::copysign(1.0f - poly * scratch[i], x[i]);
        out[i] = 0.5f * x[i] * (1.0f + erf);
    }
}

MelConvolutionStack::MelConvolutionStack(const MelAutoencoder& model, const std::string& side) {
    const MelCodecConfig& config = model.config();
    const int64_t blocks = side == "encoder" ? config.encoder_blocks : config.decoder_blocks;
    std::vector<std::string> names{side + ".input"};
    for (int64_t b = 0; b < blocks; ++b)
        for (const char* conv : {".conv1", ".conv2"}) names.push_back(side + ".blocks." + std::to_string(b) + conv);
    names.push_back(side + ".output");
    std::vector<at::Tensor> matrices;
    for (const std::string& name : names) {
        const at::Tensor weight = model.tensors().at(name + ".weight").to(at::kCPU, at::kFloat);  // [out, in, kernel]
        Convolution conv;
        conv.out = weight.size(0);
        conv.in = weight.size(1);
        conv.kernel = weight.size(2);
        conv.weight = weight.permute({0, 2, 1}).reshape({conv.out, conv.kernel * conv.in}).contiguous();
        conv.bias = model.tensors().at(name + ".bias").to(at::kCPU, at::kFloat).contiguous();
        matrices.push_back(conv.weight);
        convolutions_.push_back(std::move(conv));
    }
    if (llama::combine_rows_vectorized()) panels_ = llama::PanelSet::pack(matrices);
}

void MelConvolutionStack::apply(size_t index, const float* x, int64_t count, float* y) const {
    const Convolution& conv = convolutions_[index];
    const int64_t window = conv.kernel * conv.in;
    if (count <= 0) return;
    if (!panels_.matrices.empty())
        llama::combine_panels(x, count, conv.in, panels_.matrices[index].data(), window, conv.out,
                              conv.bias.data_ptr<float>(), y, conv.out);
    else
        llama::small_matmul_rows(llama::best_matmul_kernel(), x, count, conv.in, conv.weight.data_ptr<float>(), conv.out,
                                 window, conv.bias.data_ptr<float>(), y, conv.out, /*split=*/false);
}

at::Tensor MelConvolutionStack::run(const at::Tensor& input) const {
    const at::Tensor rows = input.to(at::kCPU, at::kFloat).t().contiguous();  // [frames, channels]
    const int64_t frames = rows.size(0);
    if (frames == 0) return at::zeros({convolutions_.back().out, 0}, at::kFloat);
    std::vector<float> padded, scratch;
    // Convolution `index` of `count`-wide rows (gelu first when asked) into `out`.
    auto convolve = [&](size_t index, const float* x, bool with_gelu, std::vector<float>& out) {
        const Convolution& conv = convolutions_[index];
        const int64_t pad = conv.kernel / 2;
        padded.assign(static_cast<size_t>((frames + 2 * pad) * conv.in), 0.0f);
        float* inside = padded.data() + pad * conv.in;
        if (with_gelu) {
            scratch.resize(static_cast<size_t>(frames * conv.in));
            gelu_rows(x, frames * conv.in, inside, scratch.data());
        } else {
            std::copy_n(x, frames * conv.in, inside);
        }
        out.resize(static_cast<size_t>(frames * conv.out));
        apply(index, padded.data(), frames, out.data());
    };
    std::vector<float> x, h, change;
    convolve(0, rows.data_ptr<float>(), false, x);
    for (size_t c = 1; c + 1 < convolutions_.size(); c += 2) {
        convolve(c, x.data(), true, h);
        convolve(c + 1, h.data(), true, change);
        for (size_t i = 0; i < x.size(); ++i) x[i] += change[i];
    }
    convolve(convolutions_.size() - 1, x.data(), true, h);
    const int64_t channels = convolutions_.back().out;
    // A copy: contiguous() of a one-frame view would keep pointing into `h`.
    return at::from_blob(h.data(), {frames, channels}, at::kFloat).t().clone(at::MemoryFormat::Contiguous);
}

}  // namespace cadenza::mel_fsq
