// safetensors: a strict memory-mapped reader, a writer, and sharded
// checkpoints (model.safetensors.index.json).
//
// Layout of a file: an 8-byte little-endian header length N, N bytes of JSON
// header, then the data section. The header is an object mapping tensor names
// to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
// data section) plus an optional "__metadata__" object of string values.
//
// Every problem is reported as safetensors::Error naming the file and, where
// one is involved, the tensor. Opening a file validates all of its header:
// dtypes, shapes, offsets within the data section, byte counts matching shape
// x dtype size, no two tensors overlapping, no duplicate keys. Gaps between
// tensors are tolerated. No LibTorch; C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace cadenza::safetensors {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class DType : uint8_t { BOOL, U8, I8, U16, I16, F16, BF16, U32, I32, F32, U64, I64, F64, F8_E4M3, F8_E5M2 };

size_t dtype_size(DType dtype);                               // bytes per element
const char* dtype_name(DType dtype);                          // "F32", "BF16", ...
std::optional<DType> dtype_from_name(const std::string& name);

// Exact conversions to float32 (every f16 and bf16 value is a float32 value;
// NaN stays NaN, infinities and signed zeros are kept, f16 subnormals too).
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);
// float32 to f16 / bf16, rounding to nearest even; overflow gives infinity,
// NaN gives a quiet NaN of the same sign.
uint16_t f32_to_f16(float value);
uint16_t f32_to_bf16(float value);

using Shape = std::vector<int64_t>;
std::string shape_string(const Shape& shape);  // "[2, 3]"

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    uint64_t data_begin = 0;  // byte offsets within the data section
    uint64_t data_end = 0;
    uint64_t element_count() const;
    uint64_t byte_size() const { return data_end - data_begin; }
};

// A memory-mapped, validated safetensors file. Move-only; the mapping lives
// as long as the object.
class File {
public:
    explicit File(const std::filesystem::path& path);
    ~File();
    File(File&& other) noexcept;
    File& operator=(File&& other) noexcept;
    File(const File&) = delete;
    File& operator=(const File&) = delete;

    const std::filesystem::path& path() const { return path_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    // The tensors in the order of their data.
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    bool contains(const std::string& name) const;

    // Throws when the file has no such tensor.
    const TensorInfo& info(const std::string& name) const;
    // Also throws when the shape differs from `expected`, in which -1 matches
    // any size.
    const TensorInfo& info(const std::string& name, const Shape& expected) const;

    // The tensor's bytes as mapped (no alignment is guaranteed).
    const uint8_t* data(const TensorInfo& tensor) const;

    // F32, F16, BF16 or F64 as float32.
    std::vector<float> read_f32(const std::string& name) const;
    std::vector<float> read_f32(const std::string& name, const Shape& expected) const;
    // Rows [row_begin, row_end) of the first dimension, each row being the
    // product of the other dimensions; `out` holds (row_end - row_begin) * row size.
    void read_f32_rows(const std::string& name, int64_t row_begin, int64_t row_end, float* out) const;
    // Integer tensors (I8..I64, U8..U64 within int64 range, BOOL) as int64.
    std::vector<int64_t> read_i64(const std::string& name) const;
    std::vector<int64_t> read_i64(const std::string& name, const Shape& expected) const;

    // The start of a message about this file ("<path>") or one of its tensors
    // ("<path>: tensor 'x'").
    std::string where(const std::string& tensor = {}) const;

private:
    void unmap() noexcept;
    void parse_header(const char* text, size_t size, uint64_t data_size);

    std::filesystem::path path_;
    const uint8_t* mapping_ = nullptr;
    size_t mapping_size_ = 0;
    const uint8_t* data_section_ = nullptr;
    std::map<std::string, std::string> metadata_;
    std::vector<TensorInfo> tensors_;
    std::unordered_map<std::string, size_t> index_;
};

// One checkpoint, as a single file or as shards listed by an index
// ({"metadata": {...}, "weight_map": {"tensor": "shard file"}}).
class Checkpoint {
public:
    // `path` is a .safetensors file, an index .json file, or a directory that
    // holds model.safetensors.index.json or else model.safetensors.
    static Checkpoint open(const std::filesystem::path& path);
    static Checkpoint open_index(const std::filesystem::path& index_path);

    const std::filesystem::path& path() const { return path_; }
    // The index's "metadata" (non-string values as JSON text), or the single
    // file's __metadata__.
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    size_t shard_count() const { return shards_.size(); }
    const File& shard(size_t index) const { return *shards_.at(index); }
    std::vector<std::string> names() const;  // sorted
    bool contains(const std::string& name) const { return owner_.count(name) != 0; }

    // The shard holding `name`; throws naming the checkpoint when none does.
    const File& file_of(const std::string& name) const;
    const TensorInfo& info(const std::string& name) const { return file_of(name).info(name); }
    const TensorInfo& info(const std::string& name, const Shape& expected) const {
        return file_of(name).info(name, expected);
    }
    std::vector<float> read_f32(const std::string& name) const { return file_of(name).read_f32(name); }
    std::vector<float> read_f32(const std::string& name, const Shape& expected) const {
        return file_of(name).read_f32(name, expected);
    }
    void read_f32_rows(const std::string& name, int64_t row_begin, int64_t row_end, float* out) const {
        file_of(name).read_f32_rows(name, row_begin, row_end, out);
    }
    std::vector<int64_t> read_i64(const std::string& name) const { return file_of(name).read_i64(name); }

private:
    std::filesystem::path path_;
    std::map<std::string, std::string> metadata_;
    std::vector<std::unique_ptr<File>> shards_;
    std::unordered_map<std::string, size_t> owner_;  // tensor -> shard
};

// Builds a safetensors file in memory and writes it. Tensors are laid out in
// the order they are added, each starting at a multiple of 8 bytes; the
// header is padded with spaces to a multiple of 8 bytes.
class Writer {
public:
    void set_metadata(const std::string& key, const std::string& value);
    // Copies `byte_count` bytes, which must equal shape x dtype size.
    void add(const std::string& name, DType dtype, const Shape& shape, const void* data, size_t byte_count);
    void add_f32(const std::string& name, const Shape& shape, const float* values);
    void add_f16(const std::string& name, const Shape& shape, const float* values);   // converts
    void add_bf16(const std::string& name, const Shape& shape, const float* values);  // converts
    void add_i32(const std::string& name, const Shape& shape, const int32_t* values);
    void add_i64(const std::string& name, const Shape& shape, const int64_t* values);

    // The header JSON as it will be written (without padding).
    std::string header() const;
    // Writes to a temporary file beside `path`, then renames it.
    void write(const std::filesystem::path& path) const;

private:
    struct Pending {
        std::string name;
        DType dtype;
        Shape shape;
        uint64_t begin;
        std::vector<uint8_t> bytes;
    };
    std::map<std::string, std::string> metadata_;
    std::vector<Pending> tensors_;
    std::unordered_map<std::string, size_t> names_;
    uint64_t data_size_ = 0;
};

// shape's element count, or nullopt on a negative size or an overflow.
std::optional<uint64_t> element_count(const Shape& shape);

}  // namespace cadenza::safetensors
