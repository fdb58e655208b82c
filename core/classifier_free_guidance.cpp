#include "classifier_free_guidance.h"

#include "backbone_calls.h"
#include "error.h"
#include "null_text.h"
#include "status_object.h"

namespace cadenza {
namespace {

// The frontend's <pad> as a backbone id; throws when there is none.
int32_t null_text_pad_of(const EngineStages& stages, const std::string& source) {
    const std::string who = source + ": [logits] " + ClassifierFreeGuidance::kind;
    if (stages.backbone_info.text_token_count <= 0)
        throw Error(CDZ_STATUS_INVALID_CONFIG, who + " needs a backbone with a text range; '" +
                                                   stages.backbone->name() + "' has none");
    if (!stages.frontend)
        throw Error(CDZ_STATUS_INVALID_CONFIG, who + " needs a [frontend] with a <pad> symbol (the null text's)");
    const int32_t pad = stages.frontend_info.pad_id;
    if (pad < 0 || pad >= stages.backbone_info.text_token_count)
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    who + " needs a frontend with a <pad> symbol (the null text's); frontend '" +
                        stages.frontend->name() + "' has " +
                        (pad < 0 ? std::string("none") : "pad id " + std::to_string(pad) + ", outside the text range"));
    return null_text_pad(static_cast<int32_t>(stages.backbone_info.text_token_offset), pad);
}

}  // namespace

std::vector<cdz_param_spec> ClassifierFreeGuidance::parameters() {
    return {{"scale", CDZ_PARAM_FLOAT, nullptr, 1, 1, 20, nullptr,
             "logits = null-text + scale * (text - null-text); a second backbone pass per step (a target trained "
             "with --text-dropout); 1 changes nothing"}};
}

ClassifierFreeGuidance::ClassifierFreeGuidance(const EngineStages& stages, const cdz_params& params,
                                               const std::string& source)
    : backbone_(*stages.backbone),
      vtable_(stages.backbone->vtable<cdz_backbone_vtable>()),
      info_(stages.backbone_info),
      scale_(static_cast<float>(parameter_lookup(params, "scale", CDZ_PARAM_FLOAT).number)),
      pad_(null_text_pad_of(stages, source)) {}

void ClassifierFreeGuidance::start(const std::vector<int32_t>& prompt, int64_t capacity) {
    session_.reset();
    session_ = create_session(backbone_, vtable_.session_create, vtable_.session_destroy, capacity);
    evaluated_ = 0;
    null_prompt_ = prompt;
    const auto is_text = [&](size_t i) {
        return null_prompt_[i] >= info_.text_token_offset &&
               null_prompt_[i] < info_.text_token_offset + info_.text_token_count;
    };
    for_each_text_run(null_prompt_.size(), is_text,
                      [&](size_t begin, size_t end) { null_text_run(null_prompt_.data(), begin, end, pad_); });
}

void ClassifierFreeGuidance::evaluate(const cdz_token_tree& tree, int32_t chain, bool want_logits) {
    tokens_.assign(tree.tokens, tree.tokens + tree.node_count);
    for (size_t i = 0; i < static_cast<size_t>(chain) && evaluated_ + i < null_prompt_.size(); ++i)
        tokens_[i] = null_prompt_[evaluated_ + i];
    const cdz_token_tree nulled{sizeof(cdz_token_tree), tree.node_count, 1, tokens_.data(), tree.parents};
    cdz_backbone_output output{};
    output.struct_size = sizeof(output);
    output.logits_from = want_logits ? chain - 1 : tree.node_count;
    null_rows_ = nullptr;
    logits_tensor_.reset();
    const std::string& backbone = backbone_.name();
    throw_if_error(vtable_.session_forward(session_->get(), &nulled, 0, &output), backbone + ": forward (null text)");
    ManagedTensor null_logits(output.logits), released_hidden(output.hidden);
    if (!want_logits) return;
    null_rows_ = logits_from(null_logits, tree.node_count, chain - 1, info_.vocab_size, backbone + ": logits (null text)");
    logits_tensor_ = std::move(null_logits);  // until apply()
}

void ClassifierFreeGuidance::apply(float* logits, int64_t vocab, const cdz_token_tree* draft) {
    if (!null_rows_) throw Error(CDZ_STATUS_INTERNAL, std::string(kind) + ": logits to guide without a null-text pass");
    const size_t values = static_cast<size_t>(1 + (draft ? draft->node_count : 0)) * static_cast<size_t>(vocab);
    for (size_t i = 0; i < values; ++i) logits[i] = null_rows_[i] + scale_ * (logits[i] - null_rows_[i]);
    null_rows_ = nullptr;
    logits_tensor_.reset();
}

void ClassifierFreeGuidance::commit(const int32_t* path, int32_t count) {
    throw_if_error(vtable_.session_commit(session_->get(), path, count), backbone_.name() + ": commit (null text)");
    evaluated_ += static_cast<size_t>(count);
}

}  // namespace cadenza
