#include "phone_marker_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.h"
#include "sampling.h"

namespace cadenza {
namespace {

const cdz_backbone_info& phone_marker_backbone(const EngineStages& stages, const std::string& source) {
    if (!stages.backbone_info.phone_markers)
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    source + ": [logits] " + PhoneMarkerRule::kind +
                        " needs a backbone with phone markers (backbone.llama's phone_markers)" +
                        (stages.backbone ? "; '" + stages.backbone->name() + "' has none" : std::string()));
    return stages.backbone_info;
}

}  // namespace

std::vector<cdz_param_spec> PhoneMarkerRule::parameters() {
    return {{"max_phone_seconds", CDZ_PARAM_FLOAT, "0.0", 1, 0, 60, nullptr,
             "a phone that has lasted this long ends (the next marker or the end is forced); 0 is no limit"}};
}

PhoneMarkerRule::PhoneMarkerRule(const EngineStages& stages, const cdz_params& params, const std::string& source)
    : info_(phone_marker_backbone(stages, source)),
      bos_id_(stages.frontend ? stages.frontend_info.bos_id : -1),
      eos_id_(stages.frontend ? stages.frontend_info.eos_id : -1),
      max_phone_frames_(static_cast<int64_t>(
          std::ceil(parameter_lookup(params, "max_phone_seconds", CDZ_PARAM_FLOAT).number * stages.codec_info.frame_rate))) {}

void PhoneMarkerRule::start(const std::vector<int32_t>& prompt, int64_t) {
    phones_.clear();
    for (int32_t token : prompt) {
        if (token < info_.text_token_offset || token >= info_.text_token_offset + info_.text_token_count) break;
        const int32_t id = token - static_cast<int32_t>(info_.text_token_offset);
        if (id != bos_id_ && id != eos_id_) phones_.push_back(token);
    }
    markers_emitted_ = 0;
    frames_since_marker_ = 0;
}

void PhoneMarkerRule::apply(float* logits, int64_t vocab, const cdz_token_tree* draft) {
    if (phones_.empty()) return;  // a prompt without text (a bare token prompt): the target's markers stand
    const int32_t nodes = draft ? draft->node_count : 0;
    // Row 0 follows the committed sequence, row 1 + i draft node i.
    row_markers_.assign(static_cast<size_t>(nodes) + 1, markers_emitted_);
    row_frames_.assign(static_cast<size_t>(nodes) + 1, frames_since_marker_);
    for (int32_t i = 0; i < nodes; ++i) {
        const auto row = static_cast<size_t>(i) + 1, parent_row = static_cast<size_t>(draft->parents[i] + 1);
        const bool marker = is_phone_marker(info_, draft->tokens[i]);
        row_markers_[row] = row_markers_[parent_row] + (marker ? 1 : 0);
        row_frames_[row] = marker ? 0 : row_frames_[parent_row] + (is_audio_token(info_, draft->tokens[i]) ? 1 : 0);
    }
    const auto text_begin = static_cast<size_t>(info_.text_token_offset);
    const auto text_end = text_begin + static_cast<size_t>(info_.text_token_count);
    const auto audio_begin = static_cast<size_t>(info_.audio_token_offset);
    const auto audio_end = audio_begin + static_cast<size_t>(info_.audio_token_count);
    constexpr float masked = -std::numeric_limits<float>::infinity();
    for (size_t row = 0; row < row_markers_.size(); ++row) {
        float* row_logits = logits + row * static_cast<size_t>(vocab);
        // The target's probability of a marker here is that a phone ends;
        // which phone comes next is the text's to say, so the next phone
        // gets the mass of every text id (their log-sum-exp).
        const float largest = *std::max_element(row_logits + text_begin, row_logits + text_end);
        double mass = 0.0;
        for (size_t id = text_begin; id < text_end; ++id)
            mass += std::exp(static_cast<double>(row_logits[id] - largest));
        std::fill(row_logits + text_begin, row_logits + text_end, masked);
        const bool phones_left = row_markers_[row] < phones_.size();
        if (phones_left && std::isfinite(largest))
            row_logits[phones_[row_markers_[row]]] = largest + static_cast<float>(std::log(mass));
        if (max_phone_frames_ > 0 && row_frames_[row] >= max_phone_frames_) {
            std::fill(row_logits + audio_begin, row_logits + audio_end, masked);
            // What is left gets all the mass, whatever the target gave it.
            if (phones_left) {
                row_logits[phones_[row_markers_[row]]] = 0.0f;
                if (info_.end_token >= 0) row_logits[info_.end_token] = masked;
            } else if (info_.end_token >= 0) {
                row_logits[info_.end_token] = 0.0f;
            }
        }
    }
}

void PhoneMarkerRule::append(const int32_t* tokens, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        if (is_phone_marker(info_, tokens[i])) {
            ++markers_emitted_;
            frames_since_marker_ = 0;
        } else if (is_audio_token(info_, tokens[i])) {
            ++frames_since_marker_;
        }
    }
}

}  // namespace cadenza
