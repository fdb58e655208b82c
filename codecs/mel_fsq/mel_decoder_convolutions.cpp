#include "mel_decoder_convolutions.h"

#include <string>

#include "huge_pages.h"
#include "row_combinations.h"
#include "small_matmul.h"

namespace cadenza::mel_fsq {

MelDecoderConvolutions::MelDecoderConvolutions(const MelAutoencoder& model) {
    const MelCodecConfig& config = model.config();
    std::vector<std::string> names{"decoder.input"};
    for (int64_t b = 0; b < config.decoder_blocks; ++b)
        for (const char* conv : {".conv1", ".conv2"}) names.push_back("decoder.blocks." + std::to_string(b) + conv);
    names.push_back("decoder.output");
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
    if (llama::combine_rows_vectorized()) {
        panels_ = llama::PanelSet::pack(matrices);
        llama::request_huge_pages({panels_.arena});
    }
}

void MelDecoderConvolutions::apply(size_t index, const float* x, int64_t count, float* y) const {
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

}  // namespace cadenza::mel_fsq
