#include "xcodec2_fsq.h"

#include <ATen/ops/from_blob.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/round.h>
#include <ATen/ops/tanh.h>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::xcodec2 {

namespace {

at::Tensor int64_tensor(std::vector<int64_t> values) {
    return at::from_blob(values.data(), {static_cast<int64_t>(values.size())}, at::kLong).clone();
}

}  // namespace

FiniteScalarQuantizer::FiniteScalarQuantizer(std::vector<int64_t> levels) : levels_(std::move(levels)) {
    if (levels_.empty()) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "FSQ: no levels");
    std::vector<int64_t> basis;
    for (int64_t level : levels_) {
        if (level < 2) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "FSQ: a level below 2");
        basis.push_back(codebook_size_);
        codebook_size_ *= level;
        if (codebook_size_ > (int64_t{1} << 31)) throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, "FSQ: too many codes");
    }
    levels_tensor_ = int64_tensor(levels_);
    basis_ = int64_tensor(basis);
}

at::Tensor FiniteScalarQuantizer::indices_to_codes(const at::Tensor& indices) const {
    const at::Tensor levels = levels_tensor_.to(indices.device());
    const at::Tensor basis = basis_.to(indices.device());
    const at::Tensor digits = indices.to(at::kLong).unsqueeze(-1).div(basis, "floor").remainder(levels);
    const at::Tensor half_width = levels.div(2, "floor").to(at::kFloat);
    return (digits.to(at::kFloat) - half_width) / half_width;
}

at::Tensor FiniteScalarQuantizer::codes_to_indices(const at::Tensor& codes) const {
    const at::Tensor half_width = levels_tensor_.to(codes.device()).div(2, "floor").to(at::kFloat);
    const at::Tensor digits = codes.to(at::kFloat) * half_width + half_width;
    return (digits * basis_.to(codes.device()).to(at::kFloat)).sum(-1).round().to(at::kLong);
}

at::Tensor FiniteScalarQuantizer::quantize(const at::Tensor& z) const {
    const double eps = 1e-3;
    const at::Tensor levels = levels_tensor_.to(z.device()).to(at::kFloat);
    const at::Tensor half_l = (levels - 1) * (1 + eps) / 2;
    // offset 0.5 for even levels, 0 for odd ones; shift = atanh(offset / half_l)
    const at::Tensor offset = levels_tensor_.to(z.device()).remainder(2).eq(0).to(at::kFloat) * 0.5;
    const at::Tensor shift = (offset / half_l).atanh();
    const at::Tensor bounded = at::tanh(z + shift) * half_l - offset;
    const at::Tensor half_width = levels_tensor_.to(z.device()).div(2, "floor").to(at::kFloat);
    return at::round(bounded) / half_width;
}

ResidualFsq::ResidualFsq(std::vector<int64_t> levels, int64_t vq_dim, seanet::ParameterSource& source,
                         const std::string& prefix)
    : fsq_(std::move(levels)) {
    using seanet::ParameterRole;
    const int64_t dim = fsq_.dim();
    if (vq_dim != dim) {
        in_weight_ = source.take(prefix + "project_in.weight", {dim, vq_dim}, ParameterRole::linear_weight);
        in_bias_ = source.take(prefix + "project_in.bias", {dim}, ParameterRole::bias);
        out_weight_ = source.take(prefix + "project_out.weight", {vq_dim, dim}, ParameterRole::linear_weight);
        out_bias_ = source.take(prefix + "project_out.bias", {vq_dim}, ParameterRole::bias);
    }
}

at::Tensor ResidualFsq::decode(const at::Tensor& indices) const {
    const at::Tensor codes = fsq_.indices_to_codes(indices);
    return out_weight_.defined() ? at::linear(codes, out_weight_, out_bias_) : codes;
}

at::Tensor ResidualFsq::encode(const at::Tensor& x) const {
    const at::Tensor projected = in_weight_.defined() ? at::linear(x, in_weight_, in_bias_) : x;
    return fsq_.codes_to_indices(fsq_.quantize(projected));
}

}  // namespace cadenza::xcodec2
