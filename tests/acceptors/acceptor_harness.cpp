#include "acceptor_harness.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>

#include "error.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "status_object.h"

namespace cadenza::test {

struct AcceptorHarness::State {
    PipelineConfig config;
    std::unique_ptr<PluginInstance> instance;
    bool lend_rows = false;
    int32_t refused_row = -1;
    const std::vector<float>* target = nullptr;  // during accept()
    int64_t vocab = 0;
    std::vector<int32_t> rows_asked;

    static const float* target_row(void* ctx, int32_t row) {
        State& state = *static_cast<State*>(ctx);
        state.rows_asked.push_back(row);
        const int64_t rows = static_cast<int64_t>(state.target->size()) / state.vocab;
        if (row < 0 || row >= rows || row == state.refused_row) return nullptr;
        return state.target->data() + static_cast<int64_t>(row) * state.vocab;
    }
};

AcceptorHarness::AcceptorHarness(const std::string& table, uint64_t seed, const std::filesystem::path& base_directory)
    : state_(std::make_unique<State>()) {
    state_->config = load_pipeline_config_string("[acceptor]\n" + table, "acceptor.toml", base_directory);
    state_->instance = std::make_unique<PluginInstance>(*state_->config.stage("acceptor"), "cpu", seed);
}

AcceptorHarness::~AcceptorHarness() = default;

cdz_sampling AcceptorHarness::default_sampling() { return cdz_sampling{sizeof(cdz_sampling), 1.0, 0, 1.0}; }

cdz_acceptor_info AcceptorHarness::info() const {
    cdz_acceptor_info info{};
    info.struct_size = sizeof(info);
    const auto& vtable = state_->instance->vtable<cdz_acceptor_vtable>();
    throw_if_error(vtable.get_info(state_->instance->context(), &info), "get_info");
    return info;
}

AcceptResult AcceptorHarness::accept(const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents,
                                     int64_t vocab, const std::vector<float>& target, const std::vector<float>& draft,
                                     const cdz_sampling& sampling, const std::vector<int32_t>& sequence) const {
    const int32_t n = static_cast<int32_t>(tokens.size());
    if (parents.size() != tokens.size()) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "tokens and parents differ in size");
    if (!target.empty() && target.size() != static_cast<size_t>((n + 1) * vocab))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "target must hold (n + 1) * vocab values");
    if (!draft.empty() && draft.size() != static_cast<size_t>(n * vocab))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "draft must hold n * vocab values");
    cdz_token_tree tree{sizeof(cdz_token_tree), n, 1, tokens.data(), parents.data()};
    cdz_accept_input input{};
    input.struct_size = sizeof(input);
    input.tree = &tree;
    input.vocab_size = vocab;
    input.target_probabilities = target.empty() ? nullptr : target.data();
    state_->rows_asked.clear();
    if (state_->lend_rows && !target.empty()) {
        state_->target = &target;
        state_->vocab = vocab;
        input.target_probabilities = nullptr;
        input.target_row = State::target_row;
        input.target_row_ctx = state_.get();
    }
    input.draft_probabilities = draft.empty() ? nullptr : draft.data();
    input.sampling = &sampling;
    input.sequence = sequence.empty() ? nullptr : sequence.data();
    input.sequence_length = static_cast<int64_t>(sequence.size());
    std::vector<int32_t> nodes(static_cast<size_t>(n) + 1, -1), emitted(static_cast<size_t>(n) + 1, -1),
        audio(static_cast<size_t>(n) + 1, -1);
    cdz_accept_output output{sizeof(cdz_accept_output), nodes.data(), 0, emitted.data(), 0, n + 1, n + 1, audio.data()};
    const auto& vtable = state_->instance->vtable<cdz_acceptor_vtable>();
    throw_if_error(vtable.accept(state_->instance->context(), &input, &output), "accept");
    if (output.accepted_count < 0 || output.accepted_count > n || output.emitted_count < 0 || output.emitted_count > n + 1)
        throw Error(CDZ_STATUS_INTERNAL, "accept returned counts out of range");
    AcceptResult result;
    result.accepted_nodes.assign(nodes.begin(), nodes.begin() + output.accepted_count);
    result.emitted.assign(emitted.begin(), emitted.begin() + output.emitted_count);
    for (int32_t k = 0; k < output.emitted_count; ++k)
        result.audio.push_back(audio[static_cast<size_t>(k)] >= 0 ? audio[static_cast<size_t>(k)] : emitted[static_cast<size_t>(k)]);
    return result;
}

void AcceptorHarness::reseed(uint64_t seed) { state_->instance->reseed(seed); }

void AcceptorHarness::lend_target_rows(bool lend, int32_t refused) {
    state_->lend_rows = lend;
    state_->refused_row = refused;
}

const std::vector<int32_t>& AcceptorHarness::rows_asked() const { return state_->rows_asked; }

int32_t sample_from(const std::vector<float>& probabilities, uint64_t& generator_state) {
    std::mt19937_64 generator(generator_state);
    generator_state = generator();
    std::discrete_distribution<int32_t> distribution(probabilities.begin(), probabilities.end());
    return distribution(generator);
}

double chi_square(const std::vector<int64_t>& observed, const std::vector<double>& expected, int& degrees) {
    int64_t total = 0;
    for (int64_t count : observed) total += count;
    double statistic = 0.0;
    int cells = 0;
    for (size_t i = 0; i < observed.size(); ++i) {
        if (expected[i] <= 0.0) {
            if (observed[i] > 0) return INFINITY;
            continue;
        }
        const double e = expected[i] * static_cast<double>(total);
        statistic += (observed[i] - e) * (observed[i] - e) / e;
        ++cells;
    }
    degrees = cells - 1;
    return statistic;
}

double chi_square_two_samples(const std::vector<int64_t>& first, const std::vector<int64_t>& second, int& degrees) {
    if (first.size() != second.size()) throw std::invalid_argument("chi_square_two_samples: the samples' cells differ");
    int64_t first_total = 0, second_total = 0;
    for (size_t i = 0; i < first.size(); ++i) {
        first_total += first[i];
        second_total += second[i];
    }
    if (first_total == 0 || second_total == 0) throw std::invalid_argument("chi_square_two_samples: an empty sample");
    const double total = static_cast<double>(first_total + second_total);
    const double first_share = static_cast<double>(first_total) / total;
    std::vector<std::pair<int64_t, int64_t>> cells;
    std::pair<int64_t, int64_t> pooled{0, 0};
    for (size_t i = 0; i < first.size(); ++i) {
        const double both = static_cast<double>(first[i] + second[i]);
        if (both * std::min(first_share, 1.0 - first_share) >= 5.0)
            cells.emplace_back(first[i], second[i]);
        else {
            pooled.first += first[i];
            pooled.second += second[i];
        }
    }
    if (pooled.first + pooled.second > 0) cells.push_back(pooled);
    double statistic = 0.0;
    for (const auto& [a, b] : cells) {
        const double both = static_cast<double>(a + b);
        const double expected_a = both * first_share, expected_b = both - expected_a;
        statistic += (a - expected_a) * (a - expected_a) / expected_a + (b - expected_b) * (b - expected_b) / expected_b;
    }
    degrees = static_cast<int>(cells.size()) - 1;
    return statistic;
}

double chi_square_critical_999(int degrees) {
    const double k = degrees;
    const double z = 3.090232;  // standard normal 0.999 quantile
    const double term = 1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k));
    return k * term * term * term;
}

}  // namespace cadenza::test
