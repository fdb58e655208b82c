// A matrix held as float16 for matrix-vector products on one core: rows in
// panels of 16, each panel stored column by column ([cols][16] halves), so
// that y[16 rows] += panel[:, k] * x[k] is one vector multiply-add per column
// with no horizontal sums. Half the bytes of float32: the recurrent draft's
// cell (3 x 512 x 256, 1.5 MB as float32) fits a Zen core's 1 MB L2 at 0.75
// MB, so a proposal's later steps read it from L2 instead of L3.
//
// Every output is summed in column order, one fused multiply-add per column
// from zero, then the bias added: the AVX-512, AVX2 and plain paths give the
// same floats (tested).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cadenza::drafts {

class HalfPanels {
public:
    static constexpr int64_t panel_rows = 16;

    HalfPanels() = default;
    // `weight` [rows, cols] float32 row-major, rounded to the nearest half
    // (ties to even; beyond the half range to +-infinity).
    HalfPanels(const float* weight, int64_t rows, int64_t cols);

    int64_t rows() const { return rows_; }
    int64_t cols() const { return cols_; }
    int64_t bytes() const { return static_cast<int64_t>(halves_.size() * sizeof(uint16_t)); }
    const uint16_t* halves() const { return halves_.data(); }

    // y [rows] = weight x [cols] (+ bias [rows] when not null).
    void multiply(const float* x, const float* bias, float* y) const;
    // The plain path alone (the others must agree with it).
    void multiply_plain(const float* x, const float* bias, float* y) const;

    // Row r, column c as float (exact: every half is a float).
    float at(int64_t r, int64_t c) const;

private:
    // Where row r, column c lives in halves_.
    size_t index(int64_t r, int64_t c) const {
        return static_cast<size_t>(((r / panel_rows) * cols_ + c) * panel_rows + r % panel_rows);
    }

    int64_t rows_ = 0, cols_ = 0;
    std::vector<uint16_t> halves_;  // [panels][cols][16], rows past the end zero
};

// The kernels, each in a translation unit compiled for its ISA: every panel
// of `halves` ([panels][cols][16]) into y (16 outputs each, the last panel's
// up to `rows`).
void half_panels_avx512(const uint16_t* halves, int64_t cols, int64_t rows, const float* x, const float* bias, float* y);
void half_panels_avx2(const uint16_t* halves, int64_t cols, int64_t rows, const float* x, const float* bias, float* y);

}  // namespace cadenza::drafts
