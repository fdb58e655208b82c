// The learning rate by step: linear warmup from 0, then a cosine decay to a
// floor. No LibTorch.
#pragma once

#include <cstdint>

namespace cadenza::training {

class LrSchedule {
public:
    // `total_steps` >= 1; `warmup_steps` >= 0; `min_ratio` in [0, 1].
    LrSchedule(double peak, int64_t warmup_steps, int64_t total_steps, double min_ratio = 0.1);

    // The rate of update `step` (1-based: the first update is step 1):
    //   step <= warmup:  peak * step / warmup
    //   after:           floor + (peak - floor) * (1 + cos(pi * p)) / 2,
    //                    p = (step - warmup) / (total - warmup), floor = peak * min_ratio
    // so the last step (step == total) runs at the floor. Steps past the
    // total stay at the floor.
    double at(int64_t step) const;

    double peak() const { return peak_; }

private:
    double peak_;
    int64_t warmup_;
    int64_t total_;
    double min_ratio_;
};

}  // namespace cadenza::training
