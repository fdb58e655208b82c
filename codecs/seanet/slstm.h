// The reference's SLSTM: an LSTM over time on [batch, channels, time] with
// the input added back (skip). Bidirectional (SpeechTokenizer's encoder):
// the output has 2 * channels, forward then backward direction, and the
// skip adds the input repeated twice along channels.
#pragma once

#include <string>
#include <vector>

#include "layer.h"

namespace cadenza::seanet {

class SLstm : public Layer {
public:
    // Keys "<prefix>.lstm.weight_ih_l{k}[_reverse]", weight_hh, bias_ih, bias_hh.
    SLstm(int64_t dimension, int64_t num_layers, bool bidirectional, const std::string& prefix, ParameterSource& source);
    at::Tensor forward(const at::Tensor& x) const override;
    // Unidirectional only: carries the hidden and cell states across chunks.
    std::unique_ptr<LayerStream> stream() const override;

    // One pass over [time, batch, channels] from the given states (undefined: zeros).
    std::tuple<at::Tensor, at::Tensor, at::Tensor> run(const at::Tensor& time_major, const at::Tensor& h,
                                                       const at::Tensor& c) const;
    at::Tensor add_skip(const at::Tensor& lstm_output, const at::Tensor& time_major_input) const;

private:
    int64_t dimension_;
    int64_t num_layers_;
    bool bidirectional_;
    std::vector<at::Tensor> parameters_;  // per layer and direction: w_ih, w_hh, b_ih, b_hh
};

}  // namespace cadenza::seanet
