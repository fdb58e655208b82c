#include "mel_convolution_stack.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "int8_panels.h"
#include "parallel_parts.h"
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

MelConvolutionStack::MelConvolutionStack(const MelAutoencoder& model, const std::string& side,
                                         llama::PanelPrecision precision) {
    if (precision == llama::PanelPrecision::int8 && !llama::int8_panels_supported())
        throw std::invalid_argument("int8 convolution weights need AVX-512 VNNI or AVX2, which this CPU does not have");
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
    if (llama::combine_rows_vectorized()) panels_ = llama::PanelSet::pack(matrices, precision);
}

llama::PanelPrecision MelConvolutionStack::precision() const {
    if (panels_.matrices.empty()) return llama::PanelPrecision::float32;
    const llama::PanelMatrix& first = panels_.matrices.front();
    return first.int8() ? llama::PanelPrecision::int8
           : first.half() ? llama::PanelPrecision::float16
                          : llama::PanelPrecision::float32;
}

void MelConvolutionStack::apply(size_t index, const float* x, int64_t count, float* y) const {
    const Convolution& conv = convolutions_[index];
    const int64_t window = conv.kernel * conv.in;
    if (count <= 0) return;
    if (!panels_.matrices.empty())
        llama::combine_panels(x, count, conv.in, panels_.matrices[index], conv.bias.data_ptr<float>(), y, conv.out);
    else
        llama::small_matmul_rows(llama::best_matmul_kernel(), x, count, conv.in, conv.weight.data_ptr<float>(), conv.out,
                                 window, conv.bias.data_ptr<float>(), y, conv.out, /*split=*/false);
}

namespace {

// Below this many frames a second thread costs more than it saves.
constexpr int64_t min_frames_per_thread = 16;

}  // namespace

at::Tensor MelConvolutionStack::run(const at::Tensor& input, int threads) const {
    const at::Tensor rows = input.to(at::kCPU, at::kFloat).t().contiguous();  // [frames, channels]
    const int64_t frames = rows.size(0);
    if (frames == 0) return at::zeros({convolutions_.back().out, 0}, at::kFloat);
    // Only the panel kernel computes each row alike whatever the rows around
    // it; the row kernels group rows by their count.
    const bool rows_independent = !panels_.matrices.empty();
    const int parts = rows_independent ? static_cast<int>(std::clamp<int64_t>(
                                       std::min<int64_t>(threads, frames / min_frames_per_thread), 1, 64))
                                 : 1;
    int64_t widest = 0, largest_pad = 0;
    for (const Convolution& conv : convolutions_) {
        widest = std::max({widest, conv.in, conv.out});
        largest_pad = std::max(largest_pad, conv.kernel / 2);
    }
    // Two padded inputs in turn: one thread may fill convolution c + 1's
    // while another still reads convolution c's.
    std::vector<float> padded[2], scratch(static_cast<size_t>(frames * widest));
    for (std::vector<float>& p : padded) p.resize(static_cast<size_t>((frames + 2 * largest_pad) * widest));
    std::vector<float> x(static_cast<size_t>(frames * widest)), h(x.size()), change(x.size());
    // Part `part`'s rows of every convolution: its input rows (gelu first
    // when asked) into the padded buffer, then, once every part has done
    // so, its output rows. Every row is computed as on one thread.
    llama::run_parts(parts, [&](int part, int parts_running, llama::PartBarrier& barrier) {
        const int64_t begin = llama::part_begin(frames, part, parts_running);
        const int64_t end = llama::part_begin(frames, part + 1, parts_running);
        auto convolve = [&](size_t index, const float* in, bool with_gelu, float* out) {
            const Convolution& conv = convolutions_[index];
            const int64_t pad = conv.kernel / 2;
            float* buffer = padded[index % 2].data();
            if (part == 0) {  // the zero rows before and after
                std::fill_n(buffer, pad * conv.in, 0.0f);
                std::fill_n(buffer + (pad + frames) * conv.in, pad * conv.in, 0.0f);
            }
            float* inside = buffer + (pad + begin) * conv.in;
            const float* from = in + begin * conv.in;
            const int64_t count = (end - begin) * conv.in;
            if (with_gelu)
                gelu_rows(from, count, inside, scratch.data() + begin * conv.in);
            else
                std::copy_n(from, count, inside);
            if (parts_running > 1) barrier.arrive_and_wait();
            apply(index, buffer + begin * conv.in, end - begin, out + begin * conv.out);
        };
        convolve(0, rows.data_ptr<float>(), false, x.data());
        const int64_t channels = convolutions_[0].out;
        for (size_t c = 1; c + 1 < convolutions_.size(); c += 2) {
            convolve(c, x.data(), true, h.data());
            convolve(c + 1, h.data(), true, change.data());
            for (int64_t i = begin * channels; i < end * channels; ++i) x[i] += change[i];
        }
        convolve(convolutions_.size() - 1, x.data(), true, h.data());
    });
    const int64_t channels = convolutions_.back().out;
    // A copy: contiguous() of a one-frame view would keep pointing into `h`.
    return at::from_blob(h.data(), {frames, channels}, at::kFloat).t().clone(at::MemoryFormat::Contiguous);
}

}  // namespace cadenza::mel_fsq
