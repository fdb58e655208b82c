// acceptor.pcg: Principled Coarse-Graining (Yanuka et al.). Group-level
// speculative sampling over overlapping Acoustic Similarity Groups read from a
// groups file (made by `cadenza build-groups`). The rule itself lives in
// pcg_sampler.{h,cpp}; this file is the C ABI surface: parameters, input
// validation, and no exception crossing the boundary.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "common/acceptor_support.h"
#include "pcg_sampler.h"
#include "token_groups.h"

namespace cadenza::pcg {
namespace {

constexpr const char* plugin_name = "acceptor.pcg";

const char* const group_code_choices[] = {"draft", "target", nullptr};

const cdz_param_spec params[] = {
    {"groups", CDZ_PARAM_PATH, nullptr, 0, 0.0, 0.0, nullptr,
     "the token groups file (cadenza build-groups); tokens in no group are singletons"},
    {"max_thinning_rounds", CDZ_PARAM_INT, "100", 1, 0.0, 1e9, nullptr,
     "thinning proposals for a rejected position before the residual is enumerated exactly (0: always enumerate)"},
    {"group_code", CDZ_PARAM_STRING, "\"draft\"", 0, 0.0, 0.0, group_code_choices,
     "the code the audio takes for an accepted group: \"draft\", the drafted token that stands for it (the paper's "
     "shortcut); \"target\", a member drawn from the target's distribution within the group (the paper's Eq. 10), "
     "while the sequence and the caches keep the drafted token"},
};

struct Acceptor {
    std::string groups_path;
    std::unique_ptr<GroupIndex> index;
    int64_t max_thinning_rounds = 100;
    bool target_group_code = false;
    cdz_rng* rng = nullptr;
    StepOutput step;  // reused between calls
    std::vector<uint8_t> target_checked, draft_checked;  // per row, this call
};

// The rows pcg_step reads, each checked the first time it is asked for: the
// target's through the host's target_row when it gives one (then only the
// levels the step reaches are computed at all).
struct CheckedRows {
    const acceptors::TargetRows target;
    const float* draft;
    int64_t vocab;
    std::vector<uint8_t>& target_checked;
    std::vector<uint8_t>& draft_checked;
};

double draw_uniform(void* rng) { return sdk::host().rng_uniform(static_cast<cdz_rng*>(rng)); }

void check(bool condition, const std::string& message) {
    if (!condition) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, message);
}

// A probability row: finite, non-negative, summing to 1 (within 1e-3).
void check_row(const float* row, int64_t vocab, const char* what, int64_t index) {
    const acceptors::RowSum sum = acceptors::sum_row(row, vocab);
    const double total = sum.total;
    if (sum.first_invalid >= 0)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                          std::string(what) + " row " + std::to_string(index) + " holds " +
                              std::to_string(row[sum.first_invalid]) + " at token " +
                              std::to_string(sum.first_invalid) + " (probabilities must be finite and non-negative)");
    if (std::fabs(total - 1.0) > 1e-3)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, std::string(what) + " row " +
                                                           std::to_string(index) + " sums to " + std::to_string(total) +
                                                           ", not 1");
}

const float* fetch_target_row(void* ctx, int32_t r) {
    CheckedRows& rows = *static_cast<CheckedRows*>(ctx);
    const float* row = rows.target.row(r);
    if (!rows.target_checked[static_cast<size_t>(r)]) check_row(row, rows.vocab, "target", r);
    rows.target_checked[static_cast<size_t>(r)] = 1;
    return row;
}

const float* fetch_draft_row(void* ctx, int32_t node) {
    CheckedRows& rows = *static_cast<CheckedRows*>(ctx);
    const float* row = rows.draft + static_cast<int64_t>(node) * rows.vocab;
    if (!rows.draft_checked[static_cast<size_t>(node)]) check_row(row, rows.vocab, "draft", node);
    rows.draft_checked[static_cast<size_t>(node)] = 1;
    return row;
}

cdz_status* create(const cdz_instance_args* args, void** out_ctx) noexcept {
    return sdk::guarded([&] {
        if (!args || !out_ctx || !args->host || !args->params)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "create: args, host, params or out_ctx is NULL");
        *out_ctx = nullptr;
        const cdz_host_api& host = *args->host;
        auto acceptor = std::make_unique<Acceptor>();
        const sdk::Params params(*args);
        acceptor->groups_path = params.string("groups");
        acceptor->max_thinning_rounds = params.integer("max_thinning_rounds");
        acceptor->target_group_code = params.string("group_code") == "target";
        if (acceptor->groups_path.empty()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "the groups parameter is empty");
        acceptor->index = std::make_unique<GroupIndex>(read_token_groups(acceptor->groups_path));
        acceptor->rng = args->rng;
        if (!acceptor->rng) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the host gave no random stream");
        if (host.log_enabled && host.log_enabled(CDZ_LOG_DEBUG)) {
            const std::string message = "loaded " + std::to_string(acceptor->index->file_group_count()) +
                                        " groups over " + std::to_string(acceptor->index->vocab_size()) +
                                        " tokens from " + acceptor->groups_path;
            host.log(CDZ_LOG_DEBUG, plugin_name, message.c_str());
        }
        *out_ctx = acceptor.release();
    });
}

void destroy(void* ctx) noexcept { delete static_cast<Acceptor*>(ctx); }

cdz_status* get_info(void* ctx, cdz_acceptor_info* out) noexcept {
    return sdk::guarded([&] {
        if (!ctx || !out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "get_info: ctx or out is NULL");
        out->struct_size = sizeof(cdz_acceptor_info);
        out->verifies = 1;
        out->needs_draft_probabilities = 1;
        acceptors::set_reads_target_rows(out);
    });
}

cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) noexcept {
    return sdk::guarded([&] {
        check(ctx && in && out, "accept: ctx, input or output is NULL");
        Acceptor& self = *static_cast<Acceptor*>(ctx);
        check(in->struct_size >= offsetof(cdz_accept_input, sampling) && in->tree, "accept: the input has no tree");
        check(out->struct_size >= sizeof(cdz_accept_output) && out->accepted_nodes && out->emitted_tokens,
              "accept: the output arrays are NULL");
        const cdz_token_tree& tree = *in->tree;
        check(out->accepted_capacity >= tree.node_count && out->emitted_capacity >= tree.node_count + 1,
              "accept: the output arrays have room for fewer than node_count (accepted) and node_count + 1 "
              "(emitted) entries");
        const int64_t vocab = in->vocab_size;
        if (vocab != self.index->vocab_size())
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                              "groups file " + self.groups_path + " covers a vocabulary of " +
                                  std::to_string(self.index->vocab_size()) + " tokens, but the distributions have " +
                                  std::to_string(vocab));
        if (tree.tokens_per_node != 1)
            throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "trees with " +
                                                          std::to_string(tree.tokens_per_node) +
                                                          " tokens per node are not supported (1 codebook only)");
        const int32_t n = tree.node_count;
        check(n >= 0, "the tree has a negative node count");
        check(n == 0 || (tree.tokens && tree.parents), "the tree's tokens or parents are NULL");
        check(acceptors::TargetRows(*in).present(), "needs the target's probabilities");
        check(n == 0 || in->draft_probabilities != nullptr, "needs the draft's probabilities");
        for (int32_t i = 0; i < n; ++i) {
            check(tree.parents[i] >= -1 && tree.parents[i] < i,
                  "node " + std::to_string(i) + " has parent " + std::to_string(tree.parents[i]) +
                      " (need -1 <= parent < node)");
            check(tree.tokens[i] >= 0 && tree.tokens[i] < vocab,
                  "node " + std::to_string(i) + " has token " + std::to_string(tree.tokens[i]) +
                      ", outside the vocabulary of " + std::to_string(vocab));
        }
        self.target_checked.assign(static_cast<size_t>(n) + 1, 0);
        self.draft_checked.assign(static_cast<size_t>(n), 0);
        CheckedRows rows{acceptors::TargetRows(*in), in->draft_probabilities, vocab, self.target_checked,
                         self.draft_checked};

        StepInput step_input;
        step_input.node_count = n;
        step_input.tokens = tree.tokens;
        step_input.parents = tree.parents;
        step_input.target = {nullptr, fetch_target_row, &rows};
        step_input.draft = {nullptr, fetch_draft_row, &rows};
        const UniformSource uniform{draw_uniform, self.rng};
        pcg_step(*self.index, step_input, self.max_thinning_rounds, uniform, self.step);

        const auto accepted = static_cast<int32_t>(self.step.accepted_nodes.size());
        const auto emitted = static_cast<int32_t>(self.step.emitted.size());
        if (accepted > n || emitted != accepted + 1)
            throw sdk::Error(CDZ_STATUS_INTERNAL, "internal error: inconsistent step result");
        // std::copy, not memcpy: no accepted node leaves a null data pointer.
        std::copy(self.step.accepted_nodes.begin(), self.step.accepted_nodes.end(), out->accepted_nodes);
        std::copy(self.step.emitted.begin(), self.step.emitted.end(), out->emitted_tokens);
        out->accepted_count = accepted;
        out->emitted_count = emitted;
        if (self.target_group_code) {
            check(out->audio_tokens != nullptr, "group_code = \"target\" needs a host that takes audio tokens (plugin ABI 1.3)");
            draw_group_codes(*self.index, step_input, self.step, uniform, out->audio_tokens);
        }
        if (self.step.enumerations > 0 && sdk::host().log_enabled && sdk::host().log_enabled(CDZ_LOG_TRACE)) {
            const std::string message = "residual enumerated over every group " +
                                        std::to_string(self.step.enumerations) + " time(s) this step";
            sdk::host().log(CDZ_LOG_TRACE, plugin_name, message.c_str());
        }
    });
}

const cdz_acceptor_vtable vtable = {sizeof(cdz_acceptor_vtable), create, destroy, get_info, accept,
                                    nullptr, nullptr, nullptr, nullptr, nullptr};  // no sessions

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor),
    CDZ_PLUGIN_ABI_MAJOR,
    CDZ_PLUGIN_ABI_MINOR,
    plugin_name,
    CDZ_PLUGIN_KIND_ACCEPTOR,
    "1.0.0",
    "group-level speculative sampling over acoustic similarity groups (PCG, Yanuka et al.)",
    params,
    sizeof(params) / sizeof(params[0]),
    sizeof(cdz_param_spec),
    &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace
}  // namespace cadenza::pcg

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    using namespace cadenza::pcg;
    return cadenza::sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
