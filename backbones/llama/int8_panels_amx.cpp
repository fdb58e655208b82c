// The int8 panels' kernel for blocks of 16 rows (a prompt's prefill), on
// AMX tiles: the panel layout [groups, 64, 4] is already the B operand's
// (16 groups of 4 inputs by 16 outputs a tile, rows 256 bytes apart), so a
// tile multiply takes 16 rows x 64 inputs x 16 outputs at once. The int32
// sums are exact, as vpdpbusd's, and the scaling is the same arithmetic:
// the result equals combine_int8_panels_vnni's to the bit.
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#include "int8_panels.h"
#include "int8_panels_kernel.h"

namespace cadenza::llama {
namespace {

constexpr int64_t tile_rows = 16;

struct TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
};

// Tiles 0-3: the 16 x 16 int32 sums of the panel's four groups of 16
// outputs; 4: 16 rows x 64 input bytes; 5: 16 groups of 4 inputs x 16 outputs.
void configure_tiles() {
    TileConfig config;
    for (int t = 0; t < 6; ++t) {
        config.bytes_per_row[t] = 64;
        config.rows[t] = 16;
    }
    _tile_loadconfig(&config);
}

}  // namespace

bool amx_int8_supported() {
    // Linux hands out the tile registers' state only on request, once per process.
    static const bool supported = __builtin_cpu_supports("amx-int8") && __builtin_cpu_supports("amx-tile") &&
                                  syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
    return supported;
}

void combine_int8_panels_amx(const QuantizedRows& x, int64_t m, const int8_t* panels, const float* w_scales,
                             const int32_t* w_sums, int64_t in, int64_t out, float* y, int64_t y_stride) {
    const int64_t groups = in / 4;  // in is a multiple of 64 here
    configure_tiles();
    alignas(64) int32_t sums[tile_rows][64];
    for (int64_t first = 0; first < out; first += 64) {
        const int8_t* panel = panels + (first / 64) * groups * 256;
        const int64_t width = out - first < 64 ? out - first : 64;
        for (int64_t r = 0; r + tile_rows <= m; r += tile_rows) {
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            const uint8_t* rows = x.values + r * x.stride;
            for (int64_t k = 0; k < in; k += 64) {
                _tile_loadd(4, rows + k, x.stride);
                const int8_t* block = panel + (k / 4) * 256;
                _tile_loadd(5, block, 256);
                _tile_dpbusd(0, 4, 5);
                _tile_loadd(5, block + 64, 256);
                _tile_dpbusd(1, 4, 5);
                _tile_loadd(5, block + 128, 256);
                _tile_dpbusd(2, 4, 5);
                _tile_loadd(5, block + 192, 256);
                _tile_dpbusd(3, 4, 5);
            }
            _tile_stored(0, &sums[0][0], 64 * sizeof(int32_t));
            _tile_stored(1, &sums[0][16], 64 * sizeof(int32_t));
            _tile_stored(2, &sums[0][32], 64 * sizeof(int32_t));
            _tile_stored(3, &sums[0][48], 64 * sizeof(int32_t));
            for (int64_t i = 0; i < tile_rows; ++i)
                for (int64_t column = 0; column < width; column += 16)
                    store_scaled_sums(_mm512_load_si512(&sums[i][column]), w_sums + first + column,
                                      w_scales + first + column, x.scales[r + i], width - column,
                                      y + (r + i) * y_stride + first + column);
        }
    }
    _tile_release();
}

}  // namespace cadenza::llama
