// The attention's two kernels as the CPU pass runs them for one key/value
// head: a group of query rows (the pass's tokens times the query heads that
// share the key/value head) scored against the key panels (combine_panels),
// and the softmaxed scores combining the value rows (combine_rows). Every
// layer's heads in turn (en-small: 6 layers x 2 heads), their keys and values
// evicted from the caches before each repeat, as the weights streaming
// through a pass evict them. ms per pass, the minimum and the median of
// interleaved repeats. Prints a Markdown table. Random values: the time does
// not depend on them.
//
//   attention_speed [repeats=40] [head_dim=64] [heads=12]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "row_combinations.h"

namespace {

using namespace cadenza::llama;
using Clock = std::chrono::steady_clock;

// One key/value head's cache at a context: keys as panels of positions (as
// KvCache stores them), values as rows.
struct HeadCache {
    std::vector<float> key_panels, value_rows;
};

struct Case {
    int64_t rows, positions;
    std::vector<double> scores, values, total;  // seconds per repeat
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    auto arg = [&](int i, int64_t fallback) { return argc > i ? std::atoll(argv[i]) : fallback; };
    const int repeats = static_cast<int>(arg(1, 40));
    const int64_t dim = arg(2, 64), heads = arg(3, 12);
    if (repeats < 1 || dim < 1 || heads < 1) {
        std::fprintf(stderr, "usage: attention_speed [repeats] [head_dim] [heads], all >= 1\n");
        return 2;
    }
    if (!combine_rows_vectorized()) {
        std::fprintf(stderr, "attention_speed: the key panels need " CADENZA_VECTORIZED_KERNEL "\n");
        return 1;
    }
    const std::vector<int64_t> row_counts{2, 4, 6, 8, 10, 12, 16}, contexts{150, 300, 600};
    const int64_t most_positions = *std::max_element(contexts.begin(), contexts.end());
    const int64_t most_rows = *std::max_element(row_counts.begin(), row_counts.end());
    constexpr int64_t panel = 64;  // combine_panels' panels are 64 columns (here positions) wide
    std::mt19937 random(1);
    std::normal_distribution<float> normal;
    std::vector<HeadCache> caches(static_cast<size_t>(heads));
    for (HeadCache& c : caches) {
        c.key_panels.resize(static_cast<size_t>((most_positions + panel - 1) / panel * dim * panel));
        c.value_rows.resize(static_cast<size_t>(most_positions * dim));
        for (float& v : c.key_panels) v = normal(random);
        for (float& v : c.value_rows) v = normal(random);
    }
    std::vector<float> queries(static_cast<size_t>(most_rows * dim)), out(queries.size());
    for (float& v : queries) v = normal(random);
    // Probabilities rather than raw scores go into the values, as in a pass.
    std::vector<float> scores(static_cast<size_t>(most_rows * most_positions),
                              1.0f / static_cast<float>(most_positions));
    std::vector<float> evict(static_cast<size_t>(64 << 20) / sizeof(float), 1.0f);
    std::vector<Case> cases;
    for (int64_t positions : contexts)
        for (int64_t rows : row_counts) cases.push_back({rows, positions, {}, {}, {}});
    volatile float sink = 0.0f;  // keeps the combinations from being optimized away
    for (int r = 0; r < repeats; ++r)
        for (Case& c : cases) {
            for (size_t i = 0; i < evict.size(); i += 16) evict[i] += 1.0f;
            double scoring = 0.0, combining = 0.0;
            for (const HeadCache& h : caches) {
                auto start = Clock::now();
                combine_panels(queries.data(), c.rows, dim, h.key_panels.data(), dim, c.positions, nullptr,
                               scores.data(), c.positions);
                scoring += seconds_since(start);
                std::fill(scores.begin(), scores.end(), 1.0f / static_cast<float>(c.positions));
                start = Clock::now();
                combine_rows(scores.data(), c.rows, c.positions, h.value_rows.data(), c.positions, dim, dim,
                             out.data(), dim);
                combining += seconds_since(start);
                sink = sink + out[0];
            }
            c.scores.push_back(scoring);
            c.values.push_back(combining);
            c.total.push_back(scoring + combining);
        }
    std::printf("%lld key/value heads of %lld dimensions, evicted before each repeat; %d interleaved repeats, "
                "1 thread\n\n",
                static_cast<long long>(heads), static_cast<long long>(dim), repeats);
    std::printf("| query rows | positions | scores ms (median) | values ms (median) | both ms (min) | both ms "
                "(median) | multiply-adds per ns (median) |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for (const Case& c : cases) {
        const double both = median(c.total);
        const double multiply_adds = 2.0 * static_cast<double>(heads * c.rows * c.positions * dim);
        std::printf("| %lld | %lld | %.3f | %.3f | %.3f | %.3f | %.1f |\n", static_cast<long long>(c.rows),
                    static_cast<long long>(c.positions), median(c.scores) * 1e3, median(c.values) * 1e3,
                    *std::min_element(c.total.begin(), c.total.end()) * 1e3, both * 1e3,
                    multiply_adds / both / 1e9);
    }
    return 0;
}
