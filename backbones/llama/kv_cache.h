// A preallocated key/value cache for one sequence: per layer [kv_heads,
// capacity, head_dim], on the CPU the keys also as panels of 64 positions
// [kv_heads, capacity / 64 rounded up, head_dim, 64] (only cpu_tree_pass
// reads them). Positions [0, length) are committed; a forward pass writes
// its nodes after them as pending; commit moves the kept nodes into place
// (copying only those rows and panel entries) and forgets the rest.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "llama_config.h"

namespace cadenza::llama {

// How a CPU cache stores keys and values: float32, or float16 (half the
// bytes a pass's attention reads; cpu_tree_pass converts each entry as it
// loads it, combine_half_rows in row_combinations.h). float16 needs the
// vectorized kernel (combine_rows_vectorized()).
enum class KvPrecision { float32, float16 };

class KvCache {
public:
    KvCache(const LlamaConfig& config, int64_t capacity, const at::Device& device,
            KvPrecision precision = KvPrecision::float32);

    int64_t length() const { return length_; }
    int64_t pending() const { return pending_; }
    int64_t capacity() const { return capacity_; }

    // Starts a pass of `count` nodes after the committed prefix (dropping any
    // earlier pending nodes). Throws cadenza::sdk::Error when they do not fit.
    void begin_pass(int64_t count);
    // Writes layer's keys and values of the pass's nodes: [count, kv_heads, head_dim].
    void write(int64_t layer, const at::Tensor& keys, const at::Tensor& values);
    // Keys and values of the committed prefix and the pass: [kv_heads, length + count, head_dim],
    // float32 (a float16 cache's converted).
    at::Tensor keys(int64_t layer) const;
    at::Tensor values(int64_t layer) const;
    bool half() const { return half_; }
    // The same storage as raw rows (CPU caches only): head h's position p at
    // key_rows(layer)[(h * capacity() + p) * head_dim].
    const float* key_rows(int64_t layer) const { return keys_[layer].data_ptr<float>(); }
    const float* value_rows(int64_t layer) const { return values_[layer].data_ptr<float>(); }
    // The keys as panels of 64 positions (CPU caches only): head h's
    // dimension d of position p at key_panels(layer)[h * key_panels_per_head()
    // + ((p / 64) * head_dim + d) * 64 + p % 64]. A query's scores against
    // every position are combine_panels over head h's panels, each panel one
    // contiguous 64 x head_dim block (a column layout [head_dim, capacity]
    // made every dimension a stream of its own, too many for the hardware's
    // prefetchers).
    static constexpr int64_t panel_positions = 64;
    const float* key_panels(int64_t layer) const { return key_panels_[layer].data_ptr<float>(); }
    int64_t key_panels_per_head() const { return panel_count_ * head_dim_ * panel_positions; }
    // The same three for a float16 cache (IEEE binary16 bits).
    const uint16_t* half_key_rows(int64_t layer) const { return half_data(keys_[layer]); }
    const uint16_t* half_value_rows(int64_t layer) const { return half_data(values_[layer]); }
    const uint16_t* half_key_panels(int64_t layer) const { return half_data(key_panels_[layer]); }
    // Writes node `node` of the pass (0 <= node < pending()) in `layer`: its
    // keys and values [kv_heads * head_dim] (CPU caches only).
    void write_node(int64_t layer, int64_t node, const float* keys, const float* values);
    // The same for key/value head `head` alone: its keys and values [head_dim].
    void write_node_head(int64_t layer, int64_t node, int64_t head, const float* keys, const float* values);

    // Keeps the pending nodes `path` (increasing indices into the last pass)
    // as the next committed positions.
    void commit(const std::vector<int64_t>& path);
    // Truncates the committed prefix.
    void rewind(int64_t length);

private:
    static const uint16_t* half_data(const at::Tensor& t) {
        return reinterpret_cast<const uint16_t*>(t.data_ptr<at::Half>());
    }
    // Where head h's dimension d of position p lies in a layer's key panels.
    int64_t panel_index(int64_t head, int64_t position, int64_t d) const {
        return head * key_panels_per_head() + ((position / panel_positions) * head_dim_ + d) * panel_positions +
               position % panel_positions;
    }
    // The key panels' entries of position `from` copied to position `to`, every head.
    template <class T>
    void move_panel_entries(T* panels, int64_t from, int64_t to) const;
    // The key panels' entries of `count` positions from `first` on, from the key rows.
    void write_panels(int64_t layer, int64_t first, int64_t count);

    std::vector<at::Tensor> keys_, values_, key_panels_;
    bool half_ = false;
    int64_t kv_heads_, head_dim_, capacity_, panel_count_;
    int64_t length_ = 0;
    int64_t pending_ = 0;
};

}  // namespace cadenza::llama
