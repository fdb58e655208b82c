// The full official configurations build exactly the state dicts of the
// released checkpoints: every key, in order, with its shape, as listed in
// ../shared/golden/*/official_*keys.tsv. Nothing is loaded; the recorder
// notes what the modules ask for.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <c10/core/InferenceMode.h>

#include "encodec_model.h"
#include "golden.h"
#include "speechtokenizer_model.h"
#include "../core/test_fixtures.h"

namespace cadenza {
namespace {

using seanet::ParameterRecorder;
using seanet::ParameterSpec;

// "key<TAB>[d0,d1]<TAB>float32" per line.
std::vector<ParameterSpec> read_key_list(const std::filesystem::path& path) {
    std::ifstream file(path);
    std::vector<ParameterSpec> specs;
    std::string line;
    while (std::getline(file, line)) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        std::string name, shape_text, dtype;
        std::getline(fields, name, '\t');
        std::getline(fields, shape_text, '\t');
        std::getline(fields, dtype, '\t');
        EXPECT_EQ(dtype, "float32") << name;
        ParameterSpec spec{name, {}};
        std::istringstream dims(shape_text.substr(1, shape_text.size() - 2));
        for (std::string dim; std::getline(dims, dim, ',');) spec.shape.push_back(std::stoll(dim));
        specs.push_back(spec);
    }
    return specs;
}

void expect_same_keys(const std::vector<ParameterSpec>& ours, const std::vector<ParameterSpec>& official) {
    EXPECT_EQ(ours.size(), official.size());
    for (size_t i = 0; i < std::min(ours.size(), official.size()); ++i) {
        ASSERT_EQ(ours[i].name, official[i].name) << "entry " << i;
        EXPECT_EQ(ours[i].shape, official[i].shape) << ours[i].name;
    }
}

TEST(OfficialKeys, TheEncodec24khzFactoryBuildsTheOfficialStateDict) {
    SKIP_WITHOUT_GOLDEN("encodec", "official_24khz_keys.tsv");
    c10::InferenceMode inference;
    ParameterRecorder recorder;
    encodec::EncodecModel model(encodec::EncodecConfig::official("encodec_24khz"), recorder);
    expect_same_keys(recorder.specs(), read_key_list(test::golden_dir("encodec") / "official_24khz_keys.tsv"));
    EXPECT_EQ(model.config().quantizer.n_q, 32);
}

TEST(OfficialKeys, TheEncodec48khzFactoryBuildsTheOfficialStateDict) {
    SKIP_WITHOUT_GOLDEN("encodec48", "official_48khz_keys.tsv");
    c10::InferenceMode inference;
    ParameterRecorder recorder;
    encodec::EncodecModel model(encodec::EncodecConfig::official("encodec_48khz"), recorder);
    expect_same_keys(recorder.specs(), read_key_list(test::golden_dir("encodec48") / "official_48khz_keys.tsv"));
    EXPECT_EQ(model.config().quantizer.n_q, 16);
}

TEST(OfficialKeys, TheSpeechTokenizerBaseConfigBuildsTheOfficialStateDict) {
    SKIP_WITHOUT_GOLDEN("speechtokenizer", "official_keys.tsv");
    c10::InferenceMode inference;
    ParameterRecorder recorder;
    const auto config = speechtokenizer::SpeechTokenizerConfig::from_file(
        test::source_dir() / "tests/codecs/data/spt_base_config.json");
    speechtokenizer::SpeechTokenizerModel model(config, recorder);
    expect_same_keys(recorder.specs(), read_key_list(test::golden_dir("speechtokenizer") / "official_keys.tsv"));
}

}  // namespace
}  // namespace cadenza
