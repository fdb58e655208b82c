#include "hidden_state_heads.h"

#include <algorithm>
#include <fstream>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "probability_row.h"
#include "safetensors.h"
#include "row_combinations.h"
#include "small_matmul.h"

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

// The target's matrix `name` (`what` names it in errors, `why` explains a missing one).
at::Tensor read_matrix(const safetensors::Checkpoint& checkpoint, const std::filesystem::path& path,
                       const std::string& name, const std::string& what, const std::string& why = "") {
    if (!checkpoint.contains(name))
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                         path.string() + ": the target's " + what + " '" + name + "' is missing" + why);
    const auto& info = checkpoint.info(name);
    if (info.shape.size() != 2)
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, path.string() + ": tensor '" + name + "' is not a matrix");
    return read_tensor(checkpoint, name, info.shape);
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
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                    where + ": metadata " + key + " = '" + found->second + "' is not a non-negative integer");
    }
}

// heads.{i}.PART.weight [rows, columns] and heads.{i}.PART.bias [rows] of
// heads 0..count-1, stacked: [count, rows, columns] and [count, rows].
std::pair<at::Tensor, at::Tensor> read_heads(const safetensors::File& file, int64_t count, const std::string& part,
                                             int64_t rows, int64_t columns) {
    at::Tensor weight = at::empty({count, rows, columns}, at::kFloat), bias = at::empty({count, rows}, at::kFloat);
    for (int64_t i = 0; i < count; ++i) {
        const std::string prefix = "heads." + std::to_string(i) + "." + part + ".";
        const std::vector<float> w = file.read_f32(prefix + "weight", {rows, columns});
        const std::vector<float> b = file.read_f32(prefix + "bias", {rows});
        std::copy(w.begin(), w.end(), weight[i].data_ptr<float>());
        std::copy(b.begin(), b.end(), bias[i].data_ptr<float>());
    }
    return {weight, bias};
}

}  // namespace

bool target_head_is_tied(const std::filesystem::path& path) {
    try {
        bool tied = !safetensors::Checkpoint::open(path).contains("lm_head.weight");
        const std::filesystem::path config_path = config_beside(path);
        if (std::filesystem::exists(config_path)) {
            nlohmann::json config;
            try {
                std::ifstream(config_path) >> config;
            } catch (const std::exception& e) {
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, config_path.string() + ": not valid JSON: " + e.what());
            }
            tied = config.value("tie_word_embeddings", false);
        }
        return tied;
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

at::Tensor load_target_head(const std::filesystem::path& path) {
    const bool tied = target_head_is_tied(path);
    try {
        return read_matrix(safetensors::Checkpoint::open(path), path, tied ? "model.embed_tokens.weight" : "lm_head.weight",
                           "output head", tied ? " (the config ties it to the embedding)" : "");
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

at::Tensor load_target_embedding(const std::filesystem::path& path) {
    try {
        return read_matrix(safetensors::Checkpoint::open(path), path, "model.embed_tokens.weight", "input embedding");
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

DraftHeads::DraftHeads(const std::filesystem::path& heads_file, const std::filesystem::path& target_checkpoint,
                       int64_t use_heads)
    : DraftHeads(heads_file, load_target_head(target_checkpoint), use_heads) {}

DraftHeads::DraftHeads(const std::filesystem::path& heads_file, at::Tensor lm_head, int64_t use_heads)
    : lm_head_(lm_head.contiguous()) {
    if (lm_head_.dim() != 2) throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the target's output head is not a matrix");
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
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": no tensor 'heads.0.linear.weight'; not a heads file");
        if (declared >= 0 && declared != found)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata cadenza.heads = " + std::to_string(declared) +
                                                       " but the file holds heads 0.." + std::to_string(found - 1));
        if (declared_hidden >= 0 && declared_hidden != hidden_)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                        where + ": hidden size " + std::to_string(declared_hidden) + " differs from the target's " +
                            std::to_string(hidden_) + " (the target's output head)");
        if (use_heads > found)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": asked for " + std::to_string(use_heads) +
                                                       " heads, the file holds " + std::to_string(found));
        count_ = use_heads > 0 ? use_heads : found;
        const auto [weight, bias] = read_heads(file, count_, "linear", hidden_, hidden_);
        weight_ = weight.view({count_ * hidden_, hidden_});
        bias_ = bias.view({count_ * hidden_});
        load_output_heads(file, where);
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

void DraftHeads::load_output_heads(const safetensors::File& file, const std::string& where) {
    const std::optional<CodeGrid> grid = code_grid_of(file.metadata(), vocab_size(), where);
    if (!grid) return;
    digits_.emplace(*grid);
    std::tie(digit_weight_, digit_bias_) = read_heads(file, count_, "digits", digits_->grid().head_rows(), hidden_);
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

at::Tensor DraftHeads::head_logits(int64_t head, const at::Tensor& states) const {
    if (!digits_) return logits(states);
    return digits_->log_probabilities(at::linear(states, digit_weight_[head], digit_bias_[head]));
}

DraftHeads::Step DraftHeads::step(const float* h, bool base, int64_t n, const TokenRange& tokens) const {
    Step step;
    this->step(h, base, n, tokens, step);
    return step;
}

bool DraftHeads::pack_panels(llama::PanelPrecision precision) {
    if (precision == llama::PanelPrecision::int8)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "the heads' panels are float32 or float16, not int8");
    if (!llama::combine_rows_vectorized()) return false;
    linear_panels_ = llama::PanelMatrix::pack(weight_, {}, precision);
    head_panels_ = llama::PanelMatrix::pack(lm_head_, {}, precision);
    return true;
}

void DraftHeads::step(const float* h, bool base, int64_t n, const TokenRange& tokens, Step& step) const {
    // Raw rows through the small-m kernel or the panels (no LibTorch
    // operator: a proposal is a few microseconds of arithmetic; each
    // operator's dispatch costs as much).
    const llama::MatmulKernel kernel = llama::best_matmul_kernel();
    const int64_t vocab = vocab_size();
    step.heads_ = this;
    step.rows_ = n > 0 ? n + (base ? 1 : 0) : 1;
    step.first_digit_row_ = base ? 1 : 0;
    // Row states [rows, H]: h itself for the base row, then h + SiLU(W_i h + b_i).
    std::vector<float>& states = step.states_;
    states.resize(static_cast<size_t>(step.rows_ * hidden_));
    if (n > 0) {
        float* first = states.data() + step.first_digit_row_ * hidden_;
        step.exp_negative_.resize(static_cast<size_t>(n * hidden_));
        if (linear_panels_)
            llama::combine_panel_columns(h, 1, hidden_, *linear_panels_, 0, n * hidden_, bias_.data_ptr<float>(),
                                         first, n * hidden_);
        else
            llama::small_matmul_rows(kernel, h, 1, hidden_, weight_.data_ptr<float>(), n * hidden_, hidden_,
                                     bias_.data_ptr<float>(), first, n * hidden_);
        exponentiate_row(first, step.exp_negative_.data(), n * hidden_, 0.0f, -1.0f);
        for (int64_t i = 0; i < n * hidden_; ++i)
            first[i] = h[i % hidden_] + first[i] / (1.0f + step.exp_negative_[static_cast<size_t>(i)]);
    }
    if (base || n == 0) std::copy(h, h + hidden_, states.begin());
    step.logits_.resize(static_cast<size_t>(step.rows_ * vocab));
    // The target's head on rows [first, first + count): only `tokens`'
    // columns (the panels': the whole panels that hold them).
    auto target_rows = [&](int64_t first, int64_t count) {
        float* y = step.logits_.data() + first * vocab;
        const float* x = states.data() + first * hidden_;
        const bool extra = tokens.extra >= 0 && (tokens.extra < tokens.begin || tokens.extra >= tokens.end);
        if (head_panels_) {  // one span of whole panels from the first allowed token to the last
            const int64_t begin = extra ? std::min(tokens.begin, tokens.extra) : tokens.begin;
            const int64_t end = extra ? std::max(tokens.end, tokens.extra + 1) : tokens.end;
            const int64_t aligned = begin / llama::PanelMatrix::width * llama::PanelMatrix::width;
            llama::combine_panel_columns(x, count, hidden_, *head_panels_, aligned, end - aligned, nullptr, y, vocab);
            return;
        }
        llama::small_matmul_rows(kernel, x, count, hidden_, lm_head_.data_ptr<float>() + tokens.begin * hidden_,
                                 tokens.end - tokens.begin, hidden_, nullptr, y + tokens.begin, vocab);
        if (extra)
            llama::small_matmul_rows(kernel, x, count, hidden_, lm_head_.data_ptr<float>() + tokens.extra * hidden_, 1,
                                     hidden_, nullptr, y + tokens.extra, vocab);
    };
    step.filled_.assign(static_cast<size_t>(step.rows_), true);
    step.digit_rows_.clear();
    step.scratch_.clear();
    if (!digits_) {
        target_rows(0, step.rows_);
        return;
    }
    if (base) target_rows(0, 1);
    if (n > 0) {
        const int64_t width = digits_->grid().head_rows();
        step.digit_rows_.resize(static_cast<size_t>(n * width));
        for (int64_t i = 0; i < n; ++i)
            llama::small_matmul_rows(kernel, states.data() + (step.first_digit_row_ + i) * hidden_, 1, hidden_,
                                     digit_weight_.data_ptr<float>() + i * width * hidden_, width, hidden_,
                                     digit_bias_.data_ptr<float>() + i * width, step.digit_rows_.data() + i * width,
                                     width);
        for (int64_t r = step.first_digit_row_; r < step.rows_; ++r) step.filled_[static_cast<size_t>(r)] = false;
        step.scratch_.resize(static_cast<size_t>(width));
    }
}

const float* DraftHeads::Step::logits(int64_t r) {
    float* row = logits_.data() + r * heads_->vocab_size();
    if (!filled_[static_cast<size_t>(r)]) {
        const auto width = static_cast<int64_t>(scratch_.size());
        heads_->digits_->fill_log_probabilities(digit_rows_.data() + (r - first_digit_row_) * width, row,
                                                scratch_.data());
        filled_[static_cast<size_t>(r)] = true;
    }
    return row;
}

void DraftHeads::Step::probabilities(int64_t r, const cdz_sampling* sampling, float* out) {
    if (digit_row(r) && sampling) {
        const auto width = static_cast<int64_t>(scratch_.size());
        if (heads_->digits_->fill_probabilities(digit_rows_.data() + (r - first_digit_row_) * width, *sampling, out,
                                                scratch_.data()))
            return;
    }
    sampling_probabilities(sampling, logits(r), out, heads_->vocab_size());
}

}  // namespace cadenza::drafts
