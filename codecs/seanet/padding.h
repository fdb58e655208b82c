// The padding rules of the reference's streamable convolutions
// (encodec/modules/conv.py): how much to pad so that the last window is
// full, reflect padding that also works on inputs shorter than the pad, and
// the trim after a transposed convolution.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>

#include "seanet_config.h"

namespace cadenza::seanet {

// get_extra_padding_for_conv1d: the right padding that makes the last
// window of a convolution full.
int64_t extra_padding_for_conv1d(int64_t length, int64_t kernel_size, int64_t stride, int64_t padding_total);

// pad1d: pads the last dimension. In reflect mode an input no longer than
// the larger pad is first extended with zeros, reflected, and the zeros cut
// off again, exactly as the reference does.
at::Tensor pad1d(const at::Tensor& x, int64_t left, int64_t right, PadMode mode);

// unpad1d: drops `left` and `right` samples of the last dimension.
at::Tensor unpad1d(const at::Tensor& x, int64_t left, int64_t right);

}  // namespace cadenza::seanet
