#include "transition_matrix.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>

#include "replacing_file.h"

namespace cadenza {
namespace {

// The file is little-endian; a big-endian host swaps bytes on the way.
constexpr bool host_is_little_endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

template <typename T>
T byte_swapped(T value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    std::reverse(bytes, bytes + sizeof(T));
    std::memcpy(&value, bytes, sizeof(T));
    return value;
}

template <typename T>
void to_host_order(T* values, size_t count) {
    if (!host_is_little_endian)
        for (size_t i = 0; i < count; ++i) values[i] = byte_swapped(values[i]);
}

template <typename T>
T read_le(const unsigned char* bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    to_host_order(&value, 1);
    return value;
}

template <typename T>
void write_le(unsigned char* bytes, T value) {
    to_host_order(&value, 1);
    std::memcpy(bytes, &value, sizeof(T));
}

std::string format_number(double value) {
    std::ostringstream out;
    out.precision(9);
    out << value;
    return out.str();
}

struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Reads `count` values of T; the caller checked the file is long enough.
template <typename T>
void read_array(std::FILE* file, std::vector<T>& out, uint64_t count, const std::string& path, const char* what) {
    out.resize(static_cast<size_t>(count));
    if (count > 0 && std::fread(out.data(), sizeof(T), out.size(), file) != out.size())
        throw TransitionFileError(path + ": cannot read the " + what + ": " + std::strerror(errno));
    to_host_order(out.data(), out.size());
}

template <typename T>
void write_array(std::FILE* file, const T* values, size_t count, const std::string& path) {
    if (host_is_little_endian) {
        if (count > 0 && std::fwrite(values, sizeof(T), count, file) != count)
            throw TransitionFileError("cannot write " + path + ": " + std::strerror(errno));
        return;
    }
    std::vector<T> chunk;
    for (size_t start = 0; start < count; start += 65536) {
        const size_t n = std::min<size_t>(65536, count - start);
        chunk.assign(values + start, values + start + n);
        for (auto& value : chunk) value = byte_swapped(value);
        if (std::fwrite(chunk.data(), sizeof(T), n, file) != n)
            throw TransitionFileError("cannot write " + path + ": " + std::strerror(errno));
    }
}

// Bytes a file with this header must have, in 128 bits so that no header
// value can overflow it.
unsigned __int128 expected_file_size(TransitionMatrix::Layout layout, uint64_t vocab, uint64_t entries) {
    using wide = unsigned __int128;
    if (layout == TransitionMatrix::Layout::dense) return TransitionMatrix::header_size + wide(entries) * 4;
    return TransitionMatrix::header_size + (wide(vocab) + 1) * 8 + wide(vocab) * 4 + wide(entries) * 8;
}

std::string to_string_wide(unsigned __int128 value) {
    if (value == 0) return "0";
    std::string digits;
    while (value > 0) {
        digits.push_back(static_cast<char>('0' + static_cast<int>(value % 10)));
        value /= 10;
    }
    return std::string(digits.rbegin(), digits.rend());
}

bool is_probability(float value) { return value >= 0.0f && value <= 1.0f; }  // false for NaN

}  // namespace

constexpr char TransitionMatrix::magic[8];

TransitionMatrix TransitionMatrix::make_dense(int64_t vocab_size, std::vector<float> values,
                                              const Provenance& provenance, const std::string& source) {
    if (vocab_size <= 0 || vocab_size > max_dense_vocab_size)
        throw TransitionFileError(source + ": a dense vocabulary of " + std::to_string(vocab_size) +
                                  " tokens is out of range [1, " + std::to_string(max_dense_vocab_size) + "]");
    if (values.size() != static_cast<uint64_t>(vocab_size) * static_cast<uint64_t>(vocab_size))
        throw TransitionFileError(source + ": a dense matrix of vocabulary " + std::to_string(vocab_size) +
                                  " needs " + std::to_string(vocab_size * vocab_size) + " values, got " +
                                  std::to_string(values.size()));
    TransitionMatrix matrix;
    matrix.vocab_size_ = vocab_size;
    matrix.layout_ = Layout::dense;
    matrix.provenance_ = provenance;
    matrix.dense_ = std::move(values);
    matrix.validate(source);
    return matrix;
}

TransitionMatrix TransitionMatrix::make_sparse(int64_t vocab_size, uint32_t top_n, std::vector<uint64_t> row_offsets,
                                               std::vector<int32_t> ids, std::vector<float> probabilities,
                                               std::vector<float> floors, const Provenance& provenance,
                                               const std::string& source) {
    if (vocab_size <= 0 || vocab_size > max_vocab_size)
        throw TransitionFileError(source + ": a vocabulary of " + std::to_string(vocab_size) +
                                  " tokens is out of range [1, " + std::to_string(max_vocab_size) + "]");
    if (row_offsets.size() != static_cast<size_t>(vocab_size) + 1 || floors.size() != static_cast<size_t>(vocab_size) ||
        ids.size() != probabilities.size() || row_offsets.back() != ids.size())
        throw TransitionFileError(source + ": inconsistent sizes of the sparse arrays (" +
                                  std::to_string(row_offsets.size()) + " row offsets, " +
                                  std::to_string(floors.size()) + " floors, " + std::to_string(ids.size()) + " ids, " +
                                  std::to_string(probabilities.size()) + " probabilities for a vocabulary of " +
                                  std::to_string(vocab_size) + ")");
    TransitionMatrix matrix;
    matrix.vocab_size_ = vocab_size;
    matrix.layout_ = Layout::sparse;
    matrix.top_n_ = top_n;
    matrix.provenance_ = provenance;
    matrix.row_offsets_ = std::move(row_offsets);
    matrix.ids_ = std::move(ids);
    matrix.probabilities_ = std::move(probabilities);
    matrix.floors_ = std::move(floors);
    matrix.validate(source);
    return matrix;
}

void TransitionMatrix::validate(const std::string& source) const {
    if (!std::isfinite(provenance_.alpha) || provenance_.alpha < 0.0)
        throw TransitionFileError(source + ": the smoothing alpha " + format_number(provenance_.alpha) +
                                  " is negative or not finite");
    const int64_t vocab = vocab_size_;
    auto row_sum_error = [&](int64_t row, double sum) {
        return TransitionFileError(source + ": row " + std::to_string(row) + " sums to " + format_number(sum) +
                                   ", not 1 (tolerance " + format_number(row_sum_tolerance) + ")");
    };
    if (layout_ == Layout::dense) {
        for (int64_t row = 0; row < vocab; ++row) {
            const float* values = dense_.data() + row * vocab;
            double sum = 0.0;
            for (int64_t column = 0; column < vocab; ++column) {
                if (!is_probability(values[column]))
                    throw TransitionFileError(source + ": row " + std::to_string(row) + ", column " +
                                              std::to_string(column) + " holds " + format_number(values[column]) +
                                              ", not a probability");
                sum += values[column];
            }
            if (std::fabs(sum - 1.0) > row_sum_tolerance) throw row_sum_error(row, sum);
        }
        return;
    }
    if (top_n_ == 0 || top_n_ > vocab)
        throw TransitionFileError(source + ": top_n " + std::to_string(top_n_) + " is out of range [1, " +
                                  std::to_string(vocab) + "]");
    if (row_offsets_[0] != 0)
        throw TransitionFileError(source + ": the first row offset is " + std::to_string(row_offsets_[0]) + ", not 0");
    for (int64_t row = 0; row < vocab; ++row) {
        const uint64_t begin = row_offsets_[row], end = row_offsets_[row + 1];
        if (end < begin || end > ids_.size())
            throw TransitionFileError(source + ": row " + std::to_string(row) + " has offsets [" +
                                      std::to_string(begin) + ", " + std::to_string(end) + ") outside the " +
                                      std::to_string(ids_.size()) + " stored entries (inconsistent sizes)");
        if (end - begin > top_n_)
            throw TransitionFileError(source + ": row " + std::to_string(row) + " stores " +
                                      std::to_string(end - begin) + " entries, more than top_n " +
                                      std::to_string(top_n_));
        if (!is_probability(floors_[row]))
            throw TransitionFileError(source + ": row " + std::to_string(row) + " has floor " +
                                      format_number(floors_[row]) + ", not a probability");
        double sum = 0.0;
        for (uint64_t e = begin; e < end; ++e) {
            const int32_t id = ids_[e];
            if (id < 0 || id >= vocab)
                throw TransitionFileError(source + ": row " + std::to_string(row) + " stores token id " +
                                          std::to_string(static_cast<uint32_t>(id)) + ", out of range [0, " +
                                          std::to_string(vocab) + ")");
            if (e > begin && id <= ids_[e - 1])
                throw TransitionFileError(source + ": row " + std::to_string(row) +
                                          " has token ids not strictly ascending (" + std::to_string(ids_[e - 1]) +
                                          " then " + std::to_string(id) + ")");
            if (!is_probability(probabilities_[e]))
                throw TransitionFileError(source + ": row " + std::to_string(row) + ", token " + std::to_string(id) +
                                          " holds " + format_number(probabilities_[e]) + ", not a probability");
            sum += probabilities_[e];
        }
        sum += static_cast<double>(vocab - static_cast<int64_t>(end - begin)) * floors_[row];
        if (std::fabs(sum - 1.0) > row_sum_tolerance) throw row_sum_error(row, sum);
    }
}

TransitionMatrix TransitionMatrix::load(const std::string& path) {
    std::error_code error;
    const uint64_t size = std::filesystem::file_size(path, error);
    if (error) throw TransitionFileError(path + ": cannot read the transitions file: " + error.message());
    File file(std::fopen(path.c_str(), "rb"));
    if (!file) throw TransitionFileError(path + ": cannot open the transitions file: " + std::strerror(errno));

    unsigned char header[header_size] = {};
    const size_t got = std::fread(header, 1, header_size, file.get());
    if (got >= sizeof(magic) && std::memcmp(header, magic, sizeof(magic)) != 0)
        throw TransitionFileError(path + ": not a cadenza transitions file (bad magic; expected \"CDZTRN\")");
    if (got < header_size)
        throw TransitionFileError(path + ": truncated: " + std::to_string(size) + " bytes, shorter than the " +
                                  std::to_string(header_size) + "-byte header");
    const auto version = read_le<uint32_t>(header + 8);
    if (version != format_version)
        throw TransitionFileError(path + ": unsupported transitions format version " + std::to_string(version) +
                                  " (this build reads version " + std::to_string(format_version) + ")");
    const auto layout_value = read_le<uint32_t>(header + 12);
    if (layout_value > 1)
        throw TransitionFileError(path + ": unknown layout " + std::to_string(layout_value) +
                                  " (0 = dense, 1 = sparse)");
    const auto layout = static_cast<Layout>(layout_value);
    const auto vocab = read_le<uint64_t>(header + 16);
    Provenance provenance;
    provenance.alpha = read_le<double>(header + 24);
    const auto top_n = read_le<uint64_t>(header + 32);
    const auto entries = read_le<uint64_t>(header + 40);
    provenance.sequence_count = read_le<uint64_t>(header + 48);
    provenance.bigram_count = read_le<uint64_t>(header + 56);

    const int64_t vocab_limit = layout == Layout::dense ? max_dense_vocab_size : max_vocab_size;
    if (vocab == 0 || vocab > static_cast<uint64_t>(vocab_limit))
        throw TransitionFileError(path + ": vocabulary size " + std::to_string(vocab) + " is out of range [1, " +
                                  std::to_string(vocab_limit) + "] for a " +
                                  (layout == Layout::dense ? "dense" : "sparse") + " matrix");
    if (layout == Layout::dense && (entries != vocab * vocab || top_n != 0))
        throw TransitionFileError(path + ": inconsistent sizes: a dense matrix of vocabulary " + std::to_string(vocab) +
                                  " has " + std::to_string(vocab * vocab) + " entries and top_n 0, the header says " +
                                  std::to_string(entries) + " and " + std::to_string(top_n));
    if (layout == Layout::sparse &&
        (top_n == 0 || top_n > vocab || top_n > UINT32_MAX || static_cast<unsigned __int128>(entries) >
                                                                   static_cast<unsigned __int128>(vocab) * top_n))
        throw TransitionFileError(path + ": inconsistent sizes: " + std::to_string(entries) +
                                  " stored entries with top_n " + std::to_string(top_n) + " over " +
                                  std::to_string(vocab) + " rows");
    const unsigned __int128 expected = expected_file_size(layout, vocab, entries);
    if (size < expected)
        throw TransitionFileError(path + ": truncated: " + std::to_string(size) + " bytes, the header announces " +
                                  to_string_wide(expected));
    if (size > expected)
        throw TransitionFileError(path + ": inconsistent sizes: " + std::to_string(size) +
                                  " bytes, the header announces " + to_string_wide(expected) + " (trailing data)");

    if (layout == Layout::dense) {
        std::vector<float> values;
        read_array(file.get(), values, entries, path, "matrix");
        return make_dense(static_cast<int64_t>(vocab), std::move(values), provenance, path);
    }
    std::vector<uint64_t> row_offsets;
    std::vector<float> floors, probabilities;
    std::vector<uint32_t> raw_ids;
    read_array(file.get(), row_offsets, vocab + 1, path, "row offsets");
    read_array(file.get(), floors, vocab, path, "row floors");
    read_array(file.get(), raw_ids, entries, path, "token ids");
    read_array(file.get(), probabilities, entries, path, "probabilities");
    if (row_offsets.back() != entries)
        throw TransitionFileError(path + ": inconsistent sizes: the last row offset is " +
                                  std::to_string(row_offsets.back()) + ", the header announces " +
                                  std::to_string(entries) + " entries");
    std::vector<int32_t> ids(raw_ids.size());
    for (size_t i = 0; i < raw_ids.size(); ++i)  // ids >= 2^31 become negative and fail validation
        ids[i] = static_cast<int32_t>(raw_ids[i]);
    return make_sparse(static_cast<int64_t>(vocab), static_cast<uint32_t>(top_n), std::move(row_offsets),
                       std::move(ids), std::move(probabilities), std::move(floors), provenance, path);
}

uint64_t TransitionMatrix::stored_entries() const {
    return layout_ == Layout::dense ? dense_.size() : ids_.size();
}

uint64_t TransitionMatrix::file_size() const {
    return static_cast<uint64_t>(expected_file_size(layout_, static_cast<uint64_t>(vocab_size_), stored_entries()));
}

void TransitionMatrix::save(const std::string& path) const {
    if (vocab_size_ <= 0) throw TransitionFileError("cannot write " + path + ": the matrix is empty");
    std::optional<file_output::ReplacingFile> output;
    try {
        output.emplace(path);
    } catch (const file_output::OutputFileError& error) {
        throw TransitionFileError(error.what());
    }
    const std::string temporary = output->write_path().string();
    {
        File file(std::fopen(temporary.c_str(), "wb"));
        if (!file) throw TransitionFileError("cannot write " + temporary + ": " + std::strerror(errno));
        unsigned char header[header_size] = {};
        std::memcpy(header, magic, sizeof(magic));
        write_le<uint32_t>(header + 8, format_version);
        write_le<uint32_t>(header + 12, static_cast<uint32_t>(layout_));
        write_le<uint64_t>(header + 16, static_cast<uint64_t>(vocab_size_));
        write_le<double>(header + 24, provenance_.alpha);
        write_le<uint64_t>(header + 32, top_n_);
        write_le<uint64_t>(header + 40, stored_entries());
        write_le<uint64_t>(header + 48, provenance_.sequence_count);
        write_le<uint64_t>(header + 56, provenance_.bigram_count);
        try {
            if (std::fwrite(header, 1, header_size, file.get()) != header_size)
                throw TransitionFileError("cannot write " + temporary + ": " + std::strerror(errno));
            if (layout_ == Layout::dense) {
                write_array(file.get(), dense_.data(), dense_.size(), temporary);
            } else {
                write_array(file.get(), row_offsets_.data(), row_offsets_.size(), temporary);
                write_array(file.get(), floors_.data(), floors_.size(), temporary);
                write_array(file.get(), reinterpret_cast<const uint32_t*>(ids_.data()), ids_.size(), temporary);
                write_array(file.get(), probabilities_.data(), probabilities_.size(), temporary);
            }
            if (std::fflush(file.get()) != 0)
                throw TransitionFileError("cannot write " + temporary + ": " + std::strerror(errno));
        } catch (...) {
            file.reset();
            throw;
        }
        if (std::fclose(file.release()) != 0)
            throw TransitionFileError("cannot write " + temporary + ": " + std::strerror(errno));
    }
    try {
        output->commit();
    } catch (const file_output::OutputFileError& error) {
        throw TransitionFileError(error.what());
    }
}

float TransitionMatrix::probability(int32_t from, int32_t to) const {
    if (layout_ == Layout::dense) return dense_[static_cast<size_t>(from) * static_cast<size_t>(vocab_size_) + to];
    const int32_t* begin = ids_.data() + row_offsets_[from];
    const int32_t* end = ids_.data() + row_offsets_[from + 1];
    const int32_t* found = std::lower_bound(begin, end, to);
    if (found != end && *found == to) return probabilities_[static_cast<size_t>(found - ids_.data())];
    return floors_[from];
}

const float* TransitionMatrix::dense_row(int32_t from) const {
    return dense_.data() + static_cast<size_t>(from) * static_cast<size_t>(vocab_size_);
}

TransitionMatrix::SparseRow TransitionMatrix::sparse_row(int32_t from) const {
    const uint64_t begin = row_offsets_[from];
    return SparseRow{ids_.data() + begin, probabilities_.data() + begin,
                     static_cast<size_t>(row_offsets_[from + 1] - begin), floors_[from]};
}

void TransitionMatrix::gather_row(int32_t from, const int32_t* to, size_t count, float* out) const {
    if (layout_ == Layout::dense) {
        const float* row = dense_row(from);
        for (size_t j = 0; j < count; ++j) out[j] = row[to[j]];
        return;
    }
    // Both lists ascend: each search starts where the previous one ended.
    const SparseRow row = sparse_row(from);
    const int32_t* cursor = row.ids;
    const int32_t* const end = row.ids + row.count;
    for (size_t j = 0; j < count; ++j) {
        cursor = std::lower_bound(cursor, end, to[j]);
        out[j] = (cursor != end && *cursor == to[j]) ? row.probabilities[cursor - row.ids] : row.floor;
    }
}

}  // namespace cadenza
