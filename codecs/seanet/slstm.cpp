#include "slstm.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/lstm.h>
#include <ATen/ops/zeros.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::seanet {

SLstm::SLstm(int64_t dimension, int64_t num_layers, bool bidirectional, const std::string& prefix,
             ParameterSource& source)
    : dimension_(dimension), num_layers_(num_layers), bidirectional_(bidirectional) {
    const int64_t directions = bidirectional ? 2 : 1;
    for (int64_t layer = 0; layer < num_layers; ++layer) {
        const int64_t input_size = layer == 0 ? dimension : dimension * directions;
        for (int64_t direction = 0; direction < directions; ++direction) {
            const std::string suffix = "_l" + std::to_string(layer) + (direction ? "_reverse" : "");
            const std::string base = prefix + ".lstm.";
            parameters_.push_back(source.take(base + "weight_ih" + suffix, {4 * dimension, input_size}, ParameterRole::lstm_weight));
            parameters_.push_back(source.take(base + "weight_hh" + suffix, {4 * dimension, dimension}, ParameterRole::lstm_weight));
            parameters_.push_back(source.take(base + "bias_ih" + suffix, {4 * dimension}, ParameterRole::lstm_bias));
            parameters_.push_back(source.take(base + "bias_hh" + suffix, {4 * dimension}, ParameterRole::lstm_bias));
        }
    }
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> SLstm::run(const at::Tensor& time_major, const at::Tensor& h,
                                                          const at::Tensor& c) const {
    const int64_t states = num_layers_ * (bidirectional_ ? 2 : 1);
    const auto zeros = [&] { return at::zeros({states, time_major.size(1), dimension_}, time_major.options()); };
    return at::lstm(time_major, {h.defined() ? h : zeros(), c.defined() ? c : zeros()}, parameters_, true, num_layers_,
                    0.0, false, bidirectional_, false);
}

at::Tensor SLstm::add_skip(const at::Tensor& lstm_output, const at::Tensor& time_major_input) const {
    const at::Tensor skip = bidirectional_ ? at::cat({time_major_input, time_major_input}, -1) : time_major_input;
    return (lstm_output + skip).permute({1, 2, 0});
}

at::Tensor SLstm::forward(const at::Tensor& x) const {
    const at::Tensor time_major = x.permute({2, 0, 1});
    return add_skip(std::get<0>(run(time_major, {}, {})), time_major);
}

namespace {

class LstmStream : public LayerStream {
public:
    explicit LstmStream(const SLstm& lstm) : lstm_(lstm) {}

    at::Tensor push(const at::Tensor& x) override {
        const at::Tensor time_major = x.permute({2, 0, 1});
        auto [output, h, c] = lstm_.run(time_major, h_, c_);
        h_ = h;
        c_ = c;
        return lstm_.add_skip(output, time_major);
    }
    at::Tensor flush() override { return {}; }

private:
    const SLstm& lstm_;
    at::Tensor h_, c_;
};

}  // namespace

std::unique_ptr<LayerStream> SLstm::stream() const {
    if (bidirectional_) throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "a bidirectional LSTM needs the whole input");
    return std::make_unique<LstmStream>(*this);
}

}  // namespace cadenza::seanet
