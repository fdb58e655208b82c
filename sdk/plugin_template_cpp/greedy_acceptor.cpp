// example.greedy_acceptor: greedy verification, written in C++ on the SDK's
// layer. Walks down the tree taking the child whose token is the argmax of
// the target's row after its parent, up to max_accepted nodes, then emits
// that row's argmax (the correction or the bonus token). Copy and edit.
#include <cstdint>
#include <string>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_class.hpp"
#include "cadenza/sdk/plugin_error.hpp"
#include "cadenza/sdk/plugin_params.hpp"

namespace {

namespace sdk = cadenza::sdk;

constexpr const char* plugin_name = "example.greedy_acceptor";

int32_t argmax(const float* row, int64_t vocab) {
    int64_t best = 0;
    for (int64_t i = 1; i < vocab; ++i)
        if (row[i] > row[best]) best = i;
    return static_cast<int32_t>(best);
}

class GreedyAcceptor {
public:
    explicit GreedyAcceptor(const cdz_instance_args& args)
        : max_accepted_(sdk::Params(args).integer("max_accepted")) {}

    void get_info(cdz_acceptor_info* out) const {
        if (!out) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "get_info: out is NULL");
        out->verifies = 1;
        out->needs_draft_probabilities = 0;
    }

    void accept(const cdz_accept_input* in, cdz_accept_output* out) const {
        if (!in || !out || !in->tree || !in->target_probabilities)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "accept: the input, its tree or the output is NULL");
        const cdz_token_tree& tree = *in->tree;
        if (out->accepted_capacity < tree.node_count || out->emitted_capacity < tree.node_count + 1)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "accept: the output has no room for the tree");
        out->accepted_count = 0;
        out->emitted_count = 0;
        int32_t current = -1;  // the committed prefix
        for (;;) {
            const float* row = in->target_probabilities + static_cast<int64_t>(current + 1) * in->vocab_size;
            const int32_t wanted = argmax(row, in->vocab_size);
            int32_t next = -1;
            if (out->accepted_count < max_accepted_)
                for (int32_t i = current + 1; i < tree.node_count && next < 0; ++i)
                    if (tree.parents[i] == current && tree.tokens[i] == wanted) next = i;
            if (next < 0) {
                out->emitted_tokens[out->emitted_count++] = wanted;
                return;
            }
            out->accepted_nodes[out->accepted_count++] = next;
            out->emitted_tokens[out->emitted_count++] = wanted;
            current = next;
        }
    }

private:
    int64_t max_accepted_;
};

const cdz_param_spec params[] = {
    {"max_accepted", CDZ_PARAM_INT, "64", 1, 0.0, 1024.0, nullptr, "the most draft nodes accepted in one step"},
};

const cdz_acceptor_vtable vtable = {sizeof(cdz_acceptor_vtable),
                                    sdk::create<GreedyAcceptor>,
                                    sdk::destroy<GreedyAcceptor>,
                                    sdk::method<&GreedyAcceptor::get_info>,
                                    sdk::method<&GreedyAcceptor::accept>,
                                    nullptr, nullptr, nullptr, nullptr, nullptr};  // no sessions

const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), CDZ_PLUGIN_ABI_MAJOR, CDZ_PLUGIN_ABI_MINOR, plugin_name,
    CDZ_PLUGIN_KIND_ACCEPTOR, "1.0.0", "greedy verification: the target's argmax path through the tree (C++ example)",
    params, sizeof(params) / sizeof(params[0]), sizeof(cdz_param_spec), &vtable,
};

const cdz_plugin_descriptor* const descriptors[] = {&descriptor};

}  // namespace

extern "C" CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
    return sdk::enter_plugin(host, out, descriptors, 1, plugin_name);
}
