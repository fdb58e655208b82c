#include "resnet_block.h"

#include "conv_layers.h"

namespace cadenza::seanet {

ResnetBlock::ResnetBlock(const SeanetConfig& config, int64_t dim, int64_t dilation, const std::string& prefix,
                         ParameterSource& source) {
    const int64_t hidden = dim / config.compress;
    const int64_t kernel_sizes[2] = {config.residual_kernel_size, 1};
    const int64_t dilations[2] = {dilation, 1};
    for (int i = 0; i < 2; ++i) {
        const int64_t in = i == 0 ? dim : hidden;
        const int64_t out = i == 1 ? dim : hidden;
        const std::string index = prefix + ".block.";
        block_.add(std::make_unique<ActivationLayer>(config.activation, in, index + std::to_string(2 * i), source));
        block_.add(std::make_unique<StreamableConv1d>(conv_spec(config, in, out, kernel_sizes[i], 1, dilations[i]),
                                                      index + std::to_string(2 * i + 1), source));
    }
    if (config.true_skip)
        shortcut_ = std::make_unique<Identity>();
    else
        shortcut_ = std::make_unique<StreamableConv1d>(conv_spec(config, dim, dim, 1), prefix + ".shortcut", source);
}

at::Tensor ResnetBlock::forward(const at::Tensor& x) const { return shortcut_->forward(x) + block_.forward(x); }

namespace {

// The two branches may return their outputs at different times (the
// block's convolution waits for its first window); sums are formed as far
// as both have come.
class ResnetStream : public LayerStream {
public:
    ResnetStream(std::unique_ptr<LayerStream> shortcut, std::unique_ptr<LayerStream> block)
        : shortcut_(std::move(shortcut)), block_(std::move(block)) {}

    at::Tensor push(const at::Tensor& x) override { return add(shortcut_->push(x), block_->push(x)); }
    at::Tensor flush() override { return add(shortcut_->flush(), block_->flush()); }

private:
    at::Tensor add(const at::Tensor& shortcut, const at::Tensor& block) {
        shortcut_out_ = concat_time(shortcut_out_, shortcut);
        block_out_ = concat_time(block_out_, block);
        const int64_t ready = std::min(has_samples(shortcut_out_) ? shortcut_out_.size(-1) : 0,
                                       has_samples(block_out_) ? block_out_.size(-1) : 0);
        if (ready == 0) return {};
        const at::Tensor sum = shortcut_out_.narrow(-1, 0, ready) + block_out_.narrow(-1, 0, ready);
        shortcut_out_ = shortcut_out_.narrow(-1, ready, shortcut_out_.size(-1) - ready);
        block_out_ = block_out_.narrow(-1, ready, block_out_.size(-1) - ready);
        return sum;
    }

    std::unique_ptr<LayerStream> shortcut_, block_;
    at::Tensor shortcut_out_, block_out_;  // outputs of one branch the other has not matched yet
};

}  // namespace

std::unique_ptr<LayerStream> ResnetBlock::stream() const {
    return std::make_unique<ResnetStream>(shortcut_->stream(), block_.stream());
}

}  // namespace cadenza::seanet
