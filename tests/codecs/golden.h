// The golden vectors of ../shared/golden (see its README): paths, tensors
// as LibTorch tensors, and the comparisons the README asks for.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>

#include "safetensors.h"

namespace cadenza::test {

// Float tensors must match the reference within this (absolute); codes exactly.
constexpr double golden_tolerance = 1e-4;

std::filesystem::path golden_dir(const std::string& folder);
// True when the folder holds every file named.
bool golden_available(const std::string& folder, const std::vector<std::string>& files);

// A golden vectors.safetensors: F32 tensors as float, I64 as int64.
class GoldenVectors {
public:
    explicit GoldenVectors(const std::filesystem::path& path) : file_(path) {}
    std::vector<std::string> names() const;
    bool contains(const std::string& name) const { return file_.contains(name); }
    at::Tensor get(const std::string& name) const;

private:
    safetensors::File file_;
};

double max_abs_difference(const at::Tensor& ours, const at::Tensor& reference);

// Checks shapes, then max |ours - reference| <= golden_tolerance; records
// and prints the error under `name`. Returns the error.
double expect_close(const std::string& name, const at::Tensor& ours, const at::Tensor& reference);
// Checks shapes and that every code is equal.
void expect_codes_equal(const std::string& name, const at::Tensor& ours, const at::Tensor& reference);

}  // namespace cadenza::test

#define SKIP_WITHOUT_GOLDEN(folder, ...)                                                           \
    if (!cadenza::test::golden_available(folder, {__VA_ARGS__}))                                    \
    GTEST_SKIP() << "golden folder " << cadenza::test::golden_dir(folder) << " is absent"
