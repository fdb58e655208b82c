// What the C++ acceptor plugins (acceptor.exact, acceptor.tolerance,
// acceptor.pcg) share beyond the SDK: checking an accept() call's input,
// reading the target's rows, summing a probability row and the residual of a
// rejection. Header-only, so that each plugin stays one self-contained MODULE
// library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::acceptors {

[[noreturn]] inline void fail(cdz_status_code code, const std::string& message) { throw sdk::Error(code, message); }
[[noreturn]] inline void invalid(const std::string& message) { fail(CDZ_STATUS_INVALID_ARGUMENT, message); }

// The target's rows of an accept() call: from the host's target_row when it
// gives one (plugin ABI 1.1, for an acceptor whose info sets
// reads_target_rows: the host then computes only the rows asked for), else
// from target_probabilities. Row 0 follows the prefix, row i + 1 node i.
class TargetRows {
public:
    explicit TargetRows(const cdz_accept_input& in)
        : matrix_(in.target_probabilities),
          vocab_(in.vocab_size),
          fetch_(CDZ_STRUCT_HAS(&in, cdz_accept_input, target_row_ctx) ? in.target_row : nullptr),
          ctx_(fetch_ ? in.target_row_ctx : nullptr) {}

    // Whether there are rows to read at all.
    bool present() const { return fetch_ || matrix_; }

    const float* row(int32_t r) const {
        if (!fetch_) return matrix_ + static_cast<int64_t>(r) * vocab_;
        const float* row = fetch_(ctx_, r);
        if (!row) invalid("the host gave no target row " + std::to_string(r));
        return row;
    }

private:
    const float* matrix_;
    int64_t vocab_;
    const float* (*fetch_)(void* ctx, int32_t row);
    void* ctx_;
};

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
    if (verifies && !TargetRows(*in).present())
        invalid("target probabilities are NULL and there is no target_row (verifies = 1)");
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

// get_info's flag for the acceptors that read rows through TargetRows.
inline void set_reads_target_rows(cdz_acceptor_info* out) {
    if (CDZ_STRUCT_HAS(out, cdz_acceptor_info, reads_target_rows)) out->reads_target_rows = 1;
}

// Sums of rows are taken in double in eight interleaved partial sums: entry
// i goes to lane i % 8 for i < 8 * (count / 8), the lanes are added as
// ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)), then the remaining entries in
// order. One running sum in index order waited four cycles per entry and took
// 80% of acceptor.exact's time (acceptor.bias sums the same way, so that with
// beta = 0 the two agree token for token).
constexpr int64_t sum_lanes = 8;

inline double add_lanes(const double (&lane)[sum_lanes]) {
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// A row's sum (in lanes, as above) and its first negative (other than -0),
// infinite or NaN entry, -1 when it has none.
struct RowSum {
    double total = 0.0;
    int64_t first_invalid = -1;
};

inline RowSum sum_row(const float* row, int64_t vocab) {
    // As unsigned bits, the non-negative finite floats (and -0) are those below +inf's.
    constexpr uint32_t infinity_bits = 0x7f800000u, negative_zero_bits = 0x80000000u;
    auto is_invalid = [](float value) {
        uint32_t bits;
        std::memcpy(&bits, &value, sizeof(bits));
        return static_cast<uint32_t>(bits >= infinity_bits && bits != negative_zero_bits);
    };
    double lane[sum_lanes] = {};
    uint32_t invalid = 0;
    int64_t i = 0;
    for (; i + sum_lanes <= vocab; i += sum_lanes)
        for (int64_t j = 0; j < sum_lanes; ++j) {
            invalid |= is_invalid(row[i + j]);
            lane[j] += static_cast<double>(row[i + j]);
        }
    RowSum sum;
    sum.total = add_lanes(lane);
    for (; i < vocab; ++i) {
        invalid |= is_invalid(row[i]);
        sum.total += static_cast<double>(row[i]);
    }
    for (int64_t k = 0; invalid && k < vocab; ++k)
        if (is_invalid(row[k])) {
            sum.first_invalid = k;
            break;
        }
    return sum;
}

// The sum of a probability row, in double; the rows may be off from 1 by
// rounding, so every rule divides by this. Throws if an entry is negative or
// not finite, or if the row has no mass.
inline double row_mass(const float* row, int64_t vocab, const char* what, int64_t index) {
    const RowSum sum = sum_row(row, vocab);
    if (sum.first_invalid >= 0)
        invalid(std::string(what) + " row " + std::to_string(index) + " has an invalid entry at " +
                std::to_string(sum.first_invalid) + " (negative, infinite or NaN)");
    if (!(sum.total > 0.0)) invalid(std::string(what) + " row " + std::to_string(index) + " has no probability mass");
    return sum.total;
}

// next = max(0, r / r_mass - q / q_mass) per entry, computed in double and
// stored as float, with q one-hot at `token` when `q` is NULL; returns the
// sum of `next` (the floats, summed as above).
inline double subtract_rows(const float* r, double r_mass, const float* q, double q_mass, int32_t token,
                            int64_t vocab, float* next) {
    double lane[sum_lanes] = {};
    auto entry = [&](int64_t i) {
        const double q_i = q ? static_cast<double>(q[i]) / q_mass : (i == token ? 1.0 : 0.0);
        const double difference = static_cast<double>(r[i]) / r_mass - q_i;
        return static_cast<float>(difference > 0.0 ? difference : 0.0);
    };
    int64_t i = 0;
    for (; i + sum_lanes <= vocab; i += sum_lanes)
        for (int64_t j = 0; j < sum_lanes; ++j) {
            next[i + j] = entry(i + j);
            lane[j] += static_cast<double>(next[i + j]);
        }
    double total = add_lanes(lane);
    for (; i < vocab; ++i) {
        next[i] = entry(i);
        total += static_cast<double>(next[i]);
    }
    return total;
}

}  // namespace cadenza::acceptors
