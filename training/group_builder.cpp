#include "group_builder.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

namespace cadenza::pcg {
namespace {

// Eight floats; GCC lowers it to one AVX register or two SSE registers.
typedef float v8 __attribute__((vector_size(32)));

constexpr size_t lanes = 8;
constexpr size_t tile = 96;         // rows per tile, a multiple of the micro-kernel's 4 x 3
constexpr size_t chunk_dims = 1024; // dimensions per pass, so that tiles stay in cache
constexpr int mr = 4, nr = 3;

// By reference: clang refuses a 32-byte vector argument where AVX may be off.
inline float horizontal_sum(const v8& x) {
    return ((x[0] + x[4]) + (x[1] + x[5])) + ((x[2] + x[6]) + (x[3] + x[7]));
}

// out[r * tile + c] += dot(rows a + r, rows b + c) over `dims` dimensions
// (a multiple of 8) for a tile x tile block; rows are `stride` floats apart.
// Compiled twice: for Haswell and later (AVX2 + FMA) and for baseline x86-64;
// the loader picks one at startup. The two may differ in the last bits.
__attribute__((target_clones("arch=haswell", "default"))) void tile_dots(const float* a, const float* b,
                                                                          size_t stride, size_t dims, float* out) {
    for (size_t r = 0; r < tile; r += mr) {
        for (size_t c = 0; c < tile; c += nr) {
            v8 acc[mr][nr] = {};
            for (size_t k = 0; k < dims; k += lanes) {
                v8 av[mr];
                for (int i = 0; i < mr; ++i) av[i] = *reinterpret_cast<const v8*>(a + (r + i) * stride + k);
                for (int j = 0; j < nr; ++j) {
                    const v8 bv = *reinterpret_cast<const v8*>(b + (c + j) * stride + k);
                    for (int i = 0; i < mr; ++i) acc[i][j] += av[i] * bv;
                }
            }
            for (int i = 0; i < mr; ++i)
                for (int j = 0; j < nr; ++j) out[(r + i) * tile + c + j] += horizontal_sum(acc[i][j]);
        }
    }
}

}  // namespace

Neighborhoods similarity_neighborhoods(const float* embeddings, size_t rows, size_t dim, const BuildOptions& options) {
    if (rows == 0 || dim == 0) throw GroupsError("build groups: the embedding matrix is empty");
    if (rows > std::numeric_limits<uint32_t>::max()) throw GroupsError("build groups: more than 2^32 - 1 rows");
    if (!(options.theta >= -1.0 && options.theta <= 1.0))
        throw GroupsError("build groups: theta " + std::to_string(options.theta) + " is outside [-1, 1]");

    // Normalized rows, padded with zeros to whole tiles and 8 dimensions.
    const size_t stride = (dim + lanes - 1) / lanes * lanes;
    const size_t block = std::max<size_t>(tile, (options.block_rows + tile - 1) / tile * tile);
    const size_t padded_rows = (rows + block - 1) / block * block;
    std::vector<v8> storage(padded_rows * stride / lanes);
    float* matrix = reinterpret_cast<float*>(storage.data());
    std::vector<char> zero(rows, 0);
    Neighborhoods result;
    for (size_t t = 0; t < rows; ++t) {
        const float* in = embeddings + t * dim;
        double norm = 0.0;
        for (size_t d = 0; d < dim; ++d) {
            if (!std::isfinite(in[d]))
                throw GroupsError("build groups: row " + std::to_string(t) + " holds a non-finite value at column " +
                                  std::to_string(d));
            norm += static_cast<double>(in[d]) * in[d];
        }
        if (norm == 0.0) {
            zero[t] = 1;
            ++result.zero_rows;
            continue;
        }
        const double scale = 1.0 / std::sqrt(norm);
        float* out = matrix + t * stride;
        for (size_t d = 0; d < dim; ++d) out[d] = static_cast<float>(in[d] * scale);
    }

    // Work unit: one block of rows against itself and every later block.
    const size_t blocks = padded_rows / block;
    const size_t tiles_per_block = block / tile;
    const double total_work = static_cast<double>(blocks) * (blocks + 1) / 2.0;
    const unsigned thread_count = std::max(1u, std::min<unsigned>(
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency()),
        static_cast<unsigned>(blocks)));
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> pairs(thread_count);
    std::atomic<size_t> next_block{0};
    std::atomic<uint64_t> pair_count{0};
    std::atomic<bool> stop{false};
    std::mutex progress_mutex;
    size_t blocks_done = 0;
    double work_done = 0.0;
    std::exception_ptr failure;
    const auto start = std::chrono::steady_clock::now();
    auto worker = [&](unsigned id) {
        try {
            std::vector<float> out(tile * tile);
            auto& found = pairs[id];
            for (;;) {
                const size_t b = next_block.fetch_add(1);
                if (b >= blocks || stop.load()) break;
                const size_t before = found.size();
                for (size_t ti = b * tiles_per_block; ti < (b + 1) * tiles_per_block; ++ti) {
                    const size_t i0 = ti * tile;
                    if (i0 >= rows) break;
                    for (size_t j0 = i0; j0 < rows; j0 += tile) {
                        std::fill(out.begin(), out.end(), 0.0f);
                        for (size_t d0 = 0; d0 < stride; d0 += chunk_dims)
                            tile_dots(matrix + i0 * stride + d0, matrix + j0 * stride + d0, stride,
                                      std::min(chunk_dims, stride - d0), out.data());
                        for (size_t r = 0; r < tile && i0 + r < rows; ++r) {
                            const size_t i = i0 + r;
                            if (zero[i]) continue;
                            const float* row = out.data() + r * tile;
                            for (size_t c = j0 == i0 ? r + 1 : 0; c < tile && j0 + c < rows; ++c)
                                if (static_cast<double>(row[c]) > options.theta && !zero[j0 + c])
                                    found.emplace_back(static_cast<uint32_t>(i), static_cast<uint32_t>(j0 + c));
                        }
                    }
                }
                // Each pair adds two entries to the neighborhoods.
                const uint64_t held = pair_count.fetch_add(found.size() - before) + (found.size() - before);
                if (rows + 2 * held > options.max_members)
                    throw GroupsError("build groups: the groups would hold more than " +
                                      std::to_string(options.max_members) +
                                      " entries; raise theta (or the limit on entries)");
                std::lock_guard<std::mutex> lock(progress_mutex);
                ++blocks_done;
                work_done += static_cast<double>(blocks - b);
                if (options.progress) {
                    BuildProgress progress;
                    progress.blocks_done = blocks_done;
                    progress.blocks_total = blocks;
                    progress.fraction = work_done / total_work;
                    progress.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    options.progress(progress);
                }
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(progress_mutex);
            if (!failure) failure = std::current_exception();
            stop = true;
        }
    };
    if (thread_count == 1) {
        worker(0);
    } else {
        std::vector<std::thread> threads;
        for (unsigned id = 0; id < thread_count; ++id) threads.emplace_back(worker, id);
        for (auto& thread : threads) thread.join();
    }
    if (failure) std::rethrow_exception(failure);
    storage = std::vector<v8>();

    // Neighborhoods: each row, plus both ends of every pair.
    std::vector<uint64_t> counts(rows, 1);
    for (const auto& list : pairs)
        for (const auto& pair : list) {
            ++counts[pair.first];
            ++counts[pair.second];
        }
    result.offsets.assign(rows + 1, 0);
    for (size_t t = 0; t < rows; ++t) result.offsets[t + 1] = result.offsets[t] + counts[t];
    result.members.resize(result.offsets[rows]);
    std::vector<uint64_t> fill(result.offsets.begin(), result.offsets.end() - 1);
    for (size_t t = 0; t < rows; ++t) result.members[fill[t]++] = static_cast<uint32_t>(t);
    for (auto& list : pairs) {
        for (const auto& pair : list) {
            result.members[fill[pair.first]++] = pair.second;
            result.members[fill[pair.second]++] = pair.first;
        }
        std::vector<std::pair<uint32_t, uint32_t>>().swap(list);
    }
    for (size_t t = 0; t < rows; ++t)
        std::sort(result.members.begin() + static_cast<std::ptrdiff_t>(result.offsets[t]),
                  result.members.begin() + static_cast<std::ptrdiff_t>(result.offsets[t + 1]));
    return result;
}

TokenGroups distinct_groups(const Neighborhoods& neighborhoods, uint32_t first_id, uint64_t vocab_size, double theta) {
    const size_t rows = neighborhoods.offsets.size() - 1;
    if (static_cast<uint64_t>(first_id) + rows > vocab_size)
        throw GroupsError("build groups: rows " + std::to_string(first_id) + ".." + std::to_string(first_id + rows) +
                          " do not fit in a vocabulary of " + std::to_string(vocab_size));
    TokenGroups groups;
    groups.vocab_size = vocab_size;
    groups.theta = theta;
    std::unordered_map<uint64_t, std::vector<uint32_t>> seen;  // hash -> rows whose set was kept
    std::vector<uint32_t> shifted;
    for (size_t t = 0; t < rows; ++t) {
        const uint32_t* begin = neighborhoods.members.data() + neighborhoods.offsets[t];
        const size_t size = static_cast<size_t>(neighborhoods.offsets[t + 1] - neighborhoods.offsets[t]);
        uint64_t hash = 1469598103934665603ull;  // FNV-1a over the ids
        for (size_t i = 0; i < size; ++i) hash = (hash ^ begin[i]) * 1099511628211ull;
        auto& candidates = seen[hash];
        bool duplicate = false;
        for (uint32_t other : candidates) {
            const uint32_t* other_begin = neighborhoods.members.data() + neighborhoods.offsets[other];
            const size_t other_size = static_cast<size_t>(neighborhoods.offsets[other + 1] - neighborhoods.offsets[other]);
            if (other_size == size && std::equal(begin, begin + size, other_begin)) {
                duplicate = true;
                break;
            }
        }
        if (duplicate) continue;
        candidates.push_back(static_cast<uint32_t>(t));
        shifted.resize(size);
        for (size_t i = 0; i < size; ++i) shifted[i] = begin[i] + first_id;
        groups.add_group(shifted);
    }
    return groups;
}

}  // namespace cadenza::pcg
