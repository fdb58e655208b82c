// Whole-row arithmetic of sampling, written as plain loops the compiler
// vectorizes: one target pass yields a vocabulary-sized row per verified
// token, and the scalar libm exp with a serial double sum cost 65 us per row
// of 8,252 (3-4% of a plain-decoding token, more per speculative step).
#pragma once

#include <cstdint>

namespace cadenza {

// The largest of values[0, count); -infinity for count 0. A NaN is skipped
// unless every value is NaN (callers test the result for finiteness).
// AVX-512 where the CPU has it, else SSE2 (the loop alone does not vectorize).
float row_max(const float* values, int64_t count);

// out[i] = exp((logits[i] - shift) * scale) for i in [0, count). exp is a
// degree-6 polynomial after range reduction (Cephes' expf, within 2 ulp of
// the exact value); arguments below -87 give 0, NaN gives NaN.
void exponentiate_row(const float* logits, float* out, int64_t count, float shift, float scale);

// Whether every value is >= 0 (-0 included) and finite.
bool row_is_nonnegative_finite(const float* values, int64_t count);

// The sum of values[0, count) in double, in eight independent partial sums.
double row_sum(const float* values, int64_t count);

// What row_sum returns for a row of `count` entries that are zero except
// values[k] at indices[k] (k < n, indices ascending), bit for bit: the same
// partial sums, each fed in index order. Reads only the n entries.
double sparse_row_sum(const int64_t* indices, const float* values, int64_t n, int64_t count);

}  // namespace cadenza
