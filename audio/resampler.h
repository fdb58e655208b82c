#pragma once
// Sample-rate conversion of whole mono signals through libsoxr (high quality).
#include <vector>

namespace cadenza::audio {

std::vector<float> resample(const std::vector<float>& samples, double from_rate, double to_rate);

}  // namespace cadenza::audio
