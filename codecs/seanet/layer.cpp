#include "layer.h"

#include <ATen/ops/cat.h>

namespace cadenza::seanet {

bool has_samples(const at::Tensor& x) { return x.defined() && x.size(-1) > 0; }

at::Tensor concat_time(const at::Tensor& first, const at::Tensor& second) {
    if (!has_samples(first)) return second;
    if (!has_samples(second)) return first;
    return at::cat({first, second}, -1);
}

namespace {

class SequentialStream : public LayerStream {
public:
    explicit SequentialStream(std::vector<std::unique_ptr<LayerStream>> streams) : streams_(std::move(streams)) {}

    at::Tensor push(const at::Tensor& x) override {
        at::Tensor y = x;
        for (auto& stream : streams_) {
            if (!has_samples(y)) return {};
            y = stream->push(y);
        }
        return y;
    }

    at::Tensor flush() override {
        at::Tensor y;
        for (auto& stream : streams_) {
            const at::Tensor pushed = has_samples(y) ? stream->push(y) : at::Tensor();
            y = concat_time(pushed, stream->flush());
        }
        return y;
    }

private:
    std::vector<std::unique_ptr<LayerStream>> streams_;
};

// Layers whose output at time t depends on the input at time t only.
template <typename Forward>
class PointwiseStream : public LayerStream {
public:
    explicit PointwiseStream(Forward forward) : forward_(std::move(forward)) {}
    at::Tensor push(const at::Tensor& x) override { return forward_(x); }
    at::Tensor flush() override { return {}; }

private:
    Forward forward_;
};

template <typename Forward>
std::unique_ptr<LayerStream> pointwise_stream(Forward forward) {
    return std::make_unique<PointwiseStream<Forward>>(std::move(forward));
}

}  // namespace

at::Tensor Sequential::forward(const at::Tensor& x) const {
    at::Tensor y = x;
    for (const auto& layer : layers_) y = layer->forward(y);
    return y;
}

std::unique_ptr<LayerStream> Sequential::stream() const {
    std::vector<std::unique_ptr<LayerStream>> streams;
    for (const auto& layer : layers_) streams.push_back(layer->stream());
    return std::make_unique<SequentialStream>(std::move(streams));
}

std::unique_ptr<LayerStream> Identity::stream() const {
    return pointwise_stream([](const at::Tensor& x) { return x; });
}

ActivationLayer::ActivationLayer(const ActivationSpec& spec, int64_t channels, const std::string& prefix,
                                 ParameterSource& source)
    : spec_(spec) {
    if (spec.kind == ActivationKind::snake)
        snake_alpha_ = source.take(prefix + ".alpha", {1, channels, 1}, ParameterRole::snake_alpha);
}

at::Tensor ActivationLayer::forward(const at::Tensor& x) const { return apply_activation(spec_, x, snake_alpha_); }

std::unique_ptr<LayerStream> ActivationLayer::stream() const {
    return pointwise_stream([this](const at::Tensor& x) { return forward(x); });
}

}  // namespace cadenza::seanet
