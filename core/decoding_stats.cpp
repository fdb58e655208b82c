#include "decoding_stats.h"

#include <algorithm>
#include <cstring>

namespace cadenza {

void DecodingStats::record_step(int32_t tree_depth, int32_t tree_nodes, int32_t accepted_depth,
                                int64_t tokens_emitted) {
    ++steps_;
    tokens_ += tokens_emitted;
    accepted_drafts_ += accepted_depth;
    drafted_levels_ += tree_depth;
    if (offered_at_depth_.size() < static_cast<size_t>(tree_depth)) {
        offered_at_depth_.resize(tree_depth, 0);
        accepted_at_depth_.resize(tree_depth, 0);
    }
    for (int32_t d = 0; d < tree_depth; ++d) ++offered_at_depth_[d];
    for (int32_t d = 0; d < accepted_depth && d < tree_depth; ++d) ++accepted_at_depth_[d];
    const auto nodes = static_cast<size_t>(std::max(tree_nodes, 0));
    if (steps_by_nodes_.size() <= nodes) steps_by_nodes_.resize(nodes + 1, 0);
    ++steps_by_nodes_[nodes];
}

double DecodingStats::mean_accepted_length() const {
    // Tokens per step: accepted drafts + the target's token when verifying,
    // every emitted draft when not.
    return steps_ ? static_cast<double>(tokens_) / static_cast<double>(steps_) : 0.0;
}

double DecodingStats::mean_draft_depth() const {
    return steps_ ? static_cast<double>(drafted_levels_) / static_cast<double>(steps_) : 0.0;
}

double DecodingStats::mean_draft_nodes() const {
    int64_t nodes = 0;
    for (size_t n = 0; n < steps_by_nodes_.size(); ++n) nodes += static_cast<int64_t>(n) * steps_by_nodes_[n];
    return steps_ ? static_cast<double>(nodes) / static_cast<double>(steps_) : 0.0;
}

std::vector<double> DecodingStats::acceptance_by_depth() const {
    std::vector<double> rates;
    for (size_t d = 0; d < offered_at_depth_.size(); ++d)
        rates.push_back(offered_at_depth_[d] ? static_cast<double>(accepted_at_depth_[d]) / offered_at_depth_[d] : 0.0);
    return rates;
}

double DecodingStats::loop_overhead_seconds() const {
    return std::max(0.0, loop_seconds - draft_seconds - verify_seconds - accept_seconds);
}

void DecodingStats::fill(cdz_stats& out) const {
    cdz_stats full{};
    full.struct_size = out.struct_size;
    full.tokens_generated = tokens_;
    full.steps = steps_;
    full.target_passes = target_passes_;
    full.draft_passes = draft_passes_;
    full.mean_accepted_length = mean_accepted_length();
    full.tokens_per_second = loop_seconds > 0 ? tokens_ / loop_seconds : 0.0;
    full.seconds_per_token = tokens_ ? loop_seconds / tokens_ : 0.0;
    full.audio_seconds = audio_seconds;
    full.wall_seconds = wall_seconds;
    full.draft_seconds = draft_seconds;
    full.verify_seconds = verify_seconds;
    full.accept_seconds = accept_seconds;
    full.other_seconds = std::max(0.0, wall_seconds - draft_seconds - verify_seconds - accept_seconds);
    full.loop_seconds = loop_seconds;
    full.loop_overhead_seconds = loop_overhead_seconds();
    full.codec_seconds = codec_seconds;
    const auto rates = acceptance_by_depth();
    full.position_count = static_cast<int32_t>(std::min<size_t>(rates.size(), CDZ_STATS_MAX_POSITIONS));
    for (int32_t i = 0; i < full.position_count; ++i) full.acceptance_rate[i] = rates[i];
    std::memcpy(&out, &full, std::min<size_t>(out.struct_size, sizeof(cdz_stats)));
}

void DecodingStats::add(const DecodingStats& other) {
    draft_seconds += other.draft_seconds;
    first_draft_seconds += other.first_draft_seconds;
    draft_ahead_seconds += other.draft_ahead_seconds;
    verify_seconds += other.verify_seconds;
    prefill_seconds += other.prefill_seconds;
    accept_seconds += other.accept_seconds;
    loop_seconds += other.loop_seconds;
    codec_seconds += other.codec_seconds;
    prompt_seconds += other.prompt_seconds;
    audio_wait_seconds += other.audio_wait_seconds;
    audio_finish_seconds += other.audio_finish_seconds;
    wall_seconds += other.wall_seconds;
    audio_seconds += other.audio_seconds;
    tokens_ += other.tokens_;
    steps_ += other.steps_;
    accepted_drafts_ += other.accepted_drafts_;
    drafted_levels_ += other.drafted_levels_;
    target_passes_ += other.target_passes_;
    draft_passes_ += other.draft_passes_;
    first_draft_passes_ += other.first_draft_passes_;
    continued_steps_ += other.continued_steps_;
    if (offered_at_depth_.size() < other.offered_at_depth_.size()) {
        offered_at_depth_.resize(other.offered_at_depth_.size(), 0);
        accepted_at_depth_.resize(other.accepted_at_depth_.size(), 0);
    }
    if (steps_by_nodes_.size() < other.steps_by_nodes_.size()) steps_by_nodes_.resize(other.steps_by_nodes_.size(), 0);
    for (size_t n = 0; n < other.steps_by_nodes_.size(); ++n) steps_by_nodes_[n] += other.steps_by_nodes_[n];
    for (size_t d = 0; d < other.offered_at_depth_.size(); ++d) {
        offered_at_depth_[d] += other.offered_at_depth_[d];
        accepted_at_depth_[d] += other.accepted_at_depth_[d];
    }
}

}  // namespace cadenza
