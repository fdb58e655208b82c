// Real memory traffic for the test doubles, so that benchmarks on them
// behave like memory-bound decoding: each forward pass streams a weight
// buffer once and multiplies it against every evaluated node, as a GEMV/GEMM
// with few rows does. Costs grow slowly with the number of nodes, as on
// real hardware.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace cadenza::test {

class SimulatedWeights {
public:
    explicit SimulatedWeights(double megabytes)
        : weights_(static_cast<size_t>(megabytes * 1024.0 * 1024.0 / sizeof(float))) {
        for (size_t i = 0; i < weights_.size(); ++i) weights_[i] = static_cast<float>((i * 2654435761u) % 1000) * 1e-3f;
    }

    bool empty() const { return weights_.empty(); }

    // One pass over the weights for `rows` inputs; the result is kept so the
    // work cannot be optimized away.
    void apply(int64_t rows) {
        if (weights_.empty() || rows <= 0) return;
        float total = 0.0f;
        // Rows in groups of four with accumulators the compiler keeps in
        // registers, so the cost is the weight traffic, as in a real GEMV.
        for (int64_t first = 0; first < rows; first += 4) {
            switch (std::min<int64_t>(4, rows - first)) {
                case 1: total += pass<1>(first); break;
                case 2: total += pass<2>(first); break;
                case 3: total += pass<3>(first); break;
                default: total += pass<4>(first); break;
            }
        }
        sink_ = total;
    }

private:
    template <int Rows>
    float pass(int64_t first) const {
        float accumulators[Rows][8] = {};
        const size_t blocks = weights_.size() / 8;
        for (size_t b = 0; b < blocks; ++b) {
            const float* w = weights_.data() + b * 8;
            for (int r = 0; r < Rows; ++r)
                for (int k = 0; k < 8; ++k) accumulators[r][k] += w[k] * static_cast<float>(first + r + 1);
        }
        float total = 0.0f;
        for (int r = 0; r < Rows; ++r)
            for (int k = 0; k < 8; ++k) total += accumulators[r][k];
        return total;
    }

    std::vector<float> weights_;
    volatile float sink_ = 0.0f;
};

}  // namespace cadenza::test
