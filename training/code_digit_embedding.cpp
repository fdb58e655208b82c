#include "code_digit_embedding.h"

#include <sstream>

#include "error.h"

namespace cadenza::training {

CodeDigitEmbedding::CodeDigitEmbedding(std::vector<int64_t> levels, int64_t code_offset, int64_t code_count,
                                       int64_t hidden, const at::TensorOptions& options)
    : levels_(std::move(levels)), code_offset_(code_offset) {
    int64_t product = 1;
    for (const int64_t level : levels_) {
        if (level < 2) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--code-digits: every level must be at least 2");
        product *= level;
    }
    if (levels_.empty() || product != code_count)
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, "--code-digits " + describe() + ": the levels make " +
                                                     std::to_string(product) + " codes, the layout has " +
                                                     std::to_string(code_count));
    const at::Tensor codes = at::arange(code_count, at::kLong);
    std::vector<at::Tensor> digits;
    int64_t place = 1;
    for (const int64_t level : levels_) {
        digits.push_back(at::remainder(at::floor_divide(codes, place), level));
        digit_vectors_.push_back(at::zeros({level, hidden}, options));
        place *= level;
    }
    code_digits_ = at::stack(digits, 1).to(options.device());
}

at::Tensor CodeDigitEmbedding::table(const at::Tensor& base) const {
    at::Tensor rows;
    for (size_t d = 0; d < levels_.size(); ++d) {
        const at::Tensor part = digit_vectors_[d].index_select(0, code_digits_.select(1, static_cast<int64_t>(d)));
        rows = rows.defined() ? rows + part : part;
    }
    const int64_t codes = code_digits_.size(0);
    return at::cat({base.slice(0, 0, code_offset_), base.slice(0, code_offset_, code_offset_ + codes) + rows,
                    base.slice(0, code_offset_ + codes)});
}

std::string CodeDigitEmbedding::describe() const {
    std::ostringstream text;
    for (size_t i = 0; i < levels_.size(); ++i) text << (i ? "," : "") << levels_[i];
    text << " from token " << code_offset_;
    return text.str();
}

}  // namespace cadenza::training
