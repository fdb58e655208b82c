#include "conv_layers.h"

#include <cmath>

#include <ATen/ops/_weight_norm.h>
#include <ATen/ops/conv1d.h>
#include <ATen/ops/conv_transpose1d.h>
#include <ATen/ops/dot.h>
#include <ATen/ops/group_norm.h>
#include <ATen/ops/mv.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "padding.h"

namespace cadenza::seanet {

namespace {

at::Tensor last_samples(const at::Tensor& x, int64_t count) {
    if (count == 0) return {};
    return x.narrow(-1, x.size(-1) - count, count);
}

// spectral_norm in eval mode: no power iteration, sigma = u . (W v) with W
// the weight as a matrix whose rows run over dimension `dim`.
at::Tensor spectral_normalized(const at::Tensor& weight, const at::Tensor& u, const at::Tensor& v, int64_t dim) {
    at::Tensor matrix = dim == 0 ? weight : weight.transpose(0, dim);
    matrix = matrix.reshape({matrix.size(0), -1});
    const at::Tensor sigma = at::dot(u, at::mv(matrix, v));
    return weight / sigma;
}

}  // namespace

ConvSpec conv_spec(const SeanetConfig& config, int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                   int64_t stride, int64_t dilation) {
    ConvSpec spec;
    spec.in_channels = in_channels;
    spec.out_channels = out_channels;
    spec.kernel_size = kernel_size;
    spec.stride = stride;
    spec.dilation = dilation;
    spec.causal = config.causal;
    spec.pad_mode = config.pad_mode;
    spec.norm = config.norm;
    spec.group_norm_eps = config.group_norm_eps;
    spec.group_norm_affine = config.group_norm_affine;
    spec.trim_right_ratio = config.trim_right_ratio;
    return spec;
}

NormalizedConvWeights NormalizedConvWeights::load(const ConvSpec& spec, bool transposed, const std::string& prefix,
                                                  ParameterSource& source) {
    const std::string conv = prefix + (transposed ? ".convtr" : ".conv");
    const Shape shape = transposed ? Shape{spec.in_channels, spec.out_channels, spec.kernel_size}
                                   : Shape{spec.out_channels, spec.in_channels, spec.kernel_size};
    NormalizedConvWeights w;
    // Taken in the order of the reference's state_dict.
    switch (spec.norm) {
    case ConvNorm::weight_norm: {
        w.bias = source.take(conv + ".bias", {spec.out_channels}, ParameterRole::bias);
        const at::Tensor g = source.take(conv + ".weight_g", {shape[0], 1, 1}, ParameterRole::weight_norm_gain);
        const at::Tensor v = source.take(conv + ".weight_v", shape, ParameterRole::conv_weight);
        // The norm runs over every dimension but 0, for transposed convolutions too.
        w.weight = at::_weight_norm(v, g, 0);
        break;
    }
    case ConvNorm::spectral_norm: {
        w.bias = source.take(conv + ".bias", {spec.out_channels}, ParameterRole::bias);
        const at::Tensor weight = source.take(conv + ".weight_orig", shape, ParameterRole::conv_weight);
        const int64_t dim = transposed ? 1 : 0;  // torch's spectral_norm default for ConvTranspose
        const int64_t rows = shape[dim];
        const int64_t columns = shape[0] * shape[1] * shape[2] / rows;
        const at::Tensor u = source.take(conv + ".weight_u", {rows}, ParameterRole::spectral_vector);
        const at::Tensor v = source.take(conv + ".weight_v", {columns}, ParameterRole::spectral_vector);
        w.weight = spectral_normalized(weight, u, v, dim);
        break;
    }
    case ConvNorm::none:
    case ConvNorm::time_group_norm:
        w.weight = source.take(conv + ".weight", shape, ParameterRole::conv_weight);
        w.bias = source.take(conv + ".bias", {spec.out_channels}, ParameterRole::bias);
        break;
    }
    if (spec.norm == ConvNorm::time_group_norm && spec.group_norm_affine) {
        w.norm_scale = source.take(prefix + ".norm.weight", {spec.out_channels}, ParameterRole::norm_scale);
        w.norm_shift = source.take(prefix + ".norm.bias", {spec.out_channels}, ParameterRole::norm_shift);
    }
    return w;
}

at::Tensor NormalizedConvWeights::normalize(const ConvSpec& spec, const at::Tensor& x) const {
    if (spec.norm != ConvNorm::time_group_norm) return x;
    return at::group_norm(x, 1, norm_scale, norm_shift, spec.group_norm_eps);
}

// ---------------------------------------------------------------------------

namespace {

// Causal padding puts the whole (k - 1) * dilation on the left, and with
// stride 1 the extra padding is 0, so after the first window's worth of
// input each new sample completes exactly one output. Reflect padding makes
// the first outputs depend on samples 1..k-1, so nothing comes out before
// (k - 1) * dilation + 1 samples have arrived (or the input ends).
class CausalConvStream : public LayerStream {
public:
    explicit CausalConvStream(const StreamableConv1d& conv)
        : conv_(conv), context_((conv.spec().kernel_size - 1) * conv.spec().dilation) {}

    at::Tensor push(const at::Tensor& x) override {
        at::Tensor input = concat_time(pending_, x);
        if (!started_) {
            if (input.size(-1) < context_ + 1) {
                pending_ = input;
                return {};
            }
            started_ = true;
            pending_ = last_samples(input, context_);
            return conv_.forward(input);
        }
        pending_ = last_samples(input, context_);
        return conv_.convolve(input);
    }

    at::Tensor flush() override {
        if (started_ || !has_samples(pending_)) return {};
        started_ = true;
        return conv_.forward(pending_);  // an input shorter than the window: the reference's own padding
    }

private:
    const StreamableConv1d& conv_;
    int64_t context_;
    bool started_ = false;
    at::Tensor pending_;  // before the start: all input so far; after: the last context_ samples
};

}  // namespace

StreamableConv1d::StreamableConv1d(const ConvSpec& spec, const std::string& prefix, ParameterSource& source)
    : spec_(spec), weights_(NormalizedConvWeights::load(spec, false, prefix + ".conv", source)) {}

at::Tensor StreamableConv1d::convolve(const at::Tensor& padded) const {
    const int64_t stride = spec_.stride, padding = 0, dilation = spec_.dilation;
    return weights_.normalize(spec_, at::conv1d(padded, weights_.weight, weights_.bias, at::IntArrayRef(stride),
                                                at::IntArrayRef(padding), at::IntArrayRef(dilation)));
}

at::Tensor StreamableConv1d::forward(const at::Tensor& x) const {
    const int64_t effective_kernel = (spec_.kernel_size - 1) * spec_.dilation + 1;
    const int64_t padding_total = effective_kernel - spec_.stride;
    const int64_t extra = extra_padding_for_conv1d(x.size(-1), effective_kernel, spec_.stride, padding_total);
    if (spec_.causal) return convolve(pad1d(x, padding_total, extra, spec_.pad_mode));
    const int64_t right = padding_total / 2;  // the odd sample goes to the left
    return convolve(pad1d(x, padding_total - right, right + extra, spec_.pad_mode));
}

std::unique_ptr<LayerStream> StreamableConv1d::stream() const {
    if (!spec_.causal || spec_.stride != 1 || spec_.norm == ConvNorm::time_group_norm ||
        spec_.pad_mode == PadMode::circular)
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "chunked evaluation needs causal, stride-1 convolutions without GroupNorm "
                                            "or circular padding");
    return std::make_unique<CausalConvStream>(*this);
}

// ---------------------------------------------------------------------------

namespace {

// Input frame i contributes to outputs [i * stride, i * stride + k), so
// after frames 0..n-1 every output before n * stride is complete; the last
// k - stride partial sums wait for the next frames. The trim keeps outputs
// [trim_left, n * stride + trim_left) of the full transposed output.
class CausalConvTransposeStream : public LayerStream {
public:
    explicit CausalConvTransposeStream(const StreamableConvTranspose1d& conv)
        : conv_(conv), to_skip_(conv.trim_left()) {}

    at::Tensor push(const at::Tensor& x) override {
        const ConvSpec& spec = conv_.spec();
        const int64_t complete = x.size(-1) * spec.stride;
        at::Tensor full = at::conv_transpose1d(x, conv_.weights().weight, {}, spec.stride);
        if (overlap_.defined()) full.narrow(-1, 0, overlap_.size(-1)).add_(overlap_);
        overlap_ = full.narrow(-1, complete, full.size(-1) - complete);
        at::Tensor ready = full.narrow(-1, 0, complete) + bias();
        const int64_t skip = std::min(to_skip_, complete);
        to_skip_ -= skip;
        return ready.narrow(-1, skip, complete - skip);
    }

    at::Tensor flush() override {
        const int64_t trim_left = conv_.trim_left();
        if (!overlap_.defined() || trim_left <= to_skip_) return {};
        return overlap_.narrow(-1, to_skip_, trim_left - to_skip_) + bias();
    }

private:
    at::Tensor bias() const { return conv_.weights().bias.view({1, -1, 1}); }

    const StreamableConvTranspose1d& conv_;
    int64_t to_skip_;
    at::Tensor overlap_;  // partial sums of the outputs after the last complete one, without bias
};

}  // namespace

StreamableConvTranspose1d::StreamableConvTranspose1d(const ConvSpec& spec, const std::string& prefix,
                                                     ParameterSource& source)
    : spec_(spec), weights_(NormalizedConvWeights::load(spec, true, prefix + ".convtr", source)) {
    if (spec.kernel_size < spec.stride)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, prefix + ": a transposed convolution's kernel (" +
                                                   std::to_string(spec.kernel_size) + ") is shorter than its stride");
}

int64_t StreamableConvTranspose1d::trim_right() const {
    const int64_t padding_total = spec_.kernel_size - spec_.stride;
    if (spec_.causal) return static_cast<int64_t>(std::ceil(padding_total * spec_.trim_right_ratio));
    return padding_total / 2;
}

int64_t StreamableConvTranspose1d::trim_left() const { return spec_.kernel_size - spec_.stride - trim_right(); }

at::Tensor StreamableConvTranspose1d::forward(const at::Tensor& x) const {
    // The norm sees the untrimmed output, as in the reference.
    const at::Tensor full =
        weights_.normalize(spec_, at::conv_transpose1d(x, weights_.weight, weights_.bias, spec_.stride));
    return unpad1d(full, trim_left(), trim_right());
}

std::unique_ptr<LayerStream> StreamableConvTranspose1d::stream() const {
    if (!spec_.causal || spec_.norm == ConvNorm::time_group_norm)
        throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "chunked evaluation needs causal transposed convolutions without GroupNorm");
    return std::make_unique<CausalConvTransposeStream>(*this);
}

}  // namespace cadenza::seanet
