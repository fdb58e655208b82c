// What the C++ acceptor plugins (acceptor.exact, acceptor.tolerance) share
// at the C ABI boundary: turning exceptions into statuses that name the
// plugin, checking the host table, checking an accept() call's input, and
// summing a probability row. Header-only, so that each plugin stays one
// self-contained MODULE library; nothing here throws across the boundary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <string>

#include "cadenza/plugin.h"

namespace cadenza::acceptors {

// Thrown inside a plugin; guarded() turns it into a status.
class AcceptorError : public std::exception {
public:
    AcceptorError(cdz_status_code code, std::string message) : code_(code), message_(std::move(message)) {}
    cdz_status_code code() const noexcept { return code_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    cdz_status_code code_;
    std::string message_;
};

// Hands a status the host made (a params_get_* failure) back unchanged.
struct HostStatus {
    cdz_status* status;
};

[[noreturn]] inline void fail(cdz_status_code code, const std::string& message) { throw AcceptorError(code, message); }
[[noreturn]] inline void invalid(const std::string& message) { fail(CDZ_STATUS_INVALID_ARGUMENT, message); }

// Runs `body`; any exception becomes a status whose message starts with
// `plugin_name`. Returns NULL when body returns normally.
template <typename Body>
cdz_status* guarded(const cdz_host_api* host, const char* plugin_name, Body&& body) noexcept {
    if (!host || !host->status_create) return nullptr;  // cannot happen once the entry point accepted the host
    // Built only on failure: a successful call allocates nothing here.
    auto prefix = [plugin_name] { return std::string(plugin_name) + ": "; };
    try {
        body();
        return nullptr;
    } catch (const HostStatus& status) {
        return status.status;
    } catch (const AcceptorError& error) {
        try {
            return host->status_create(error.code(), (prefix() + error.what()).c_str());
        } catch (...) {
            return host->status_create(error.code(), plugin_name);
        }
    } catch (const std::bad_alloc&) {
        return host->status_create(CDZ_STATUS_OUT_OF_MEMORY, plugin_name);
    } catch (const std::exception& error) {
        try {
            return host->status_create(CDZ_STATUS_INTERNAL, (prefix() + "internal error: " + error.what()).c_str());
        } catch (...) {
            return host->status_create(CDZ_STATUS_INTERNAL, plugin_name);
        }
    } catch (...) {
        return host->status_create(CDZ_STATUS_INTERNAL, plugin_name);
    }
}

// The table of an acceptor without sessions: the functions appended since
// (sessions, ABI 0.4) stay NULL.
constexpr cdz_acceptor_vtable stateless_acceptor_vtable(decltype(cdz_acceptor_vtable::create) create,
                                                        decltype(cdz_acceptor_vtable::destroy) destroy,
                                                        decltype(cdz_acceptor_vtable::get_info) get_info,
                                                        decltype(cdz_acceptor_vtable::accept) accept) {
    cdz_acceptor_vtable table{};
    table.struct_size = sizeof(cdz_acceptor_vtable);
    table.create = create;
    table.destroy = destroy;
    table.get_info = get_info;
    table.accept = accept;
    return table;
}

// The body of cdz_plugin_entry for a library with one descriptor.
inline cdz_status* enter_plugin(const cdz_host_api* host, cdz_plugin_list* out,
                                const cdz_plugin_descriptor* const* descriptors, const char* plugin_name,
                                const cdz_host_api** stored_host) noexcept {
    // The table must reach the last member these plugins call.
    constexpr size_t required = offsetof(cdz_host_api, sample_index) + sizeof(void*);
    if (!host || host->struct_size < offsetof(cdz_host_api, status_create) + sizeof(void*) || !host->status_create)
        return nullptr;  // nothing to report with
    const char* problem = nullptr;
    if (host->abi_major != CDZ_PLUGIN_ABI_MAJOR) problem = "the host speaks another major plugin ABI";
    else if (host->struct_size < required) problem = "the host table is older than this plugin";
    else if (!host->rng_uniform || !host->sample_index || !host->params_get_int || !host->params_get_float)
        problem = "the host table lacks a function this plugin calls";
    else if (!out) problem = "the plugin list is NULL";
    if (problem) {
        std::string message;
        try {
            message = std::string(plugin_name) + ": " + problem;
        } catch (...) {
            return host->status_create(CDZ_STATUS_ABI_MISMATCH, problem);
        }
        return host->status_create(CDZ_STATUS_ABI_MISMATCH, message.c_str());
    }
    *stored_host = host;
    out->struct_size = sizeof(cdz_plugin_list);
    out->descriptors = descriptors;
    out->count = 1;
    return nullptr;
}

// Checks what every accept() call needs, before any random number is drawn:
// the pointers, the vocabulary, a single-codebook tree in topological order
// with tokens inside the vocabulary, and room for the result. Clears the
// output counts so that a failed call returns an empty result.
inline void check_accept_call(const cdz_accept_input* in, cdz_accept_output* out, bool verifies) {
    if (!in) invalid("the input is NULL");
    if (!out) invalid("the output is NULL");
    if (in->struct_size < sizeof(cdz_accept_input)) invalid("the input struct is smaller than this plugin's");
    if (out->struct_size < sizeof(cdz_accept_output)) invalid("the output struct is smaller than this plugin's");
    out->accepted_count = 0;
    out->emitted_count = 0;
    const cdz_token_tree* tree = in->tree;
    if (!tree) invalid("the token tree is NULL");
    if (tree->node_count < 0) invalid("the tree has a negative node count " + std::to_string(tree->node_count));
    if (tree->tokens_per_node != 1)
        fail(CDZ_STATUS_UNSUPPORTED, "only single-codebook trees are supported (tokens_per_node = " +
                                         std::to_string(tree->tokens_per_node) + ")");
    if (in->vocab_size <= 0) invalid("the vocabulary size must be positive, got " + std::to_string(in->vocab_size));
    if (in->vocab_size > std::numeric_limits<int32_t>::max())
        invalid("the vocabulary size " + std::to_string(in->vocab_size) + " does not fit token ids");
    if (verifies && !in->target_probabilities) invalid("target probabilities are NULL (verifies = 1)");
    const int32_t n = tree->node_count;
    if (n > 0 && (!tree->tokens || !tree->parents)) invalid("the tree's tokens or parents are NULL");
    if (n > 0 && !out->accepted_nodes) invalid("accepted_nodes is NULL");
    if (!out->emitted_tokens) invalid("emitted_tokens is NULL");
    if (out->accepted_capacity < n)
        invalid("accepted_nodes has room for " + std::to_string(out->accepted_capacity) + " nodes, the tree has " +
                std::to_string(n));
    if (out->emitted_capacity < n + 1)
        invalid("emitted_tokens has room for " + std::to_string(out->emitted_capacity) + " tokens, a tree of " +
                std::to_string(n) + " nodes can emit " + std::to_string(n + 1));
    for (int32_t i = 0; i < n; ++i) {
        const int32_t parent = tree->parents[i];
        if (parent < -1 || parent >= i)
            invalid("node " + std::to_string(i) + " has parent " + std::to_string(parent) +
                    "; a parent must be -1 or an earlier node");
        const int32_t token = tree->tokens[i];
        if (token < 0 || token >= in->vocab_size)
            invalid("node " + std::to_string(i) + " has token " + std::to_string(token) + ", outside [0, " +
                    std::to_string(in->vocab_size) + ")");
    }
}

// The sum of a probability row in index order, in double; the rows may be
// off from 1 by rounding, so every rule divides by this. Throws if an entry
// is negative or not finite, or if the row has no mass.
inline double row_mass(const float* row, int64_t vocab, const char* what, int64_t index) {
    double total = 0.0;
    for (int64_t i = 0; i < vocab; ++i) {
        if (!(row[i] >= 0.0f) || row[i] > std::numeric_limits<float>::max())
            invalid(std::string(what) + " row " + std::to_string(index) + " has an invalid entry at " +
                    std::to_string(i) + " (negative, infinite or NaN)");
        total += row[i];
    }
    if (!(total > 0.0)) invalid(std::string(what) + " row " + std::to_string(index) + " has no probability mass");
    return total;
}

}  // namespace cadenza::acceptors
