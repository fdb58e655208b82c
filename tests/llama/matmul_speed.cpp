// The small-m matmul kernels, and the panels (float32, float16, int8) where
// a vectorized row-combination kernel runs, on the projections of one LLaMA
// pass (en-small's shapes by default), weights streamed from memory as in
// decoding: ms per pass of m rows, the minimum and the median of interleaved repeats, and the
// weights' GB/s. Prints a Markdown table. Random weights: the time does not
// depend on their values. With `evict_mb`, that many MB of other data are
// read and written before each timed pass, as a speculative loop's draft,
// acceptance and bookkeeping touch other memory between the target's passes.
//
//   matmul_speed [repeats=80] [hidden=256] [intermediate=768] [layers=6] [kv_width=128] [vocab=8252] [evict_mb=0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include "panel_weights.h"
#include "row_combinations.h"
#include "small_matmul.h"

namespace {

using namespace cadenza::llama;

struct Projection {
    at::Tensor weight;  // [out, in]
    PanelMatrix panels;  // the weight packed in the way being timed (panels only)
};

// A way to run the pass: a small-m kernel, or panels of a precision.
struct Way {
    std::string name;
    MatmulKernel kernel = MatmulKernel::reference;
    bool panels = false;
    PanelPrecision precision = PanelPrecision::float32;
};

// Reads and writes every line of `other`: what work between passes leaves in
// the caches in place of the weights.
void touch(std::vector<float>& other) {
    for (size_t i = 0; i < other.size(); i += 16) other[i] += 1.0f;
}

double seconds_of_pass(std::vector<Projection>& pass, const std::vector<at::Tensor>& inputs, const Way& way,
                       std::vector<float>& y, std::vector<float>& other) {
    touch(other);
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < pass.size(); ++i) {
        if (!way.panels) {
            small_matmul(inputs[i], pass[i].weight, at::Tensor(), way.kernel);
            continue;
        }
        const int64_t m = inputs[i].size(0), out = pass[i].weight.size(0);
        combine_panels(inputs[i].data_ptr<float>(), m, inputs[i].size(1), pass[i].panels, nullptr, y.data(), out);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
    auto arg = [&](int i, int64_t fallback) { return argc > i ? std::atoll(argv[i]) : fallback; };
    const int repeats = static_cast<int>(arg(1, 80));
    const int64_t hidden = arg(2, 256), intermediate = arg(3, 768), layers = arg(4, 6), kv = arg(5, 128),
                  vocab = arg(6, 8252), evict_mb = arg(7, 0);
    if (repeats < 1 || hidden < 1 || intermediate < 1 || layers < 1 || kv < 1 || vocab < 1 || evict_mb < 0) {
        std::fprintf(stderr, "usage: matmul_speed [repeats] [hidden] [intermediate] [layers] [kv_width] [vocab] [evict_mb], "
                             "all >= 1 but evict_mb >= 0\n");
        return 2;
    }
    c10::InferenceMode inference;
    at::set_num_threads(1);
    std::vector<Projection> pass;
    int64_t bytes = 0;
    auto add = [&](int64_t out, int64_t in) {
        pass.push_back({at::randn({out, in}, at::kFloat), {}});
        bytes += out * in * 4;
    };
    for (int64_t l = 0; l < layers; ++l) {
        add(hidden, hidden), add(kv, hidden), add(kv, hidden), add(hidden, hidden);
        add(intermediate, hidden), add(intermediate, hidden), add(hidden, intermediate);
    }
    add(vocab, hidden);
    std::vector<Way> ways;
    for (MatmulKernel k : {MatmulKernel::avx2, MatmulKernel::avx512})
        if (kernel_supported(k)) ways.push_back({kernel_name(k), k});
    if (combine_rows_vectorized())
        for (const auto& [name, precision] : {std::pair{"panels float32", PanelPrecision::float32},
                                              std::pair{"panels float16", PanelPrecision::float16},
                                              std::pair{"panels int8", PanelPrecision::int8}})
            ways.push_back({name, MatmulKernel::reference, true, precision});
    const std::vector<int64_t> sizes{1, 2, 3, 4, 5, 6, 7, 8, 9, 12};
    std::vector<float> y(static_cast<size_t>(*std::max_element(sizes.begin(), sizes.end()) * vocab));
    std::vector<float> other(static_cast<size_t>(evict_mb) * 1000000 / sizeof(float));
    std::printf("%lld projections, %.1f MB of weights, %d interleaved repeats, 1 thread, %lld MB touched before each pass\n\n",
                static_cast<long long>(pass.size()), static_cast<double>(bytes) / 1e6, repeats,
                static_cast<long long>(evict_mb));
    std::printf("| kernel | m | min ms | median ms | GB/s (min) | min / min at m = 1 |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const Way& way : ways) {
        if (way.panels)
            for (Projection& p : pass) p.panels = PanelMatrix::pack(p.weight, {}, way.precision);
        std::vector<std::vector<at::Tensor>> inputs;
        for (int64_t m : sizes) {
            std::vector<at::Tensor> x;
            for (const Projection& p : pass) x.push_back(at::randn({m, p.weight.size(1)}, at::kFloat));
            inputs.push_back(std::move(x));
        }
        std::vector<std::vector<double>> times(sizes.size());
        for (int r = 0; r < repeats; ++r)
            for (size_t s = 0; s < sizes.size(); ++s) times[s].push_back(seconds_of_pass(pass, inputs[s], way, y, other));
        double first = 0.0;
        for (size_t s = 0; s < sizes.size(); ++s) {
            std::sort(times[s].begin(), times[s].end());
            const double least = times[s].front(), median = times[s][times[s].size() / 2];
            if (s == 0) first = least;
            std::printf("| %s | %lld | %.3f | %.3f | %.1f | %.2f |\n", way.name.c_str(),
                        static_cast<long long>(sizes[s]), least * 1e3, median * 1e3,
                        static_cast<double>(bytes) / least / 1e9, least / first);
        }
    }
    return 0;
}
