#include "draft_support.h"

#include <string>

#include <ATen/Parallel.h>

#include "cadenza/sdk/plugin_error.hpp"
#include "thread_policy.h"

namespace cadenza::drafts {

void apply_threads(int64_t threads) {
    llama::apply_thread_policy(threads > 0 ? static_cast<int>(threads) : at::get_num_threads());
}

void sampling_probabilities(const cdz_sampling* sampling, const float* logits, float* probabilities, int64_t count) {
    if (!sampling) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the draft input has no sampling settings");
    sdk::throw_if_error(sdk::host().sampling_probabilities(sampling, logits, probabilities, count));
}

void sampling_nucleus(const cdz_sampling* sampling, float* probabilities, int64_t count) {
    if (!sampling) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the draft input has no sampling settings");
    sdk::throw_if_error(sdk::host().sampling_nucleus(sampling, probabilities, count));
}

int32_t sample_index(cdz_rng* rng, const float* probabilities, int64_t count) {
    return static_cast<int32_t>(sdk::host().sample_index(rng, probabilities, count));
}

TokenRange allowed_tokens(const cdz_sampling* sampling, int64_t vocab) {
    TokenRange all{0, vocab, -1};
    if (!sampling || sampling->struct_size < sizeof(cdz_sampling) || sampling->allowed_end <= 0) return all;
    if (sampling->allowed_begin < 0 || sampling->allowed_begin >= sampling->allowed_end ||
        sampling->allowed_end > vocab || sampling->allowed_extra >= vocab)
        return all;
    TokenRange range{sampling->allowed_begin, sampling->allowed_end, sampling->allowed_extra};
    if (range.extra >= range.begin && range.extra < range.end) range.extra = -1;  // already inside
    if (range.extra < -1) range.extra = -1;
    return range;
}

const float* target_hidden(const cdz_draft_input& in, int64_t hidden_size) {
    const DLTensor* t = in.target_hidden;
    if (!t) return nullptr;
    if (t->device.device_type != kDLCPU || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's hidden state must be a float32 CPU tensor");
    int64_t elements = 1;
    for (int32_t d = 0; d < t->ndim; ++d) elements *= t->shape[d];
    if (t->ndim < 1 || t->shape[t->ndim - 1] != hidden_size || elements != hidden_size)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "the target's hidden state has " + std::to_string(elements) + " values, the heads expect " +
                        std::to_string(hidden_size) + " (is the target the checkpoint the heads were trained on?)");
    if (t->strides && t->ndim >= 1 && t->strides[t->ndim - 1] != 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's hidden state is not contiguous");
    return reinterpret_cast<const float*>(static_cast<const char*>(t->data) + t->byte_offset);
}

float* ProbabilityRows::prepare(int64_t rows, int64_t vocab) {
    if (!block_ || block_->lent) block_ = std::make_shared<Block>();
    // resize() keeps the capacity: after the first proposal this neither
    // allocates nor zero-fills.
    block_->data.resize(static_cast<size_t>(rows * vocab));
    block_->shape[0] = rows;
    block_->shape[1] = vocab;
    return block_->data.data();
}

DLManagedTensor* ProbabilityRows::lend(int64_t rows) {
    Block& b = *block_;
    if (rows >= 0 && rows < b.shape[0]) b.shape[0] = rows;
    b.lent = block_;
    DLTensor& dl = b.managed.dl_tensor;
    dl.data = b.data.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = 2;
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = b.shape;
    dl.strides = nullptr;
    dl.byte_offset = 0;
    b.managed.manager_ctx = &b;
    b.managed.deleter = [](DLManagedTensor* self) {
        // Dropping the self-reference frees the block if its session is gone.
        std::shared_ptr<Block> keep = std::move(static_cast<Block*>(self->manager_ctx)->lent);
    };
    return &b.managed;
}

void set_tree(cdz_draft_output* out, const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents) {
    out->tree.struct_size = sizeof(cdz_token_tree);
    out->tree.node_count = static_cast<int32_t>(tokens.size());
    out->tree.tokens_per_node = 1;
    out->tree.tokens = tokens.data();
    out->tree.parents = parents.data();
}

void set_chain(cdz_draft_output* out, std::vector<int32_t>& tokens, std::vector<int32_t>& parents,
               ProbabilityRows& rows, int64_t count) {
    tokens.resize(static_cast<size_t>(count));
    parents.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) parents[static_cast<size_t>(i)] = static_cast<int32_t>(i) - 1;
    set_tree(out, tokens, parents);
    out->probabilities = rows.lend(count);
}

void set_empty(cdz_draft_output* out) {
    out->tree.struct_size = sizeof(cdz_token_tree);
    out->tree.node_count = 0;
    out->tree.tokens_per_node = 1;
    out->tree.tokens = nullptr;
    out->tree.parents = nullptr;
    out->probabilities = nullptr;
}

}  // namespace cadenza::drafts
