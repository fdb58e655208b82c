// The token transition matrix Q of Viterbi decoding (Nguyen et al., ICASSP
// 2025): Q(from, to) = P(next token = to | current token = from), each row a
// probability distribution over the vocabulary. This library reads and writes
// the binary transitions file (docs/formats.md, "Transitions file") in its two
// layouts:
//
//  - dense:  V x V float32, row-major;
//  - sparse: per row at most top_n stored entries (token ids ascending, with
//            their probabilities) and one floor probability that every token
//            not stored in the row has. Row sum = stored + (V - stored) * floor.
//
// Both are validated wherever they come from (a file or memory): every error
// is a TransitionFileError whose message names the file (and the row).
// Linked by acceptor.viterbi and by `cadenza build-transitions`; it depends on
// nothing of cadenza, so a plugin can link it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza {

// INVALID_ARGUMENT, the message naming the file.
class TransitionFileError : public sdk::Error {
public:
    explicit TransitionFileError(const std::string& message) : sdk::Error(CDZ_STATUS_INVALID_ARGUMENT, message) {}
};

class TransitionMatrix {
public:
    static constexpr char magic[8] = {'C', 'D', 'Z', 'T', 'R', 'N', '\0', '\0'};
    static constexpr uint32_t format_version = 1;
    static constexpr size_t header_size = 64;
    // |row sum - 1| allowed; float32 rows of 65,536 entries stay far below.
    static constexpr double row_sum_tolerance = 1e-4;
    // Ids are int32 across the plugin ABI.
    static constexpr int64_t max_vocab_size = 2147483647;
    // A dense file above this vocabulary would be > 1 TiB: refused.
    static constexpr int64_t max_dense_vocab_size = 1 << 19;

    enum class Layout : uint32_t { dense = 0, sparse = 1 };

    // How the matrix was made, stored in the header for the record.
    struct Provenance {
        double alpha = 0.0;            // add-alpha smoothing
        uint64_t sequence_count = 0;   // corpus lines
        uint64_t bigram_count = 0;     // bigrams counted
    };

    struct SparseRow {
        const int32_t* ids;            // ascending
        const float* probabilities;
        size_t count;
        float floor;                   // the probability of every token not in ids
    };

    TransitionMatrix() = default;

    // `values` is V * V, row-major. Validates (rows sum to 1); `source`
    // names the matrix in errors.
    static TransitionMatrix make_dense(int64_t vocab_size, std::vector<float> values, const Provenance& provenance,
                                       const std::string& source = "<memory>");
    // row_offsets: V + 1 entries, row r's entries are [row_offsets[r],
    // row_offsets[r + 1]) of ids / probabilities; floors: V entries.
    static TransitionMatrix make_sparse(int64_t vocab_size, uint32_t top_n, std::vector<uint64_t> row_offsets,
                                        std::vector<int32_t> ids, std::vector<float> probabilities,
                                        std::vector<float> floors, const Provenance& provenance,
                                        const std::string& source = "<memory>");

    // Reads and validates a transitions file.
    static TransitionMatrix load(const std::string& path);
    // Writes the file (through a temporary next to it, renamed at the end).
    void save(const std::string& path) const;

    int64_t vocab_size() const { return vocab_size_; }
    Layout layout() const { return layout_; }
    bool is_sparse() const { return layout_ == Layout::sparse; }
    uint32_t top_n() const { return top_n_; }  // 0 when dense
    const Provenance& provenance() const { return provenance_; }
    uint64_t stored_entries() const;           // V * V when dense
    uint64_t file_size() const;                // bytes the file takes

    // Q(from, to). Sparse: a binary search in the row; an entry not stored
    // is the row's floor. Ids must be in [0, V) (not checked).
    float probability(int32_t from, int32_t to) const;
    const float* dense_row(int32_t from) const;  // dense only
    SparseRow sparse_row(int32_t from) const;    // sparse only
    // out[j] = Q(from, to[j]) for `to` sorted ascending: one pass over a
    // sparse row instead of `count` searches.
    void gather_row(int32_t from, const int32_t* to, size_t count, float* out) const;

private:
    void validate(const std::string& source) const;

    int64_t vocab_size_ = 0;
    Layout layout_ = Layout::dense;
    uint32_t top_n_ = 0;
    Provenance provenance_;
    std::vector<float> dense_;             // V * V
    std::vector<uint64_t> row_offsets_;    // V + 1
    std::vector<int32_t> ids_;
    std::vector<float> probabilities_;
    std::vector<float> floors_;            // V
};

}  // namespace cadenza
