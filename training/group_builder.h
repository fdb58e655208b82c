// Building Acoustic Similarity Groups from a token-embedding matrix (PCG,
// Yanuka et al., Eq. 1): G(t) = {t' : cos(E_t, E_t') > theta}, t included,
// then the distinct sets G(t) as the group set {G_k}.
//
// The cosine similarities are computed blockwise (tiles of rows against tiles
// of rows, the upper triangle only, since cos is symmetric) with a
// register-blocked dot-product kernel; the V x V matrix is never held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "token_groups.h"

namespace cadenza::pcg {

struct BuildProgress {
    size_t blocks_done = 0;   // row blocks finished
    size_t blocks_total = 0;
    double fraction = 0.0;    // share of the similarity work done
    double seconds = 0.0;     // since the similarity pass started
};

struct BuildOptions {
    double theta = 0.4;
    unsigned threads = 0;          // 0: the hardware's concurrency
    size_t block_rows = 768;       // rows per work unit (rounded up to the tile size)
    uint64_t max_members = 200'000'000;  // refuse to hold more neighborhood entries than this
    // Called (serialized) after each row block.
    std::function<void(const BuildProgress&)> progress;
};

// G(t) for every row t, as local row ids, in CSR form: row t's set is
// members[offsets[t] .. offsets[t + 1]), sorted, t included.
struct Neighborhoods {
    std::vector<uint64_t> offsets{0};
    std::vector<uint32_t> members;
    size_t zero_rows = 0;  // rows of norm 0: similar to nothing but themselves
};

// `embeddings` is rows x dim, row-major. Throws GroupsError on a non-finite
// value (naming the row) or when the sets would exceed options.max_members.
Neighborhoods similarity_neighborhoods(const float* embeddings, size_t rows, size_t dim, const BuildOptions& options);

// The distinct sets among the neighborhoods, in order of first appearance,
// with ids shifted by `first_id` into a vocabulary of `vocab_size`.
TokenGroups distinct_groups(const Neighborhoods& neighborhoods, uint32_t first_id, uint64_t vocab_size, double theta);

}  // namespace cadenza::pcg
