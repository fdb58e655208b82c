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
#include "token_tree.h"

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

Engine::CostProfile Engine::measure_costs(const std::vector<int>& sizes, int repeats, bool with_drafter) {
    EngineStages& s = *stages_;
    if (!s.backbone) throw Error(CDZ_STATUS_INVALID_CONFIG, config_.source + ": no [backbone] to measure");
    if (repeats < 1) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "repeats must be at least 1");
    const auto& backbone = s.backbone->vtable<cdz_backbone_vtable>();
    const cdz_backbone_info& info = s.backbone_info;
    const bool verifies = verifies_drafts();
    const bool time_drafter = with_drafter && s.drafter;
    // The pass a step of this pipeline makes: the pending token and every
    // node verifying; the tokens the last step emitted not verifying.
    const int step_size = s.drafter ? std::max(1, s.drafter_info.max_nodes + (verifies ? 1 : 0)) : 1;
    const int largest = std::max(step_size, sizes.empty() ? 1 : *std::max_element(sizes.begin(), sizes.end()));
    int32_t context_length = context_steps_ > 0 ? static_cast<int32_t>(context_positions_ / context_steps_)
                                                : default_context_length;
    const int64_t drafted = s.drafter ? s.drafter_info.max_nodes : 0;
    if (info.max_sequence_length > 0)
        context_length = static_cast<int32_t>(
            std::min<int64_t>(context_length, info.max_sequence_length - largest - drafted - 8));
    context_length = std::max(context_length, 1);

    // The longest synthesis so far, as far as it reaches: what a drafter
    // proposes and how long its chains run depend on the context being
    // speech. Before any synthesis, or past its end, audio tokens.
    std::vector<int32_t> context(context_length + largest);
    for (size_t i = 0; i < context.size(); ++i)
        context[i] = i < speech_context_.size()
                         ? speech_context_[i]
                         : static_cast<int32_t>(info.audio_token_offset + (i * 7919) % info.audio_token_count);

    void* raw = nullptr;
    throw_if_error(backbone.session_create(s.backbone->context(), context_length + largest + 8, &raw), s.backbone->name());
    PluginSession session(raw, backbone.session_destroy);
    // With `hidden_row`, copies that row of the pass's hidden states there.
    auto forward_chain = [&](const int32_t* tokens, int32_t count, bool with_logits, int32_t hidden_row = -1,
                             std::vector<float>* hidden_out = nullptr) {
        std::vector<int32_t> parents(count);
        std::iota(parents.begin(), parents.end(), -1);
        cdz_token_tree tree{sizeof(cdz_token_tree), count, 1, tokens, parents.data()};
        cdz_backbone_output out{sizeof(cdz_backbone_output), nullptr, nullptr, with_logits ? 0 : count};
        throw_if_error(backbone.session_forward(session.get(), &tree, hidden_out ? 1 : 0, &out),
                       s.backbone->name() + ": forward");
        ManagedTensor logits(out.logits), hidden(out.hidden);
        if (!hidden_out) return;
        const auto shape = hidden.expect(kDLFloat, 32, 2, s.backbone->name() + ": hidden states");
        if (shape[0] != count || shape[1] != info.hidden_size)
            throw Error(CDZ_STATUS_INTERNAL, s.backbone->name() + ": hidden states have the wrong shape");
        const float* row = hidden.data<float>() + static_cast<size_t>(hidden_row) * info.hidden_size;
        hidden_out->assign(row, row + info.hidden_size);
    };
    // The drafter reads the hidden state the loop would hand it: verifying,
    // the one before the pending last token; not verifying, the last one's.
    const bool drafter_reads_hidden = time_drafter && s.drafter_info.needs_target_hidden;
    const int32_t hidden_position = std::max(context_length - (verifies ? 2 : 1), 0);
    std::vector<float> hidden(static_cast<size_t>(std::max<int64_t>(info.hidden_size, 1)), 0.0f);
    forward_chain(context.data(), context_length, false, hidden_position, drafter_reads_hidden ? &hidden : nullptr);
    std::vector<int32_t> path(context_length);
    std::iota(path.begin(), path.end(), 0);
    throw_if_error(backbone.session_commit(session.get(), path.data(), context_length), s.backbone->name());

    CostProfile profile;
    profile.context_length = context_length;
    profile.sizes = sizes;
    profile.weight_bytes = info.weight_bytes;
    // A verifying loop asks logits of every row it evaluates; plain
    // decoding's one-token pass, the reference, always has them.
    profile.passes_without_logits = !verifies;
    auto with_logits = [&](int size) { return verifies || size == 1; };
    // The sizes take turns, one pass of each per repeat: when the machine's
    // speed drifts during the measurement every size moves alike and the
    // ratios to cost(1), which the ceiling is made of, stay put. Measured one
    // size after another, a 4-token pass once came out at 0.93 of one token.
    for (int size : sizes) forward_chain(context.data() + context_length, size, with_logits(size));  // warm-up
    std::vector<std::vector<double>> times(sizes.size());
    for (int r = 0; r < repeats; ++r)
        for (size_t i = 0; i < sizes.size(); ++i)
            times[i].push_back(seconds_of(
                [&] { forward_chain(context.data() + context_length, sizes[i], with_logits(sizes[i])); }));
    for (const std::vector<double>& size_times : times) profile.verify_seconds.push_back(median(size_times));

    if (time_drafter) {
        const auto& drafter = s.drafter->vtable<cdz_drafter_vtable>();
        void* raw_draft = nullptr;
        throw_if_error(drafter.session_create(s.drafter->context(), context_length + drafted + 8, &raw_draft), s.drafter->name());
        PluginSession draft_session(raw_draft, drafter.session_destroy);
        TensorView hidden_view(hidden.data(), DLDataType{kDLFloat, 32, 1}, {static_cast<int64_t>(hidden.size())});
        cdz_draft_input input{};
        input.struct_size = sizeof(input);
        input.tokens = context.data();
        input.token_count = context_length;
        input.target_hidden = drafter_reads_hidden ? hidden_view.get() : nullptr;
        input.target_hidden_position = drafter_reads_hidden ? hidden_position : -1;
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
            return output.tree.node_count > 0 ? token_tree_depth(output.tree) : 0;
        };
        // Proposals and the target's passes of the step's size take turns,
        // as in the decoding loop. Each sweeps the caches of the other's
        // weights: back to back, a 2-layer shallow draft (6 MB) stayed in
        // cache and measured 0.04 of a target pass per level against ~0.2 in
        // the loop, and the target's pass is slower after a proposal than
        // after a pass of its own (the sizes above) when both sets of
        // weights do not fit the last-level cache together. A drafter with a
        // dynamic length stops where its own probabilities say, which
        // varies: each proposal is costed per level it drew, and the ceiling
        // multiplies by the levels the loop drew.
        // Each turn also times the step's pass as the sizes above time it,
        // in turns with one-token passes: measured minutes apart, the two
        // came out 0.89x and 1.01x for one pipeline file under two names in
        // one run, on a VM whose speed drifts by 10-15% within minutes. A
        // proposal's mark on the passes fades over several: int8-exact's
        // step pass took 2.17, 2.10 and 2.02 ms in the three passes after
        // one, 1.93 after a one-token pass and 1.79 after three more pairs,
        // what the sizes above measured (docs/en-small.md, fifty-fifth
        // part). So that pass comes after `settling_pairs` pairs of a
        // one-token pass and a step pass. A timed proposal follows one pass
        // after a proposal, as in the loop: after those two passes it
        // measured 0.82-0.86 ms for int8-exact, whose proposals cost
        // 0.71-0.72 ms in the loop, so an untimed proposal and pass come
        // between.
        constexpr int settling_pairs = 3;
        std::vector<double> times, level_times, levels, step_times, alone_times;
        auto step_pass = [&] { forward_chain(context.data() + context_length, step_size, with_logits(step_size)); };
        auto one_token_pass = [&] { forward_chain(context.data() + context_length, 1, true); };
        auto pass_then_proposal = [&] {
            step_times.push_back(seconds_of(step_pass));
            for (int pair = 0; pair < settling_pairs; ++pair) {
                one_token_pass();
                step_pass();
            }
            one_token_pass();
            alone_times.push_back(seconds_of(step_pass));
            propose();
            step_pass();
            int32_t depth = 0;
            const double seconds = seconds_of([&] { depth = propose(); });
            times.push_back(seconds);
            levels.push_back(depth);
            if (depth > 0) level_times.push_back(seconds / depth);
        };
        pass_then_proposal();  // warm-up
        times.clear();
        level_times.clear();
        levels.clear();
        step_times.clear();
        alone_times.clear();
        for (int r = 0; r < repeats; ++r) pass_then_proposal();
        profile.step_size = step_size;
        profile.step_after_proposal_seconds = median(step_times);
        profile.step_alone_in_turns_seconds = median(alone_times);
        profile.draft_seconds = median(times);
        profile.draft_level_seconds = level_times.empty() ? 0.0 : median(level_times);
        profile.draft_levels = median(levels);
        profile.draft_depth = s.drafter_info.max_depth;
        profile.draft_nodes = s.drafter_info.max_nodes;
    }
    return profile;
}

}  // namespace cadenza
