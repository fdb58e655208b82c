// Classifier-free guidance on the text (as in Koel-TTS): a second backbone
// session decodes the same tokens after the null text (null_text.h), and
// every row of logits becomes null + scale * (text - null), so that the
// output follows the text more and the history of codes less. For a target
// trained with text dropout (training/text_dropout.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine_stages.h"
#include "logits_processor.h"
#include "managed_tensor.h"
#include "parameter_values.h"

namespace cadenza {

class ClassifierFreeGuidance final : public LogitsProcessor {
public:
    static constexpr const char* kind = "classifier_free_guidance";
    static std::vector<cdz_param_spec> parameters();

    // Throws cadenza::Error (naming `source`) when the backbone has no text
    // range or the frontend no <pad>.
    ClassifierFreeGuidance(const EngineStages& stages, const cdz_params& params, const std::string& source);

    const char* name() const override { return kind; }
    void start(const std::vector<int32_t>& prompt, int64_t capacity) override;
    void evaluate(const cdz_token_tree& tree, int32_t chain, bool want_logits) override;
    void apply(float* logits, int64_t vocab, const cdz_token_tree* draft) override;
    void commit(const int32_t* path, int32_t count) override;

private:
    const PluginInstance& backbone_;
    const cdz_backbone_vtable& vtable_;
    const cdz_backbone_info info_;
    const float scale_;
    const int32_t pad_;  // the null text's filler, a backbone id

    std::unique_ptr<PluginSession> session_;
    std::vector<int32_t> null_prompt_;  // the prompt with its text nulled
    size_t evaluated_ = 0;              // tokens in the session's cache
    std::vector<int32_t> tokens_;       // the last evaluated tree, its prompt part nulled
    ManagedTensor logits_tensor_;
    const float* null_rows_ = nullptr;  // [1 + draft nodes, vocab] in logits_tensor_
};

}  // namespace cadenza
