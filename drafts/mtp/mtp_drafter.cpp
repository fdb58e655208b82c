// draft.mtp: multi-token prediction heads on the target's last hidden state
// (Nguyen et al., "Accelerating Codec-based Speech Synthesis with
// Multi-Token Prediction and Speculative Decoding", ICASSP 2025). Proposes a
// chain; with acceptor.viterbi the chain's distributions are the Viterbi
// lattice's emissions and nothing is verified; with a verifying acceptor the
// chain is checked by the target like any draft.
//
// The heads (drafts/common/hidden_state_heads.h): head i maps the target's hidden
// state h at position t to logits_i = lm_head(h + SiLU(W_i h + b_i)) and
// predicts the token at t + 2 + i; the target's own head on h predicts t + 1.
//
// Alignment, with the sequence x_0 .. x_{N-1} (N = token_count) and the
// hidden state h at p = target_hidden_position:
//  * verifying (p = N - 2, an acceptor that runs the target): x_{N-1} is
//    pending, it is the token the target's head on h predicted. The drafts
//    continue after it: node i is for x_{N+i} = x_{p+2+i}, i.e. head i.
//    A chain of n nodes, row i = head i's distribution.
//  * not verifying (p = N - 1, acceptor.viterbi): every token of the
//    sequence is evaluated; the next token x_N = x_{p+1} is the target's own
//    head's, x_{N+i} for i >= 1 is head i - 1's. A chain of n nodes, row 0 =
//    the target's head on h, row i = head i - 1 (heads 0..n-2): n tokens per
//    step as in the paper, whose n heads include the original one.
// n = num_heads (0: every head of the file). Node i is drawn from row i with
// host->sample_index and the instance's random stream (its argmax at
// temperature 0), row i being the head's logits through
// host->sampling_probabilities, or for code-digit heads the product of the
// class and digit distributions, each through the sampling settings
// (DraftHeads::Step::probabilities). With stop_probability the chain ends after
// the first token its row gave less than that probability (its rows are
// drawn in order, so the draws of the nodes kept do not change). With no
// hidden state yet (a one-token prompt) the proposal is empty.
//
// Not verifying, row 0 is the target's head on h: 8.4 MB of float32 on
// en-small, read right after the target's pass has swept its own 27 MB
// through the cache, so it comes from memory each step (0.46 ms of a 0.58 ms
// proposal). weights = "float16" holds it and the heads' linears as float16
// panels: half the bytes. The session keeps its Step, so a proposal
// allocates nothing once the buffers have their size.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"
#include "draft_support.h"
#include "hidden_state_heads.h"
#include "libtorch_boundary.h"
#include "row_combinations.h"

namespace {

using cadenza::sdk::Error;
namespace sdk = cadenza::sdk;
namespace drafts = cadenza::drafts;
namespace llama = cadenza::llama;

constexpr const char* plugin_name = "draft.mtp";

const char* const head_weight_choices[] = {"float32", "float16", nullptr};

const cdz_param_spec params[] = {
    {"heads", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the heads file (safetensors: heads.{i}.linear.weight/bias, metadata cadenza.kind/heads/hidden_size)"},
    {"target", CDZ_PARAM_PATH, nullptr, 0, 0, 0, nullptr,
     "the target checkpoint, for its lm_head: a safetensors file, an index .json, or a directory"},
    {"num_heads", CDZ_PARAM_INT, "0", 1, 0, 64, nullptr,
     "tokens per step: verifying, heads 0..n-1; not verifying, the target's head then heads 0..n-2; 0: every head"},
    {"threads", CDZ_PARAM_INT, "0", 1, 0, 1024, nullptr,
     "LibTorch intra-op threads (process-wide); 0: keep the process's setting (the backbone's)"},
    {"stop_probability", CDZ_PARAM_FLOAT, "0", 1, 0, 1, nullptr,
     "the chain ends after a token its head gave less than this probability (dynamic length); 0: every head"},
    {"weights", CDZ_PARAM_STRING, "\"float32\"", 0, 0, 0, head_weight_choices,
     "the heads' linears and the target's head as the heads read it: float32 (its own weights, row-major), or "
     "float16 panels (half the bytes a step streams; the target's row then from its weights rounded to float16). "
     "float16 needs " CADENZA_VECTORIZED_KERNEL "; elsewhere the weights stay float32 (with a warning)"},
    drafts::digit_sampling_param,
};

struct Drafter {
    std::unique_ptr<drafts::DraftHeads> heads;
    cdz_rng* rng = nullptr;
    double stop_probability = 0.0;
};

struct Session {
    const Drafter* drafter;
    std::vector<int32_t> tokens, parents;
    drafts::ProbabilityRows rows;
    drafts::DraftHeads::Step step;
};

cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    return sdk::guarded([&] {
        const sdk::Params values(*args);
        auto drafter = std::make_unique<Drafter>();
        drafts::apply_threads(values.integer("threads"));
        c10::InferenceMode inference;
        drafter->heads = std::make_unique<drafts::DraftHeads>(values.string("heads"),
                                                              values.string("target"),
                                                              values.integer("num_heads"));
        const std::string& kind = drafter->heads->kind();
        if (kind != "mtp" && sdk::host().log_enabled(CDZ_LOG_WARN))
            sdk::host().log(CDZ_LOG_WARN, plugin_name,
                               ("the heads file says cadenza.kind = '" + kind +
                                "', not 'mtp'; the architecture is the same, so it is used as MTP heads")
                                   .c_str());
        drafter->rng = args->rng;
        drafter->stop_probability = values.number("stop_probability");
        drafter->heads->set_digit_sampling(drafts::digit_sampling_of(values));
        if (values.string("weights") == "float16" && !drafter->heads->pack_panels(llama::PanelPrecision::float16) &&
            sdk::host().log_enabled(CDZ_LOG_WARN))
            sdk::host().log(CDZ_LOG_WARN, plugin_name,
                            "weights = \"float16\" needs " CADENZA_VECTORIZED_KERNEL ", which this CPU does not "
                            "run; the heads stay float32");
        *out_ctx = drafter.release();
    });
}

void destroy(void* ctx) { delete static_cast<Drafter*>(ctx); }

cdz_status* get_info(void* ctx, cdz_drafter_info* out) {
    return sdk::guarded([&] {
        const auto& d = *static_cast<const Drafter*>(ctx);
        out->max_nodes = static_cast<int32_t>(d.heads->count());
        out->max_depth = static_cast<int32_t>(d.heads->count());
        out->needs_target_hidden = 1;
    });
}

cdz_status* session_create(void* ctx, int64_t, void** out_session) {
    return sdk::guarded([&] { *out_session = new Session{static_cast<const Drafter*>(ctx), {}, {}, {}, {}}; });
}

void session_destroy(void* session) { delete static_cast<Session*>(session); }

cdz_status* propose(void* raw, const cdz_draft_input* in, cdz_draft_output* out) {
    return sdk::guarded([&] {
        auto& s = *static_cast<Session*>(raw);
        const drafts::DraftHeads& heads = *s.drafter->heads;
        const float* h = drafts::target_hidden(*in, heads.hidden_size());
        if (!h) {
            drafts::set_empty(out);
            return;
        }
        const int64_t n = in->token_count, p = in->target_hidden_position;
        bool verifying = false;
        if (p == n - 2)
            verifying = true;
        else if (p != n - 1)
            throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                        "the target's hidden state is at position " + std::to_string(p) + " of a sequence of " +
                            std::to_string(n) + " tokens; expected " + std::to_string(n - 2) + " (verifying) or " +
                            std::to_string(n - 1) + " (not verifying)");
        c10::InferenceMode inference;
        const int64_t count = heads.count();
        const int64_t vocab = heads.vocab_size();
        const drafts::TokenRange tokens = drafts::allowed_tokens(in->sampling, vocab);
        drafts::DraftHeads::Step& step = s.step;
        if (verifying)
            heads.step(h, false, count, tokens, step);
        else
            heads.step(h, true, count - 1, tokens, step);
        float* rows = s.rows.prepare(count, vocab);
        s.tokens.resize(static_cast<size_t>(count));
        int64_t kept = count;
        for (int64_t i = 0; i < count; ++i) {
            float* row = rows + i * vocab;
            step.probabilities(i, in->sampling, row);
            s.tokens[i] = drafts::sample_index(s.drafter->rng, row, vocab);
            if (row[s.tokens[i]] < s.drafter->stop_probability) {
                kept = i + 1;
                break;
            }
        }
        drafts::set_chain(out, s.tokens, s.parents, s.rows, kept);
    });
}

const cdz_drafter_vtable vtable = {
    sizeof(cdz_drafter_vtable), create, destroy, get_info, session_create, session_destroy, propose,
};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0",
    "multi-token prediction heads on the target's last hidden state (MTP), proposing a chain",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host_api, cdz_plugin_list* out) {
    return cadenza::sdk::enter_plugin(host_api, out, descriptors, 1, plugin_name, cadenza::torch_support::describe_exception);
}
