#include "recurrent_draft.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>

#include "cadenza/sdk/plugin_error.hpp"
#include "probability_row.h"
#include "safetensors.h"
#include "small_matmul.h"

namespace cadenza::drafts {
namespace {

constexpr const char* state_weight_name = "cell.state.weight";
constexpr const char* token_weight_name = "cell.token.weight";
constexpr const char* bias_name = "cell.bias";
constexpr const char* out_weight_name = "cell.out.weight";
constexpr const char* digit_weight_name = "digits.weight";
constexpr const char* digit_bias_name = "digits.bias";

int64_t metadata_count(const std::map<std::string, std::string>& metadata, const std::string& key,
                       const std::string& where) {
    const auto found = metadata.find(key);
    if (found == metadata.end())
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata '" + key + "' is missing");
    try {
        size_t used = 0;
        const long long value = std::stoll(found->second, &used);
        if (used == found->second.size() && value > 0) return value;
    } catch (const std::exception&) {
    }
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                     where + ": metadata " + key + " = '" + found->second + "' is not a positive integer");
}

at::Tensor read(const safetensors::File& file, const std::string& name, const safetensors::Shape& shape) {
    std::vector<float> values = file.read_f32(name, shape);
    return at::from_blob(values.data(), at::IntArrayRef(shape), at::kFloat).clone();
}

void add(safetensors::Writer& writer, const std::string& name, const at::Tensor& tensor) {
    const at::Tensor values = tensor.detach().to(at::kCPU, at::kFloat).contiguous();
    writer.add_f32(name, safetensors::Shape(values.sizes().begin(), values.sizes().end()), values.data_ptr<float>());
}

}  // namespace

RecurrentDraft RecurrentDraft::initial(int64_t hidden_size, int64_t cell_size, int64_t depth, const CodeGrid& grid,
                                       const at::Tensor& initial_digit_weight, const at::Tensor& initial_digit_bias,
                                       uint64_t seed) {
    if (hidden_size < 1 || cell_size < 1 || depth < 1)
        throw sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, "a recurrent draft needs a positive hidden size, cell size and depth");
    auto generator = at::detail::createCPUGenerator(seed);
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
    RecurrentDraft draft;
    draft.state_weight = at::empty({cell_size, hidden_size}, at::kFloat).uniform_(-bound, bound, generator);
    draft.token_weight = at::empty({cell_size, hidden_size}, at::kFloat).uniform_(-bound, bound, generator);
    draft.bias = at::zeros({cell_size}, at::kFloat);
    draft.out_weight = at::zeros({hidden_size, cell_size}, at::kFloat);
    draft.digit_weight = initial_digit_weight.detach().to(at::kFloat).clone();
    draft.digit_bias = initial_digit_bias.detach().to(at::kFloat).clone();
    draft.digits = std::make_shared<const CodeDigitDistribution>(grid);
    draft.depth = depth;
    return draft;
}

RecurrentDraft RecurrentDraft::load(const std::filesystem::path& path, int64_t vocab_size) {
    const std::string where = path.string();
    try {
        const safetensors::File file(path);
        const auto& metadata = file.metadata();
        const auto kind = metadata.find("cadenza.kind");
        if (kind == metadata.end() || kind->second != "recurrent")
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                             where + ": not a recurrent draft (metadata cadenza.kind is " +
                                 (kind == metadata.end() ? std::string("missing") : "'" + kind->second + "'") +
                                 ", expected 'recurrent')");
        const int64_t hidden = metadata_count(metadata, "cadenza.hidden_size", where);
        const int64_t cell = metadata_count(metadata, "cadenza.cell_size", where);
        const int64_t file_vocab = metadata_count(metadata, "cadenza.vocab_size", where);
        if (vocab_size > 0 && file_vocab != vocab_size)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": its vocabulary has " + std::to_string(file_vocab) +
                                                            " tokens, the target's " + std::to_string(vocab_size));
        const std::optional<CodeGrid> grid = code_grid_of(metadata, file_vocab, where);
        if (!grid)
            throw sdk::Error(CDZ_STATUS_INVALID_CONFIG,
                             where + ": a recurrent draft needs a code-digit head (metadata cadenza.output = \"code_digits\")");
        RecurrentDraft draft;
        draft.depth = metadata_count(metadata, "cadenza.depth", where);
        if (const auto scoring = metadata.find("cadenza.candidate_scoring"); scoring != metadata.end()) {
            if (scoring->second != "target_output_table")
                throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + ": metadata cadenza.candidate_scoring = '" +
                                                                scoring->second + "' (expected 'target_output_table')");
            draft.table_scored = true;
        }
        draft.digits = std::make_shared<const CodeDigitDistribution>(*grid);
        const int64_t rows = grid->head_rows();
        draft.state_weight = read(file, state_weight_name, {cell, hidden});
        draft.token_weight = read(file, token_weight_name, {cell, hidden});
        draft.bias = read(file, bias_name, {cell});
        draft.out_weight = read(file, out_weight_name, {hidden, cell});
        draft.digit_weight = read(file, digit_weight_name, {rows, hidden});
        draft.digit_bias = read(file, digit_bias_name, {rows});
        return draft;
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

void RecurrentDraft::save(const std::filesystem::path& path,
                          const std::vector<std::pair<std::string, std::string>>& metadata) const {
    safetensors::Writer writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("cadenza.kind", "recurrent");
    writer.set_metadata("cadenza.hidden_size", std::to_string(hidden_size()));
    writer.set_metadata("cadenza.cell_size", std::to_string(cell_size()));
    writer.set_metadata("cadenza.depth", std::to_string(depth));
    if (table_scored) writer.set_metadata("cadenza.candidate_scoring", "target_output_table");
    for (const auto& [key, value] : code_grid_metadata(digits->grid())) writer.set_metadata(key, value);
    writer.set_metadata("cadenza.vocab_size", std::to_string(digits->grid().vocab_size));
    for (const auto& [key, value] : metadata) writer.set_metadata(key, value);
    for (const auto& [name, tensor] : named_tensors()) add(writer, name, tensor);
    try {
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
        writer.write(path);
    } catch (const safetensors::Error& e) {
        throw sdk::Error(CDZ_STATUS_IO_ERROR, e.what());
    } catch (const std::filesystem::filesystem_error& e) {
        throw sdk::Error(CDZ_STATUS_IO_ERROR, path.string() + ": " + e.what());
    }
}

std::string RecurrentDraft::description() const {
    return "cell " + std::to_string(cell_size()) + " on hidden " + std::to_string(hidden_size()) + ", trained " +
           std::to_string(depth) + " steps deep, code digits " + digits->grid().levels_text() + " from token " +
           std::to_string(digits->grid().code_offset);
}

std::vector<std::pair<std::string, at::Tensor>> RecurrentDraft::named_tensors() const {
    return {{state_weight_name, state_weight}, {token_weight_name, token_weight}, {bias_name, bias},
            {out_weight_name, out_weight},     {digit_weight_name, digit_weight}, {digit_bias_name, digit_bias}};
}

at::Tensor RecurrentDraft::advance(const at::Tensor& state, const at::Tensor& token_embedding) const {
    if (state.dim() == 1) {
        // A drafter's single row: matrix-vector products (at::linear would
        // make it a matrix product, which OpenBLAS packs the weights for on every call).
        const at::Tensor pre = at::addmv(at::addmv(bias, state_weight, state), token_weight, token_embedding);
        return at::addmv(state, out_weight, at::silu(pre));
    }
    const at::Tensor pre = at::linear(state, state_weight, bias) + at::linear(token_embedding, token_weight);
    return state + at::linear(at::silu(pre), out_weight);
}

void RecurrentDraft::hold_cell_as_half() {
    const int64_t hidden = hidden_size(), cell = cell_size();
    const at::Tensor input = at::cat({state_weight, token_weight}, 1).contiguous();
    half_input = std::make_shared<const HalfPanels>(input.data_ptr<float>(), cell, 2 * hidden);
    half_output = std::make_shared<const HalfPanels>(out_weight.contiguous().data_ptr<float>(), hidden, cell);
}

void RecurrentDraft::advance_row(float* state, const float* token_embedding, float* scratch) const {
    const int64_t hidden = hidden_size(), cell = cell_size();
    if (half_input) {
        float* pre = scratch;                  // [C]: W_state s + W_token e + b, then SiLU of it
        float* exp_pre = scratch + cell;       // [C]: exp(-pre)
        float* input = scratch + 2 * cell;     // [2H]: s then e; then W_out SiLU(...) in its first H
        std::copy(state, state + hidden, input);
        std::copy(token_embedding, token_embedding + hidden, input + hidden);
        half_input->multiply(input, bias.data_ptr<float>(), pre);
        exponentiate_row(pre, exp_pre, cell, 0.0f, -1.0f);
        for (int64_t i = 0; i < cell; ++i) pre[i] /= 1.0f + exp_pre[i];
        half_output->multiply(pre, nullptr, input);
        for (int64_t i = 0; i < hidden; ++i) state[i] += input[i];
        return;
    }
    const llama::MatmulKernel kernel = llama::best_matmul_kernel();
    float* pre = scratch;                // [C]: W_state s + b, then SiLU of the sum
    float* from_token = scratch + cell;  // [C]: W_token e
    float* change = scratch + 2 * cell;  // [H]: W_out SiLU(...)
    llama::small_matmul_rows(kernel, state, 1, hidden, state_weight.data_ptr<float>(), cell, hidden,
                             bias.data_ptr<float>(), pre, cell);
    llama::small_matmul_rows(kernel, token_embedding, 1, hidden, token_weight.data_ptr<float>(), cell, hidden, nullptr,
                             from_token, cell);
    for (int64_t i = 0; i < cell; ++i) pre[i] += from_token[i];
    exponentiate_row(pre, from_token, cell, 0.0f, -1.0f);  // exp(-pre)
    for (int64_t i = 0; i < cell; ++i) pre[i] /= 1.0f + from_token[i];
    llama::small_matmul_rows(kernel, pre, 1, cell, out_weight.data_ptr<float>(), hidden, cell, nullptr, change, hidden);
    for (int64_t i = 0; i < hidden; ++i) state[i] += change[i];
}

void RecurrentDraft::digit_logits_row(const float* state, float* out) const {
    llama::small_matmul_rows(llama::best_matmul_kernel(), state, 1, hidden_size(), digit_weight.data_ptr<float>(),
                             digit_weight.size(0), hidden_size(), digit_bias.data_ptr<float>(), out,
                             digit_weight.size(0));
}

}  // namespace cadenza::drafts
