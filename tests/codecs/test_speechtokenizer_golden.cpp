// SpeechTokenizer against the reference's outputs
// (../shared/golden/speechtokenizer): encoder output, codes with all and
// with fewer quantizers, quantized sums, decodes (also from a start layer)
// and the semantic feature. Decodes use the stored codes.
#include <gtest/gtest.h>

#include <regex>

#include <c10/core/InferenceMode.h>

#include "golden.h"
#include "speechtokenizer_model.h"

namespace cadenza::speechtokenizer {
namespace {

TEST(SpeechTokenizerGolden, ReproducesEveryStoredTensor) {
    SKIP_WITHOUT_GOLDEN("speechtokenizer", "config.json", "checkpoint.pt", "vectors.safetensors");
    c10::InferenceMode inference;
    const auto dir = test::golden_dir("speechtokenizer");
    const SpeechTokenizerConfig config = SpeechTokenizerConfig::from_file(dir / "config.json");
    const SpeechTokenizerModel model = SpeechTokenizerModel::load(config, dir / "checkpoint.pt", c10::Device(c10::kCPU));
    const test::GoldenVectors vectors(dir / "vectors.safetensors");
    const at::Tensor input = vectors.get("input");
    const at::Tensor codes = vectors.get("codes");  // [n_q, batch, frames]

    // codes_rvq<k>: the first k layers; *_st<s>: layers s.. of `codes`.
    static const std::regex pattern(R"(^(input|emb|codes|quantized|decoded|feature)(?:_rvq([0-9]+)|_st([0-9]+))?$)");
    int checked = 0;
    for (const std::string& name : vectors.names()) {
        std::smatch match;
        ASSERT_TRUE(std::regex_match(name, match, pattern)) << "unexpected golden tensor " << name;
        const std::string kind = match[1];
        const int64_t layers = match[2].matched ? std::stoll(match[2]) : config.quantizer.n_q;
        const int64_t first = match[3].matched ? std::stoll(match[3]) : 0;
        const at::Tensor stored = match[2].matched ? vectors.get("codes_rvq" + std::string(match[2])) : codes;
        const at::Tensor reference = vectors.get(name);
        if (kind == "input") continue;
        ++checked;
        if (kind == "emb") test::expect_close(name, model.embed(input), reference);
        else if (kind == "codes") test::expect_codes_equal(name, model.encode(input, layers), reference);
        else if (kind == "quantized") test::expect_close(name, model.quantizer().decode(stored), reference);
        else if (kind == "decoded")
            test::expect_close(name, model.decode(stored.narrow(0, first, stored.size(0) - first), first), reference);
        else if (kind == "feature") test::expect_close(name, model.semantic_features(codes[0]), reference);
    }
    EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace cadenza::speechtokenizer
