#include "hidden_state_heads.h"

#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "error.h"
#include "safetensors.h"

namespace cadenza::drafts {
namespace {

std::filesystem::path config_beside(const std::filesystem::path& checkpoint) {
    return (std::filesystem::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path()) / "config.json";
}

at::Tensor read_tensor(const safetensors::Checkpoint& checkpoint, const std::string& name,
                       const safetensors::Shape& shape) {
    std::vector<float> values = checkpoint.read_f32(name, shape);
    return at::from_blob(values.data(), at::IntArrayRef(shape), at::kFloat).clone();
}

int64_t metadata_int(const std::map<std::string, std::string>& metadata, const std::string& key,
                     const std::string& where) {
    const auto found = metadata.find(key);
    if (found == metadata.end()) return -1;
    try {
        size_t used = 0;
        const long long value = std::stoll(found->second, &used);
        if (used != found->second.size() || value < 0) throw std::invalid_argument(key);
        return value;
    } catch (const std::exception&) {
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    where + ": metadata " + key + " = '" + found->second + "' is not a non-negative integer");
    }
}

}  // namespace

at::Tensor load_target_head(const std::filesystem::path& path) {
    try {
        const safetensors::Checkpoint checkpoint = safetensors::Checkpoint::open(path);
        bool tied = !checkpoint.contains("lm_head.weight");
        const std::filesystem::path config_path = config_beside(path);
        if (std::filesystem::exists(config_path)) {
            nlohmann::json config;
            try {
                std::ifstream(config_path) >> config;
            } catch (const std::exception& e) {
                throw Error(CDZ_STATUS_INVALID_CONFIG, config_path.string() + ": not valid JSON: " + e.what());
            }
            tied = config.value("tie_word_embeddings", false);
        }
        const std::string name = tied ? "model.embed_tokens.weight" : "lm_head.weight";
        if (!checkpoint.contains(name))
            throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": the target's output head '" + name +
                                                       "' is missing" + (tied ? " (the config ties it to the embedding)" : ""));
        const auto& info = checkpoint.info(name);
        if (info.shape.size() != 2)
            throw Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": tensor '" + name + "' is not a matrix");
        return read_tensor(checkpoint, name, info.shape);
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

DraftHeads::DraftHeads(const std::filesystem::path& heads_file, const std::filesystem::path& target_checkpoint,
                       int64_t use_heads)
    : DraftHeads(heads_file, load_target_head(target_checkpoint), use_heads) {}

DraftHeads::DraftHeads(const std::filesystem::path& heads_file, at::Tensor lm_head, int64_t use_heads)
    : lm_head_(std::move(lm_head)) {
    if (lm_head_.dim() != 2) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's output head is not a matrix");
    hidden_ = lm_head_.size(1);
    const std::string where = heads_file.string();
    try {
        const safetensors::File file(heads_file);
        int64_t found = 0;
        while (file.contains("heads." + std::to_string(found) + ".linear.weight")) ++found;
        const int64_t declared = metadata_int(file.metadata(), "cadenza.heads", where);
        const int64_t declared_hidden = metadata_int(file.metadata(), "cadenza.hidden_size", where);
        const auto kind = file.metadata().find("cadenza.kind");
        kind_ = kind == file.metadata().end() ? "" : kind->second;
        if (found == 0)
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": no tensor 'heads.0.linear.weight'; not a heads file");
        if (declared >= 0 && declared != found)
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata cadenza.heads = " + std::to_string(declared) +
                                                       " but the file holds heads 0.." + std::to_string(found - 1));
        if (declared_hidden >= 0 && declared_hidden != hidden_)
            throw Error(CDZ_STATUS_INVALID_CONFIG,
                        where + ": hidden size " + std::to_string(declared_hidden) + " differs from the target's " +
                            std::to_string(hidden_) + " (the target's output head)");
        if (use_heads > found)
            throw Error(CDZ_STATUS_INVALID_CONFIG, where + ": asked for " + std::to_string(use_heads) +
                                                       " heads, the file holds " + std::to_string(found));
        count_ = use_heads > 0 ? use_heads : found;
        std::vector<at::Tensor> weights, biases;
        for (int64_t i = 0; i < count_; ++i) {
            const std::string prefix = "heads." + std::to_string(i) + ".linear.";
            const std::vector<float> w = file.read_f32(prefix + "weight", {hidden_, hidden_});
            const std::vector<float> b = file.read_f32(prefix + "bias", {hidden_});
            weights.push_back(at::from_blob(const_cast<float*>(w.data()), {hidden_, hidden_}, at::kFloat).clone());
            biases.push_back(at::from_blob(const_cast<float*>(b.data()), {hidden_}, at::kFloat).clone());
        }
        weight_ = at::cat(weights, 0).contiguous();
        bias_ = at::cat(biases, 0).contiguous();
    } catch (const safetensors::Error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

at::Tensor DraftHeads::states(const at::Tensor& hidden, int64_t first, int64_t n) const {
    const at::Tensor w = weight_.narrow(0, first * hidden_, n * hidden_);
    const at::Tensor b = bias_.narrow(0, first * hidden_, n * hidden_);
    std::vector<int64_t> shape(hidden.sizes().begin(), hidden.sizes().end());
    shape.back() = n;
    shape.push_back(hidden_);
    const at::Tensor projected = at::linear(hidden, w, b).view(shape);  // [..., n, H]
    return hidden.unsqueeze(-2) + at::silu(projected);
}

at::Tensor DraftHeads::logits(const at::Tensor& hidden) const { return at::linear(hidden, lm_head_); }

at::Tensor DraftHeads::step_logits(const float* h, bool base, int64_t n, const TokenRange& tokens) const {
    const at::Tensor hidden = at::from_blob(const_cast<float*>(h), {hidden_}, at::kFloat);
    at::Tensor rows;  // [base + n, H]
    if (n > 0) {
        const at::Tensor projected =
            at::addmv(bias_.narrow(0, 0, n * hidden_), weight_.narrow(0, 0, n * hidden_), hidden);
        rows = hidden.unsqueeze(0) + at::silu(projected.view({n, hidden_}));
        if (base) rows = at::cat({hidden.unsqueeze(0), rows}, 0);
    } else {
        rows = hidden.unsqueeze(0);
    }
    const int64_t vocab = vocab_size();
    if (tokens.begin == 0 && tokens.end == vocab) return at::mm(rows, lm_head_.t());
    at::Tensor logits = at::empty({rows.size(0), vocab}, rows.options());
    const int64_t width = tokens.end - tokens.begin;
    logits.narrow(1, tokens.begin, width).copy_(at::mm(rows, lm_head_.narrow(0, tokens.begin, width).t()));
    if (tokens.extra >= 0) logits.select(1, tokens.extra).copy_(at::mv(rows, lm_head_[tokens.extra]));
    return logits;
}

}  // namespace cadenza::drafts
