// EnCodec against the reference's outputs (../shared/golden/encodec and
// encodec48): every tensor of vectors.safetensors, each bandwidth and
// segment found there. Decoder and quantizer outputs are computed from the
// stored codes (and scales), so encoder and decoder errors show apart.
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include <c10/core/InferenceMode.h>

#include "encodec_model.h"
#include "golden.h"

namespace cadenza::encodec {
namespace {

using test::GoldenVectors;

// "codes_bw1.5_seg0" -> {kind "codes", bandwidth "1.5", segment 0}
struct GoldenName {
    std::string kind;
    std::string bandwidth;  // empty when the tensor has none
    int segment = 0;
};

GoldenName parse_name(const std::string& name) {
    static const std::regex pattern(R"(^(input|emb|scale|codes|quantized|decoded)(?:_bw([0-9.]+))?(?:_seg([0-9]+))?$)");
    std::smatch match;
    if (!std::regex_match(name, match, pattern)) ADD_FAILURE() << "unexpected golden tensor " << name;
    return {match[1], match[2], match[3].matched ? std::stoi(match[3]) : 0};
}

class EncodecGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(EncodecGolden, ReproducesEveryStoredTensor) {
    const std::string folder = GetParam();
    SKIP_WITHOUT_GOLDEN(folder, "config.json", "checkpoint.th", "vectors.safetensors");
    c10::InferenceMode inference;
    const auto dir = test::golden_dir(folder);
    const EncodecConfig config = EncodecConfig::from_file(dir / "config.json");
    const EncodecModel model = EncodecModel::load(config, dir / "checkpoint.th", c10::Device(c10::kCPU));
    const GoldenVectors vectors(dir / "vectors.safetensors");
    const at::Tensor input = vectors.get("input");
    const int64_t length = input.size(-1);
    const int64_t segment_length = config.segment_length().value_or(length);
    const int64_t stride = config.segment_stride().value_or(length);
    auto segment_input = [&](int segment) {
        const int64_t offset = segment * stride;
        return model.normalize(input.narrow(2, offset, std::min(segment_length, length - offset)));
    };

    std::map<std::string, std::vector<EncodedSegment>> encoded;  // bandwidth -> our encode
    auto our_encoding = [&](const std::string& bandwidth) -> const std::vector<EncodedSegment>& {
        auto found = encoded.find(bandwidth);
        if (found == encoded.end()) found = encoded.emplace(bandwidth, model.encode(input, std::stod(bandwidth))).first;
        return found->second;
    };
    // "<base>_seg<i>", or plain "<base>" for the only segment of an unsegmented model.
    auto segment_tensor = [&](const std::string& base, int segment) {
        const std::string name = base + "_seg" + std::to_string(segment);
        return vectors.get(vectors.contains(name) || segment > 0 ? name : base);
    };
    auto stored_segment = [&](const std::string& bandwidth, int segment) {
        return EncodedSegment{segment_tensor("codes_bw" + bandwidth, segment),
                              config.normalize ? segment_tensor("scale", segment) : at::Tensor()};
    };

    int checked = 0;
    for (const std::string& name : vectors.names()) {
        const GoldenName parsed = parse_name(name);
        const at::Tensor reference = vectors.get(name);
        if (parsed.kind == "input") continue;
        ++checked;
        if (parsed.kind == "emb") {
            test::expect_close(name, model.embed(segment_input(parsed.segment).audio), reference);
        } else if (parsed.kind == "scale") {
            test::expect_close(name, segment_input(parsed.segment).scale, reference);
        } else if (parsed.kind == "codes") {
            const auto& segments = our_encoding(parsed.bandwidth);
            ASSERT_LT(parsed.segment, static_cast<int>(segments.size())) << name;
            test::expect_codes_equal(name, segments[parsed.segment].codes, reference);
        } else if (parsed.kind == "quantized") {
            const EncodedSegment stored = stored_segment(parsed.bandwidth, parsed.segment);
            test::expect_close(name, model.quantizer().decode(stored.codes.transpose(0, 1)), reference);
        } else if (parsed.kind == "decoded") {
            std::vector<EncodedSegment> stored;
            for (int segment = 0; segment < static_cast<int>(our_encoding(parsed.bandwidth).size()); ++segment)
                stored.push_back(stored_segment(parsed.bandwidth, segment));
            test::expect_close(name, model.decode(stored), reference);
        }
    }
    EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Golden, EncodecGolden, ::testing::Values("encodec", "encodec48"));

}  // namespace
}  // namespace cadenza::encodec
