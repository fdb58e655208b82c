// An output head that names a codec code by its digits instead of scoring
// every code. The codes of an FSQ codec are the points of a grid (mel_fsq:
// levels 8,8,8,4,4, 8,192 codes; X-codec2: 4^8; CosyVoice 2: 3^8), so a
// draft can predict a code as one small distribution per digit, beside one
// distribution over the tokens that are not codes (phone markers, the end
// token) plus one class "a code". Its distribution over the whole vocabulary
// is the product
//   q(t) = q_class(t)                                   t not a code
//   q(c) = q_class(code) * prod_d q_d(digit_d(c))       c a code
// a proper distribution, so every acceptor stays valid on it. Its head is
// R = (V - codes) + 1 + sum(levels) rows instead of V: 93 for en-small's
// 8,252 tokens.
//
// The R head logits are laid out as: the class logits (the non-code tokens
// in vocabulary order, then "a code"), then the logits of digit 0 (levels[0]
// of them), digit 1, ... Digits are least significant first, as the FSQ
// quantizer numbers its codes: code = sum_d digit_d * prod_{e<d} levels[e].
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_params.hpp"

namespace cadenza::drafts {

struct CodeGrid {
    std::vector<int64_t> levels;  // least significant digit first
    int64_t code_offset = 0;      // the token id of code 0
    int64_t vocab_size = 0;

    int64_t code_count() const;
    int64_t other_count() const { return vocab_size - code_count(); }  // tokens that are not codes
    int64_t class_count() const { return other_count() + 1; }          // those, then "a code"
    int64_t digit_logit_count() const;                                 // sum of the levels
    int64_t head_rows() const { return class_count() + digit_logit_count(); }
    bool is_code(int64_t token) const { return token >= code_offset && token < code_offset + code_count(); }

    // "8,8,8,4,4"
    std::string levels_text() const;
    // Parses "8,8,8,4,4" and checks the grid fits the vocabulary; throws
    // cadenza::sdk::Error (INVALID_CONFIG) naming `where` otherwise.
    static CodeGrid parse(const std::string& levels, int64_t code_offset, int64_t vocab_size, const std::string& where);
};

// The grid a file's metadata declares for code-digit output heads:
// cadenza.output = "code_digits" with cadenza.code_levels ("8,8,8,4,4") and
// cadenza.code_offset; nullopt when cadenza.output is absent or
// "vocabulary". Throws cadenza::sdk::Error (INVALID_CONFIG) naming `where` and the
// key on anything else.
std::optional<CodeGrid> code_grid_of(const std::map<std::string, std::string>& metadata, int64_t vocab_size,
                                     const std::string& where);
// The metadata entries that declare `grid` (what code_grid_of reads).
std::vector<std::pair<std::string, std::string>> code_grid_metadata(const CodeGrid& grid);

// How a drafter applies the pipeline's sampling settings to a code-digit
// head's distribution: `factors` puts each factor (the class distribution and
// every digit's) through the temperature, top-k and top-p and multiplies
// them out (~8,000 multiplications); `row` builds the vocabulary-wide row of
// log-probabilities and gives it to the host's sampling, the rule the
// target's own rows follow (temperature commutes with the product; top-k and
// top-p do not); `nucleus` is `row` without its exponentials: the factors
// through the temperature alone, multiplied out, then the host's top-k and
// top-p on that row (host->sampling_nucleus, linear time). `row` and
// `nucleus` give the same distribution but for rounding. `tempered`: the
// factors through the temperature alone, multiplied out, no top-k or top-p:
// for a draft trained under the pipeline's top-p (`cadenza train recurrent
// --sampling-top-p`), whose distribution is already cut where the target's
// nucleus is, so that cutting it again would take mass the target keeps.
enum class DigitSampling { factors, row, nucleus, tempered };

// Scratch of CodeDigitDistribution::most_likely_tokens, reused across rows.
struct TokenBeam {
    std::vector<float> factors;                         // the head's blocks through their log-softmax
    std::vector<std::pair<float, int64_t>> kept, grown;  // (log q, token or code prefix)
    std::vector<float> row;                             // a row of log q, when the beam cannot be used
};

// The drafters' parameter `digit_sampling` ("factors" or "row"), constant
// so that the drafters' parameter tables can hold it at static initialization.
inline constexpr const char* digit_sampling_choices[] = {"factors", "row", "nucleus", "tempered", nullptr};
inline constexpr cdz_param_spec digit_sampling_param = {
    "digit_sampling", CDZ_PARAM_STRING, "\"factors\"", 0, 0, 0, digit_sampling_choices,
    "a code-digit head under the sampling settings: factors (each digit's distribution through temperature, top-k "
    "and top-p, multiplied out), row (the vocabulary-wide row through the host's sampling, as the target's) or "
    "nucleus (row's distribution from tempered factors and the host's top-k/top-p, without a softmax over the row) "
    "or tempered (the factors through the temperature alone: for a draft trained under the pipeline's top-p)"};
// The drafter's `digit_sampling` parameter (the host has checked its value).
DigitSampling digit_sampling_of(const sdk::Params& params);

// The product distribution of a code-digit head, in both the batched,
// differentiable form training and tools use and the one-row form a drafter
// uses per drafted token.
class CodeDigitDistribution {
public:
    explicit CodeDigitDistribution(CodeGrid grid);
    // fill_probabilities' rule; `factors` unless set.
    void set_sampling(DigitSampling sampling) { sampling_ = sampling; }

    const CodeGrid& grid() const { return grid_; }

    // Head logits [..., R] -> log q over the whole vocabulary [..., V].
    at::Tensor log_probabilities(const at::Tensor& head_logits) const;
    // -log q(label) for head logits [N, R] and labels [N] (token ids), [N],
    // without building the vocabulary-wide rows.
    at::Tensor negative_log_likelihood(const at::Tensor& head_logits, const at::Tensor& labels) const;
    // A teacher's distribution p [N, V] (rows summing to 1) as what a code-digit
    // head can match, [N, R]: p over the classes, then each digit's marginal.
    at::Tensor marginals(const at::Tensor& probabilities) const;
    // Cross-entropy -sum_t p(t) log q(t) of the product q of head logits [N, R]
    // against p given by its marginals [N, R] (marginals()), [N]: KL(p || q)
    // plus p's entropy, since q factorizes as p's marginals do.
    at::Tensor cross_entropy(const at::Tensor& head_logits, const at::Tensor& teacher_marginals) const;

    // One row: R head logits -> V log-probabilities in `out`. No allocation;
    // `scratch` holds head_rows() floats.
    void fill_log_probabilities(const float* head_logits, float* out, float* scratch) const;

    // The `count` most likely tokens of fill_log_probabilities' row among
    // the tokens the sampling allows (the lower token first on a tie), in
    // ascending order into `tokens`; fewer when fewer are allowed. When the
    // allowed tokens take all the codes or none, without writing the row: a
    // beam over the digits, most significant first, keeping `count` prefixes
    // (exact: a code among the best has its prefix among the best prefixes),
    // whose sums are formed as the row forms them.
    void most_likely_tokens(const float* head_logits, const cdz_sampling* sampling, int64_t count,
                            std::vector<int32_t>& tokens, TokenBeam& beam) const;

    // One row's draft distribution under the pipeline's sampling settings,
    // from the factors, into `out` [V]. `factors`: the class distribution
    // over the allowed classes and each digit's distribution, each through
    // the temperature (0: its argmax), top-k and top-p, multiplied out. A
    // proper distribution over the allowed tokens (a draft's distribution
    // need not be the target's nucleus: every acceptor takes the row it is
    // given), for ~8,000 multiplications instead of the host's sampling of a
    // vocabulary-wide row. `nucleus`: the factors through the temperature
    // alone, multiplied out, then host->sampling_nucleus; `tempered`: the
    // same without host->sampling_nucleus. Returns false, leaving `out`
    // undefined, when the allowed tokens take only part of the codes, the
    // rule is DigitSampling::row, or it is `nucleus` or `tempered` at
    // temperature 0 (the caller then samples fill_log_probabilities' row).
    // `scratch` holds head_rows() floats.
    bool fill_probabilities(const float* head_logits, const cdz_sampling& sampling, float* out, float* scratch) const;

    // The token fill_probabilities' row is largest at (the first such index)
    // and its probability, without writing the row: the best non-code token
    // against the code of every digit's most likely value. Returns false when
    // fill_probabilities would, for `nucleus` (which rescales the row), or
    // when two values of a digit are within rounding of each other (the
    // row's products could then tie across codes); the caller then takes the
    // row's argmax itself.
    bool most_likely(const float* head_logits, const cdz_sampling& sampling, float* scratch, int64_t* token,
                     float* probability) const;

private:
    // The head logits [R] with each block (the classes, each digit) through its log-softmax, into `out` [R].
    void fill_log_factors(const float* head_logits, float* out) const;
    // fill_probabilities' factors in `scratch` (the class distribution, then
    // each digit's); false when it would return false.
    bool prepare_factors(const float* head_logits, const cdz_sampling& sampling, float* scratch) const;
    // A vocabulary row from per-factor values [R] (class then digits): the
    // non-code tokens their class's value, code c the combination of its
    // class's value and its digits' values.
    template <typename Combine>
    void write_row(const float* factors, float* out, Combine combine) const;
    // Each block of head logits [..., R] (the classes, each digit) through its log-softmax.
    at::Tensor block_log_softmax(const at::Tensor& head_logits) const;

    CodeGrid grid_;
    DigitSampling sampling_ = DigitSampling::factors;
    std::vector<int64_t> digit_begin_;  // column of digit d's first logit within the digit logits
};

}  // namespace cadenza::drafts
