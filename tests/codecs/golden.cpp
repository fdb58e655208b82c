#include "golden.h"

#include <cstdio>
#include <cstdlib>

#include <ATen/ops/from_blob.h>
#include <gtest/gtest.h>

namespace cadenza::test {

// $CADENZA_GOLDEN_DIR, when set, overrides the directory configured at build time.
std::filesystem::path golden_dir(const std::string& folder) {
    const char* overridden = std::getenv("CADENZA_GOLDEN_DIR");
    return std::filesystem::path(overridden && *overridden ? overridden : CADENZA_GOLDEN_DIR) / folder;
}

bool golden_available(const std::string& folder, const std::vector<std::string>& files) {
    for (const std::string& file : files)
        if (!std::filesystem::is_regular_file(golden_dir(folder) / file)) return false;
    return true;
}

std::vector<std::string> GoldenVectors::names() const {
    std::vector<std::string> names;
    for (const auto& info : file_.tensors()) names.push_back(info.name);
    return names;
}

at::Tensor GoldenVectors::get(const std::string& name) const {
    const auto& info = file_.info(name);
    if (info.dtype == safetensors::DType::I64) {
        std::vector<int64_t> values = file_.read_i64(name);
        return at::from_blob(values.data(), info.shape, at::kLong).clone();
    }
    std::vector<float> values = file_.read_f32(name);
    return at::from_blob(values.data(), info.shape, at::kFloat).clone();
}

double max_abs_difference(const at::Tensor& ours, const at::Tensor& reference) {
    return (ours.to(at::kCPU, at::kDouble) - reference.to(at::kDouble)).abs().max().item<double>();
}

double expect_close(const std::string& name, const at::Tensor& ours, const at::Tensor& reference) {
    EXPECT_EQ(ours.sizes(), reference.sizes()) << name;
    if (ours.sizes() != reference.sizes()) return 1e9;
    const double error = max_abs_difference(ours, reference);
    EXPECT_LE(error, golden_tolerance) << name;
    ::testing::Test::RecordProperty("max_abs_error_" + name, std::to_string(error));
    std::printf("    %-28s max |error| %.3g (peak %.3g)\n", name.c_str(), error,
                reference.abs().max().item<double>());
    return error;
}

void expect_codes_equal(const std::string& name, const at::Tensor& ours, const at::Tensor& reference) {
    EXPECT_EQ(ours.sizes(), reference.sizes()) << name;
    if (ours.sizes() != reference.sizes()) return;
    const int64_t mismatches = (ours.to(at::kCPU, at::kLong) != reference.to(at::kLong)).sum().item<int64_t>();
    EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " of " << reference.numel() << " codes differ";
    std::printf("    %-28s %lld of %lld codes differ\n", name.c_str(), static_cast<long long>(mismatches),
                static_cast<long long>(reference.numel()));
}

}  // namespace cadenza::test
