// example.lookup_drafter: prompt lookup decoding (n-gram lookup, as
// llama.cpp's lookup decoding), written in C++ on the SDK's layer. Copy this
// directory, rename the plugin, and replace find_continuation with your rule.
//
// The drafter finds the most recent earlier occurrence of the sequence's last
// n tokens (n from ngram_max down to ngram_min) and proposes the tokens that
// followed it, up to max_tokens, as a chain; without one it proposes nothing.
// It needs no model; the target accepts its tokens where it repeats itself
// exactly (repeated words, greedy decoding). Each proposed token's
// distribution is one-hot, so an exact acceptor accepts it with the target's
// probability of it and the output is still distributed exactly as the
// target's. With `adaptive`, the chain's length follows what the acceptor
// kept of the previous one (as Hugging Face's assisted generation does): two
// more after a chain accepted whole, one fewer after a rejection.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"

namespace {

namespace sdk = cadenza::sdk;

constexpr const char* plugin_name = "example.lookup_drafter";

struct Settings {
    int64_t ngram_min, ngram_max, max_tokens;
    bool adaptive;
};

// Whether the synthesis may emit `token` (the sampling's allowed range and
// extra token); the target gives any other token no probability.
bool allowed(const cdz_sampling* sampling, int32_t token) {
    if (!sampling || sampling->allowed_end <= 0) return true;
    return (token >= sampling->allowed_begin && token < sampling->allowed_end) || token == sampling->allowed_extra;
}

// One synthesis: the last proposal's chain, in arrays that live until the next
// call as the ABI asks, reserved once so that a step allocates nothing.
class Session {
public:
    Session(const Settings& settings, int64_t capacity)
        : settings_(settings), capacity_(capacity), length_(settings.max_tokens) {
        tokens_.reserve(static_cast<size_t>(settings.max_tokens));
        parents_.reserve(static_cast<size_t>(settings.max_tokens));
    }

    void propose(const cdz_draft_input* in, cdz_draft_output* out) {
        if (!in || !out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "propose: the input or the output is NULL");
        if (!in->tokens || in->token_count < 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "propose: no tokens to continue");
        // previous_token_count = 0: no account of a previous proposal (the session's first).
        if (settings_.adaptive && in->previous_token_count > 0 && !tokens_.empty())
            length_ = in->accepted_count == static_cast<int32_t>(tokens_.size())
                          ? std::min(length_ + 2, settings_.max_tokens)
                          : std::max<int64_t>(length_ - 1, 1);
        // The target evaluates the sequence and the chain in one session of `capacity_` positions.
        const int64_t room = std::min(length_, capacity_ - in->token_count);
        find_continuation(in->tokens, in->token_count, room, in->sampling);

        const auto count = static_cast<int32_t>(tokens_.size());
        out->tree.struct_size = sizeof(cdz_token_tree);
        out->tree.node_count = count;
        out->tree.tokens_per_node = 1;
        out->tree.tokens = tokens_.data();
        out->tree.parents = parents_.data();
        out->probabilities = nullptr;
        out->wrote_lent_probabilities = 0;
        if (count == 0) return;  // the host then decodes one token as without a drafter

        // Row i is node i's distribution: one-hot at its token.
        if (!out->lent_probabilities || out->lent_rows < count || out->lent_row_size <= 0)
            throw sdk::Error(CDZ_STATUS_UNSUPPORTED, "propose: the host lent no buffer for " + std::to_string(count) +
                                                         " rows of probabilities (every plugin ABI 1.x host lends one)");
        const int64_t vocab = out->lent_row_size;
        float* row = out->lent_probabilities;
        for (const int32_t token : tokens_) {
            if (token < 0 || token >= vocab)
                throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "propose: token " + std::to_string(token) +
                                                                  " of the sequence is outside the vocabulary");
            std::fill(row, row + vocab, 0.0f);
            row[token] = 1.0f;
            row += vocab;
        }
        out->wrote_lent_probabilities = 1;
    }

private:
    // The chain after the most recent earlier occurrence of the last n tokens,
    // longest n first. The copy may run on into the chain itself (as LZ77's
    // copies overlap), so a run of one token or a short period continues
    // past the end of the sequence. It stops before a token the synthesis
    // may not emit (the prompt's audio start, say); an occurrence followed
    // by none it may emit is passed over. A plain scan: a
    // synthesis is a few thousand tokens, a few microseconds per step.
    void find_continuation(const int32_t* sequence, int64_t length, int64_t room, const cdz_sampling* sampling) {
        tokens_.clear();
        parents_.clear();
        if (room <= 0) return;
        for (int64_t n = std::min(settings_.ngram_max, length - 1); n >= settings_.ngram_min; --n) {
            const int32_t* pattern = sequence + length - n;
            for (int64_t start = length - n - 1; start >= 0; --start) {
                if (!std::equal(pattern, pattern + n, sequence + start)) continue;
                for (int64_t from = start + n; static_cast<int64_t>(tokens_.size()) < room; ++from) {
                    const int32_t token = from < length ? sequence[from] : tokens_[static_cast<size_t>(from - length)];
                    if (!allowed(sampling, token)) break;
                    parents_.push_back(static_cast<int32_t>(tokens_.size()) - 1);
                    tokens_.push_back(token);
                }
                if (!tokens_.empty()) return;
            }
        }
    }

    Settings settings_;
    int64_t capacity_;
    int64_t length_;  // the longest chain proposed next
    std::vector<int32_t> tokens_, parents_;
};

class LookupDrafter {
public:
    explicit LookupDrafter(const cdz_instance_args& args) {
        const sdk::Params params(args);
        settings_ = {params.integer("ngram_min"), params.integer("ngram_max"), params.integer("max_tokens"),
                     params.boolean("adaptive")};
        if (settings_.ngram_min > settings_.ngram_max)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "ngram_min (" + std::to_string(settings_.ngram_min) +
                                                            ") is larger than ngram_max (" +
                                                            std::to_string(settings_.ngram_max) + ")");
    }

    void get_info(cdz_drafter_info* out) const {
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "get_info: out is NULL");
        out->max_nodes = static_cast<int32_t>(settings_.max_tokens);
        out->max_depth = static_cast<int32_t>(settings_.max_tokens);
        out->needs_target_hidden = 0;
    }

    std::unique_ptr<Session> open(int64_t capacity) {
        if (capacity < 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "session_create: capacity " + std::to_string(capacity));
        return std::make_unique<Session>(settings_, capacity);
    }

private:
    Settings settings_{};
};

const cdz_param_spec params[] = {
    {"ngram_min", CDZ_PARAM_INT, "2", 1, 1.0, 16.0, nullptr, "the shortest suffix of the sequence looked up"},
    {"ngram_max", CDZ_PARAM_INT, "4", 1, 1.0, 16.0, nullptr, "the longest suffix looked up (tried first)"},
    {"max_tokens", CDZ_PARAM_INT, "8", 1, 1.0, 64.0, nullptr, "the most tokens proposed in one step"},
    {"adaptive", CDZ_PARAM_BOOL, "true", 0, 0.0, 0.0, nullptr,
     "adapt the chain's length to what was accepted (+2 after a whole chain, -1 after a rejection)"},
};

const cdz_drafter_vtable vtable = {sizeof(cdz_drafter_vtable),
                                   sdk::create<LookupDrafter>,
                                   sdk::destroy<LookupDrafter>,
                                   sdk::method<&LookupDrafter::get_info>,
                                   sdk::method<&LookupDrafter::open>,
                                   sdk::destroy<Session>,
                                   sdk::method<&Session::propose>};

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_DRAFTER, "1.0.0",
    "prompt lookup: proposes what followed the last earlier occurrence of the sequence's last n tokens (C++ example)",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    return sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
