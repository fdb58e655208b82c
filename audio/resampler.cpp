#include "resampler.h"

#include <soxr.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace cadenza::audio {

std::vector<float> resample(const std::vector<float>& samples, double from_rate, double to_rate) {
    if (!(from_rate > 0.0) || !(to_rate > 0.0)) throw std::invalid_argument("resample: sample rates must be positive");
    if (from_rate == to_rate || samples.empty()) return samples;
    std::vector<float> output(static_cast<size_t>(std::ceil(samples.size() * to_rate / from_rate)) + 16);
    size_t written = 0;
    const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
    const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
    soxr_error_t error = soxr_oneshot(from_rate, to_rate, 1, samples.data(), samples.size(), nullptr, output.data(),
                                                                        output.size(), &written, &io, &quality, nullptr);
    if (error) throw std::runtime_error(std::string("resample: ") + error);
    output.resize(written);
    return output;
}

}  // namespace cadenza::audio
