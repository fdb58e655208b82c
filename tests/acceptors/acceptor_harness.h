// Drives one acceptor plugin directly, as the engine would, for the
// acceptors' statistical tests: it loads the plugin through the core, creates
// it from an [acceptor] table and calls accept() on hand-made distributions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza::test {

struct AcceptResult {
    std::vector<int32_t> accepted_nodes;  // root-to-leaf path
    std::vector<int32_t> emitted;         // the path's tokens, then the target's token
    std::vector<int32_t> audio;           // what the codec hears for each (audio_tokens; emitted where unset)
};

class AcceptorHarness {
public:
    // `table` is the body of an [acceptor] table, e.g.
    // "plugin = \"acceptor.bias\"\nbeta = 0.4\n". Relative paths start at
    // `base_directory`. Throws cadenza::Error (e.g. ValidationError).
    explicit AcceptorHarness(const std::string& table, uint64_t seed = 1,
                             const std::filesystem::path& base_directory = std::filesystem::current_path());
    ~AcceptorHarness();

    cdz_acceptor_info info() const;

    // target: [(n + 1) * vocab], row 0 after the prefix, row i + 1 after node i
    // (may be empty when the acceptor does not need it);
    // draft: [n * vocab], the distribution node i was drawn from (may be empty);
    // sequence: the committed tokens the tree continues (may be empty).
    AcceptResult accept(const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents, int64_t vocab,
                        const std::vector<float>& target, const std::vector<float>& draft,
                        const cdz_sampling& sampling = default_sampling(),
                        const std::vector<int32_t>& sequence = {}) const;

    // Restarts the acceptor's random stream, as the engine does per synthesis.
    void reseed(uint64_t seed);

    // With true, accept() lends the target's rows through
    // cdz_accept_input.target_row (target_probabilities NULL), as the engine
    // does for an acceptor whose info sets reads_target_rows, and records
    // which rows the acceptor asked for; a row outside the step, or the row
    // `refused` (>= 0), comes back NULL, as from a host that cannot compute it.
    void lend_target_rows(bool lend, int32_t refused = -1);
    // The rows asked for in the last accept() call, in the order asked.
    const std::vector<int32_t>& rows_asked() const;

    static cdz_sampling default_sampling();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Samples an index from `probabilities` with std::mt19937_64 (for building
// test drafts independently of the acceptor's own stream).
int32_t sample_from(const std::vector<float>& probabilities, uint64_t& generator_state);

// Chi-square statistic of observed counts against expected probabilities,
// over the cells with non-zero expectation; `degrees` receives their count - 1.
double chi_square(const std::vector<int64_t>& observed, const std::vector<double>& expected, int& degrees);

// Chi-square statistic of two samples' counts over the same cells (a
// homogeneity test: are both drawn from one distribution?). Cells whose
// expected count is below 5 in either sample are pooled into one; `degrees`
// receives the cells tested - 1.
double chi_square_two_samples(const std::vector<int64_t>& first, const std::vector<int64_t>& second, int& degrees);

// The 0.999 quantile of the chi-square distribution (Wilson-Hilferty), the
// threshold the statistical tests use with fixed seeds.
double chi_square_critical_999(int degrees);

}  // namespace cadenza::test
