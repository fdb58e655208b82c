#include "phone_marker_rule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "error.h"
#include "probability_row.h"
#include "random_stream.h"
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

void PhoneMarkerRule::apply_unverified(float* rows, int32_t count, int64_t vocab, cdz_rng& rng) {
    if (phones_.empty()) return;
    const auto text_begin = static_cast<size_t>(info_.text_token_offset);
    const auto text_end = text_begin + static_cast<size_t>(info_.text_token_count);
    size_t markers = markers_emitted_;                              // on the path the rows draw
    bool marker_before = markers > 0 && frames_since_marker_ == 0;  // the sequence ends with a marker
    for (int32_t r = 0; r < count; ++r) {
        float* row = rows + static_cast<size_t>(r) * static_cast<size_t>(vocab);
        double text_mass = 0.0;
        for (size_t id = text_begin; id < text_end; ++id) text_mass += row[id];
        if (!(text_mass > 0.0)) {  // the nucleus left the text ids out: no phone ends here, the row stands
            marker_before = false;
            continue;
        }
        // A head guesses from the committed sequence alone: what it gives
        // the id of a phone an earlier row of this step already began is
        // that same phone's end, not another's (an id two such phones share
        // counts once: it is zeroed as it is taken off).
        double mass = text_mass;
        for (size_t k = markers_emitted_; k < markers; ++k) {
            mass -= row[phones_[k]];
            row[phones_[k]] = 0.0f;
        }
        mass = std::max(mass, 0.0);
        std::fill(row + text_begin, row + text_end, 0.0f);
        const double total = row_sum(row, vocab);
        // Whether a phone ends here is drawn: a maximum over the lattice
        // would take the one marker over thousands of codes, each less
        // likely, and shorten every phone. A phone lasts at least one frame
        // (in the corpus, all but 18 of 28,082 do).
        const bool phones_left = markers < phones_.size();
        const bool only_text = !(total > 0.0);  // a marker is all the row allows
        const bool marker = phones_left && (only_text || (mass > 0.0 && !marker_before &&
                                                          random_stream_uniform(rng) * (mass + total) < mass));
        marker_before = marker;
        if (marker) {
            std::fill(row, row + vocab, 0.0f);
            row[phones_[markers++]] = 1.0f;
        } else if (!only_text) {
            const auto scale = static_cast<float>(1.0 / total);
            for (int64_t token = 0; token < vocab; ++token) row[token] *= scale;
        } else if (info_.end_token >= 0) {
            row[info_.end_token] = 1.0f;  // no phone left and nothing but text ids: the audio ends
        }
    }
}

size_t PhoneMarkerRule::rewrite_unverified(int32_t* tokens, size_t count) {
    if (phones_.empty()) return count;
    size_t markers = markers_emitted_;
    int64_t frames = frames_since_marker_;
    auto next_marker_or_end = [&]() { return markers < phones_.size() ? phones_[markers++] : info_.end_token; };
    for (size_t i = 0; i < count; ++i) {
        if (max_phone_frames_ > 0 && frames >= max_phone_frames_) {
            // The phone has lasted its limit: what follows was chosen for
            // another token here, so the step ends with the forced one.
            const int32_t forced = next_marker_or_end();
            if (forced >= 0) {
                tokens[i] = forced;
                return i + 1;
            }
        }
        if (is_phone_marker(info_, tokens[i])) {
            if (markers < phones_.size()) {
                tokens[i] = phones_[markers++];
                frames = 0;
                continue;
            }
            // A marker past the last phone: the step ends before it (or, as
            // its first token, ends the audio).
            if (i > 0 || info_.end_token < 0) return std::max<size_t>(i, 1);
            tokens[0] = info_.end_token;
            return 1;
        }
        if (info_.end_token >= 0 && tokens[i] == info_.end_token) return i + 1;
        if (is_audio_token(info_, tokens[i])) ++frames;
    }
    return count;
}

}  // namespace cadenza
