// A preallocated key/value cache for one sequence: per layer [kv_heads,
// capacity, head_dim]. Positions [0, length) are committed; a forward pass
// writes its nodes after them as pending; commit moves the kept nodes into
// place (copying only those rows) and forgets the rest.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "llama_config.h"

namespace cadenza::llama {

class KvCache {
public:
    KvCache(const LlamaConfig& config, int64_t capacity, const at::Device& device);

    int64_t length() const { return length_; }
    int64_t pending() const { return pending_; }
    int64_t capacity() const { return capacity_; }

    // Starts a pass of `count` nodes after the committed prefix (dropping any
    // earlier pending nodes). Throws cadenza::sdk::Error when they do not fit.
    void begin_pass(int64_t count);
    // Writes layer's keys and values of the pass's nodes: [count, kv_heads, head_dim].
    void write(int64_t layer, const at::Tensor& keys, const at::Tensor& values);
    // Keys and values of the committed prefix and the pass: [kv_heads, length + count, head_dim].
    at::Tensor keys(int64_t layer) const;
    at::Tensor values(int64_t layer) const;
    // The same storage as raw rows (CPU caches only): head h's position p at
    // key_rows(layer)[(h * capacity() + p) * head_dim].
    float* key_rows(int64_t layer) { return keys_[layer].data_ptr<float>(); }
    float* value_rows(int64_t layer) { return values_[layer].data_ptr<float>(); }

    // Keeps the pending nodes `path` (increasing indices into the last pass)
    // as the next committed positions.
    void commit(const std::vector<int64_t>& path);
    // Truncates the committed prefix.
    void rewind(int64_t length);

private:
    std::vector<at::Tensor> keys_, values_;
    int64_t capacity_;
    int64_t length_ = 0;
    int64_t pending_ = 0;
};

}  // namespace cadenza::llama
