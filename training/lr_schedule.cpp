#include "lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "error.h"

namespace cadenza::training {

LrSchedule::LrSchedule(double peak, int64_t warmup_steps, int64_t total_steps, double min_ratio)
    : peak_(peak), warmup_(warmup_steps), total_(total_steps), min_ratio_(min_ratio) {
    if (!(peak >= 0) || warmup_steps < 0 || total_steps < 1 || !(min_ratio >= 0 && min_ratio <= 1))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT,
                    "learning-rate schedule: needs lr >= 0, warmup >= 0, steps >= 1 and a floor ratio in [0, 1]");
}

double LrSchedule::at(int64_t step) const {
    if (step <= 0) return 0.0;
    if (step <= warmup_) return peak_ * static_cast<double>(step) / static_cast<double>(warmup_);
    const double floor = peak_ * min_ratio_;
    if (step >= total_) return total_ > warmup_ ? floor : peak_;
    const double progress = static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_);
    return floor + (peak_ - floor) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace cadenza::training
