#include "padding.h"

#include <algorithm>

#include <ATen/ops/pad.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::seanet {

namespace {

int64_t ceil_div(int64_t numerator, int64_t denominator) {  // denominator > 0, any sign of numerator
    const int64_t quotient = numerator / denominator;
    return quotient + ((numerator % denominator != 0 && numerator > 0) ? 1 : 0);
}

const char* mode_name(PadMode mode) {
    switch (mode) {
    case PadMode::reflect: return "reflect";
    case PadMode::constant: return "constant";
    case PadMode::replicate: return "replicate";
    case PadMode::circular: return "circular";
    }
    return "constant";
}

}  // namespace

int64_t extra_padding_for_conv1d(int64_t length, int64_t kernel_size, int64_t stride, int64_t padding_total) {
    // n_frames = (length - kernel_size + padding_total) / stride + 1, rounded up.
    const int64_t frames = ceil_div(length - kernel_size + padding_total, stride) + 1;
    const int64_t ideal_length = (frames - 1) * stride + (kernel_size - padding_total);
    return ideal_length - length;
}

at::Tensor pad1d(const at::Tensor& x, int64_t left, int64_t right, PadMode mode) {
    if (left < 0 || right < 0)
        throw sdk::Error(CDZ_STATUS_INTERNAL, "pad1d: negative padding (" + std::to_string(left) + ", " +
                                             std::to_string(right) + ")");
    if (left == 0 && right == 0) return x;
    if (mode != PadMode::reflect) return at::pad(x, {left, right}, mode_name(mode));
    const int64_t length = x.size(-1);
    const int64_t max_pad = std::max(left, right);
    int64_t extra = 0;
    at::Tensor input = x;
    if (length <= max_pad) {
        extra = max_pad - length + 1;
        input = at::pad(x, {0, extra}, "constant");
    }
    const at::Tensor padded = at::pad(input, {left, right}, "reflect");
    return extra ? padded.narrow(-1, 0, padded.size(-1) - extra) : padded;
}

at::Tensor unpad1d(const at::Tensor& x, int64_t left, int64_t right) {
    if (left < 0 || right < 0 || left + right > x.size(-1))
        throw sdk::Error(CDZ_STATUS_INTERNAL, "unpad1d: cannot remove (" + std::to_string(left) + ", " +
                                             std::to_string(right) + ") from " + std::to_string(x.size(-1)) + " samples");
    return x.narrow(-1, left, x.size(-1) - left - right);
}

}  // namespace cadenza::seanet
