#include "kv_cache.h"

#include <cstring>
#include <string>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::llama {

KvCache::KvCache(const LlamaConfig& config, int64_t capacity, const at::Device& device, KvPrecision precision)
    : half_(precision == KvPrecision::float16),
      kv_heads_(config.num_key_value_heads),
      head_dim_(config.head_dim),
      capacity_(capacity),
      panel_count_((capacity + panel_positions - 1) / panel_positions) {
    if (capacity <= 0) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the cache capacity must be positive");
    if (half_ && !device.is_cpu())
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "a float16 KV cache is for the CPU pass only");
    const auto options = at::TensorOptions().dtype(half_ ? at::kHalf : at::kFloat).device(device);
    for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
        keys_.push_back(at::zeros({config.num_key_value_heads, capacity, config.head_dim}, options));
        values_.push_back(at::zeros({config.num_key_value_heads, capacity, config.head_dim}, options));
        if (device.is_cpu())
            key_panels_.push_back(
                at::zeros({config.num_key_value_heads, panel_count_, config.head_dim, panel_positions}, options));
    }
}

void KvCache::begin_pass(int64_t count) {
    if (length_ + count > capacity_)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the cache holds " + std::to_string(capacity_) + " positions; " +
                                                     std::to_string(length_) + " are committed and the pass adds " +
                                                     std::to_string(count));
    pending_ = count;
}

void KvCache::write(int64_t layer, const at::Tensor& keys, const at::Tensor& values) {
    keys_[layer].narrow(1, length_, pending_).copy_(keys.transpose(0, 1));
    values_[layer].narrow(1, length_, pending_).copy_(values.transpose(0, 1));
    if (!key_panels_.empty()) write_panels(layer, length_, pending_);
}

void KvCache::write_panels(int64_t layer, int64_t first, int64_t count) {
    auto scatter = [&](const auto* rows, auto* panels) {
        for (int64_t h = 0; h < kv_heads_; ++h)
            for (int64_t position = first; position < first + count; ++position)
                for (int64_t d = 0; d < head_dim_; ++d)
                    panels[panel_index(h, position, d)] = rows[(h * capacity_ + position) * head_dim_ + d];
    };
    if (half_)
        scatter(keys_[layer].data_ptr<at::Half>(), key_panels_[layer].data_ptr<at::Half>());
    else
        scatter(keys_[layer].data_ptr<float>(), key_panels_[layer].data_ptr<float>());
}

void KvCache::write_node(int64_t layer, int64_t node, const float* keys, const float* values) {
    for (int64_t h = 0; h < kv_heads_; ++h) write_node_head(layer, node, h, keys + h * head_dim_, values + h * head_dim_);
}

void KvCache::write_node_head(int64_t layer, int64_t node, int64_t head, const float* keys, const float* values) {
    const int64_t position = length_ + node;
    const int64_t row = (head * capacity_ + position) * head_dim_;
    if (half_) {  // each entry rounded to the nearest float16
        at::Half* key_row = keys_[layer].data_ptr<at::Half>() + row;
        at::Half* value_row = values_[layer].data_ptr<at::Half>() + row;
        at::Half* panels = key_panels_[layer].data_ptr<at::Half>();
        for (int64_t d = 0; d < head_dim_; ++d) {
            key_row[d] = at::Half(keys[d]);
            value_row[d] = at::Half(values[d]);
            panels[panel_index(head, position, d)] = key_row[d];
        }
        return;
    }
    float* panels = key_panels_[layer].data_ptr<float>();
    std::memcpy(keys_[layer].data_ptr<float>() + row, keys, sizeof(float) * head_dim_);
    std::memcpy(values_[layer].data_ptr<float>() + row, values, sizeof(float) * head_dim_);
    for (int64_t d = 0; d < head_dim_; ++d) panels[panel_index(head, position, d)] = keys[d];
}

template <class T>
void KvCache::move_panel_entries(T* panels, int64_t from, int64_t to) const {
    for (int64_t h = 0; h < kv_heads_; ++h)
        for (int64_t d = 0; d < head_dim_; ++d) panels[panel_index(h, to, d)] = panels[panel_index(h, from, d)];
}

at::Tensor KvCache::keys(int64_t layer) const {
    const at::Tensor keys = keys_[layer].narrow(1, 0, length_ + pending_);
    return half_ ? keys.to(at::kFloat) : keys;
}

at::Tensor KvCache::values(int64_t layer) const {
    const at::Tensor values = values_[layer].narrow(1, 0, length_ + pending_);
    return half_ ? values.to(at::kFloat) : values;
}

void KvCache::commit(const std::vector<int64_t>& path) {
    int64_t previous = -1;
    for (int64_t node : path) {
        if (node <= previous || node >= pending_)
            throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "commit path must be increasing indices into the last pass");
        previous = node;
    }
    const auto count = static_cast<int64_t>(path.size());
    bool in_place = true;
    for (int64_t k = 0; k < count; ++k) in_place = in_place && path[k] == k;
    if (!in_place) {
        // Only the kept rows move; a path is increasing, so row k comes from k or later.
        const at::Tensor rows =
            at::tensor(path, at::TensorOptions().dtype(at::kLong)).to(keys_.front().device()) + length_;
        for (size_t layer = 0; layer < keys_.size(); ++layer) {
            keys_[layer].narrow(1, length_, count).copy_(keys_[layer].index_select(1, rows));
            values_[layer].narrow(1, length_, count).copy_(values_[layer].index_select(1, rows));
            if (key_panels_.empty()) continue;
            // Position k's entries come from path[k] >= k, after every earlier
            // one has moved: in order, no source is overwritten before it is read.
            for (int64_t k = 0; k < count; ++k) {
                if (path[k] == k) continue;
                if (half_)
                    move_panel_entries(key_panels_[layer].data_ptr<at::Half>(), length_ + path[k], length_ + k);
                else
                    move_panel_entries(key_panels_[layer].data_ptr<float>(), length_ + path[k], length_ + k);
            }
        }
    }
    length_ += count;
    pending_ = 0;
}

void KvCache::rewind(int64_t length) {
    if (length < 0 || length > length_)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "cannot rewind to " + std::to_string(length) + " of " +
                                                     std::to_string(length_) + " committed positions");
    length_ = length;
    pending_ = 0;
}

}  // namespace cadenza::llama
