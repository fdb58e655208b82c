// Engine::measure_costs: the costs the benchmark's ceiling is computed from,
// measured on the pipeline's own backbone and drafter.
#include <algorithm>
#include <chrono>
#include <numeric>

#include "engine.h"
#include "engine_stages.h"
#include "error.h"
#include "managed_tensor.h"
#include "sampling.h"
#include "status_object.h"

namespace cadenza {
namespace {

constexpr int32_t default_context_length = 64;

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

template <typename Body>
double seconds_of(Body&& body) {
    const auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

bool Engine::has_drafter() const { return stages_->drafter != nullptr; }

int32_t Engine::draft_max_nodes() const { return stages_->drafter ? stages_->drafter_info.max_nodes : 0; }

bool Engine::verifies_drafts() const { return !stages_->acceptor || stages_->acceptor_info.verifies; }

Engine::CostProfile Engine::measure_costs(const std::vector<int>& sizes, int repeats) {
    EngineStages& s = *stages_;
    if (!s.backbone) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [backbone] to measure");
    if (repeats < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "repeats must be at least 1");
    const auto& backbone = s.backbone->vtable<cdz_backbone_vtable>();
    const cdz_backbone_info& info = s.backbone_info;
    const int largest = sizes.empty() ? 1 : *std::max_element(sizes.begin(), sizes.end());
    int32_t context_length = context_steps_ > 0 ? static_cast<int32_t>(context_positions_ / context_steps_)
                                                : default_context_length;
    const int64_t drafted = s.drafter ? s.drafter_info.max_nodes : 0;
    if (info.max_sequence_length > 0)
        context_length = static_cast<int32_t>(
            std::min<int64_t>(context_length, info.max_sequence_length - largest - drafted - 8));
    context_length = std::max(context_length, 1);

    // A context of audio tokens, as in the middle of a synthesis.
    std::vector<int32_t> context(context_length + largest);
    for (size_t i = 0; i < context.size(); ++i)
        context[i] = static_cast<int32_t>(info.audio_token_offset + (i * 7919) % info.audio_token_count);

    void* raw = nullptr;
    throw_if_error(backbone.session_create(s.backbone->context(), context_length + largest + 8, &raw), s.backbone->name());
    PluginSession session(raw, backbone.session_destroy);
    auto forward_chain = [&](const int32_t* tokens, int32_t count) {
        std::vector<int32_t> parents(count);
        std::iota(parents.begin(), parents.end(), -1);
        cdz_token_tree tree{sizeof(cdz_token_tree), count, 1, tokens, parents.data()};
        cdz_backbone_output out{sizeof(cdz_backbone_output), nullptr, nullptr, 0};
        throw_if_error(backbone.session_forward(session.get(), &tree, 0, &out), s.backbone->name() + ": forward");
        ManagedTensor logits(out.logits), hidden(out.hidden);
    };
    forward_chain(context.data(), context_length);
    std::vector<int32_t> path(context_length);
    std::iota(path.begin(), path.end(), 0);
    throw_if_error(backbone.session_commit(session.get(), path.data(), context_length), s.backbone->name());

    CostProfile profile;
    profile.context_length = context_length;
    profile.sizes = sizes;
    profile.weight_bytes = info.weight_bytes;
    // The sizes take turns, one pass of each per repeat: when the machine's
    // speed drifts during the measurement every size moves alike and the
    // ratios to cost(1), which the ceiling is made of, stay put. Measured one
    // size after another, a 4-token pass once came out at 0.93 of one token.
    for (int size : sizes) forward_chain(context.data() + context_length, size);  // warm-up
    std::vector<std::vector<double>> times(sizes.size());
    for (int r = 0; r < repeats; ++r)
        for (size_t i = 0; i < sizes.size(); ++i)
            times[i].push_back(seconds_of([&] { forward_chain(context.data() + context_length, sizes[i]); }));
    for (const std::vector<double>& size_times : times) profile.verify_seconds.push_back(median(size_times));

    if (s.drafter) {
        const auto& drafter = s.drafter->vtable<cdz_drafter_vtable>();
        void* raw_draft = nullptr;
        throw_if_error(drafter.session_create(s.drafter->context(), context_length + drafted + 8, &raw_draft), s.drafter->name());
        PluginSession draft_session(raw_draft, drafter.session_destroy);
        std::vector<float> hidden(static_cast<size_t>(std::max<int64_t>(info.hidden_size, 1)), 0.0f);
        TensorView hidden_view(hidden.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(hidden.size())});
        cdz_draft_input input{};
        input.struct_size = sizeof(input);
        input.tokens = context.data();
        input.token_count = context_length;
        input.target_hidden = s.drafter_info.needs_target_hidden ? hidden_view.get() : nullptr;
        input.target_hidden_position = s.drafter_info.needs_target_hidden ? context_length - 2 : -1;
        const cdz_sampling sampling = restrict_sampling_to_audio(config_.sampling, info);
        input.sampling = &sampling;
        // The buffer the decoding loop lends (decoding_loop.cpp), so that a
        // drafter writing into it is timed as it runs there.
        std::vector<float> lent(static_cast<size_t>(std::max(s.drafter_info.max_nodes, 0)) *
                                static_cast<size_t>(info.vocab_size));
        auto propose = [&] {
            cdz_draft_output output{};
            output.struct_size = sizeof(output);
            if (!lent.empty()) {
                output.lent_probabilities = lent.data();
                output.lent_rows = s.drafter_info.max_nodes;
                output.lent_row_size = info.vocab_size;
            }
            throw_if_error(drafter.propose(draft_session.get(), &input, &output), s.drafter->name() + ": propose");
            ManagedTensor probabilities(output.probabilities);
            profile.draft_nodes = output.tree.node_count;
        };
        // Each proposal follows a target pass, as in the decoding loop: the
        // target's pass sweeps the caches, so the draft reads its weights
        // from memory. Back to back, a 2-layer shallow draft (6 MB) stayed in
        // cache and measured 0.04 of a target pass per level against ~0.2 in
        // the loop.
        auto after_a_target_pass = [&] {
            forward_chain(context.data() + context_length, 1);
            return seconds_of(propose);
        };
        after_a_target_pass();  // warm-up
        std::vector<double> times;
        for (int r = 0; r < repeats; ++r) times.push_back(after_a_target_pass());
        profile.draft_seconds = median(times);
        profile.draft_depth = s.drafter_info.max_depth;
    }
    return profile;
}

}  // namespace cadenza
