// A checkpoint that does not fit the config is refused with the key named:
// a missing key, a key of another shape, a key the model does not have.
#include <gtest/gtest.h>

#include <c10/core/InferenceMode.h>

#include "encodec_model.h"
#include "error.h"
#include "golden.h"
#include "state_dict_file.h"

namespace cadenza::encodec {
namespace {

using seanet::StateDict;

class CheckpointErrors : public ::testing::Test {
protected:
    void SetUp() override {
        if (!test::golden_available("encodec", {"config.json", "checkpoint.th"}))
            GTEST_SKIP() << "golden folder encodec is absent";
        config_ = EncodecConfig::from_file(test::golden_dir("encodec") / "config.json");
        state_ = seanet::read_state_dict(test::golden_dir("encodec") / "checkpoint.th");
    }

    // The message of the error loading `state` raises ("" when it loads).
    std::string load_error(StateDict state) {
        c10::InferenceMode inference;
        try {
            seanet::StateDictSource source(std::move(state), "checkpoint.th", c10::Device(c10::kCPU));
            EncodecModel model(config_, source);
            source.expect_all_taken();
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
            return e.what();
        }
        return "";
    }

    EncodecConfig config_;
    StateDict state_;
};

TEST_F(CheckpointErrors, TheGoldenCheckpointLoadsWithEveryKeyUsed) { EXPECT_EQ(load_error(state_), ""); }

std::string shape_of(const at::Tensor& tensor) {
    return seanet::shape_text(seanet::Shape(tensor.sizes().begin(), tensor.sizes().end()));
}

TEST_F(CheckpointErrors, AMissingKeyIsNamedWithTheShapeTheConfigExpects) {
    for (size_t dropped : {size_t{2}, state_.size() / 2, state_.size() - 1}) {
        StateDict state = state_;
        const auto [key, tensor] = state[dropped];
        state.erase(state.begin() + static_cast<std::ptrdiff_t>(dropped));
        const std::string message = load_error(state);
        EXPECT_NE(message.find("missing key '" + key + "' (the config expects shape " + shape_of(tensor) + ")"),
                  std::string::npos)
            << message;
    }
}

TEST_F(CheckpointErrors, AWrongShapeIsNamedWithBothShapes) {
    for (auto& [key, tensor] : state_) {
        if (key.find("_codebook.embed") == std::string::npos || key.find("embed_avg") != std::string::npos) continue;
        const std::string expected = shape_of(tensor);
        tensor = tensor.narrow(1, 0, tensor.size(1) - 1).contiguous();
        const std::string message = load_error(state_);
        EXPECT_NE(message.find("key '" + key + "' has shape " + shape_of(tensor) + ", the config expects " + expected),
                  std::string::npos)
            << message;
        return;
    }
    FAIL() << "no codebook in the checkpoint";
}

TEST_F(CheckpointErrors, AnUnexpectedKeyIsNamed) {
    const std::string extra = "quantizer.vq.layers." + std::to_string(config_.quantizer.n_q) + "._codebook.embed";
    state_.emplace_back(extra, state_.back().second);
    const std::string message = load_error(state_);
    EXPECT_NE(message.find("unexpected key '" + extra + "'"), std::string::npos) << message;
}

TEST_F(CheckpointErrors, AConfigOfAnotherModelNamesTheFirstMismatch) {
    config_ = EncodecConfig::official("encodec_48khz");
    const std::string message = load_error(state_);
    EXPECT_NE(message.find("encoder.model.0.conv.conv.weight"), std::string::npos) << message;
}

}  // namespace
}  // namespace cadenza::encodec
