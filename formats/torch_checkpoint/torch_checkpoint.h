// torch_checkpoint: a strict reader for PyTorch checkpoints saved by
// torch.save (the zip format of PyTorch >= 1.6): EnCodec .th, SpeechTokenizer
// .pt, Hugging Face pytorch_model.bin, ... No LibTorch; C++17.
//
// A torch.save archive is a zip file whose entries all live under one folder
// ("<archive>/"): "<archive>/data.pkl" is a pickle of the saved object (for a
// state dict, an OrderedDict name -> tensor), each tensor's storage is the
// raw little-endian entry "<archive>/data/<key>", and "<archive>/version"
// holds the serialization format version.
//
// The reader memory-maps the file and accepts only what state dicts need:
//  - zip: STORED (uncompressed) entries only, ZIP64 records, one disk, no
//    encryption; every offset and size is bounds-checked; the CRC-32 of
//    data.pkl is always checked, that of every storage read when
//    Options::verify_crc is set (the default).
//  - pickle: a small stack machine that runs the opcodes torch.save's state
//    dict pickles use (protocols 2 to 5) and resolves only the globals
//    collections.OrderedDict, torch._utils._rebuild_tensor_v2,
//    torch._utils._rebuild_parameter and the storage types
//    torch.{Float,Double,Half,BFloat16,Long,Int,Short,Char,Byte,Bool}Storage.
//    Nothing is ever imported or called: any other global, any other opcode,
//    a malformed argument, a missing storage or a tensor reaching outside its
//    storage is a TorchCheckpointError naming the file, the pickle byte
//    offset and what was wrong.
//
// Result: the top-level dict's tensors in pickle order. Non-tensor values of
// the top-level dict (ints, strings, nested dicts, ...) are skipped and
// listed in skipped(); the state dict's "_metadata" attribute (per-module
// {"version": n} dicts) is kept in module_metadata().
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
#include <utility>
#include <vector>

namespace cadenza::torch_checkpoint {

class TorchCheckpointError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class DType : uint8_t { F32, F64, F16, BF16, I64, I32, I16, I8, U8, BOOL };

size_t dtype_size(DType dtype);         // bytes per element
const char* dtype_name(DType dtype);    // "F32", "BF16", ...
bool is_floating_point(DType dtype);    // F32, F64, F16, BF16

using Shape = std::vector<int64_t>;
std::string shape_string(const Shape& shape);  // "[2, 3]"

// Exact conversions (every f16 / bf16 value is a float32 value).
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);

// Resource limits of one load. Every one is checked before the memory it
// guards is taken, so a hostile file costs at most about these amounts.
struct Options {
    bool verify_crc = true;                         // CRC-32 of each storage entry read (data.pkl always)
    uint64_t max_pickle_bytes = 256ull << 20;       // size of data.pkl
    size_t max_zip_entries = 1u << 20;
    size_t max_stack = 1u << 20;                    // pickle stack depth
    size_t max_marks = 1024;                        // nested MARKs (nesting depth)
    size_t max_memo = 1u << 22;                     // memo entries
    size_t max_objects = 1u << 22;                  // pickle values created
    size_t max_ndim = 64;                           // tensor dimensions
    // A tensor may have more elements than its storage only through zero or
    // overlapping strides (expanded views); it may then have at most this
    // many, so that reading it stays bounded.
    uint64_t max_expanded_elements = 1ull << 28;
};

struct TensorEntry {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    Shape strides;                  // in elements, one per dimension, >= 0
    int64_t storage_offset = 0;     // in elements
    const uint8_t* storage = nullptr;  // first byte of the storage in the mapping (no alignment guaranteed)
    uint64_t storage_elements = 0;  // elements of the storage (the persistent id's numel)
    std::string storage_key;        // the key of "<archive>/data/<key>"
    bool requires_grad = false;
    bool is_parameter = false;      // rebuilt through torch._utils._rebuild_parameter

    uint64_t element_count() const;
    bool is_contiguous() const;     // row-major with no gaps
    // The first element's bytes (storage + storage_offset * element size).
    const uint8_t* data() const;
};

// A top-level entry whose value is not a tensor.
struct SkippedEntry {
    std::string name;
    std::string kind;  // "int", "float", "str", "bool", "None", "dict", "list", "tuple", "bytes", ...
};

// One module's entry of the state dict's _metadata: {"version": 1} -> {"version", 1}.
struct ModuleMetadata {
    std::string module;  // "" for the root module, "encoder.model.0", ...
    std::vector<std::pair<std::string, int64_t>> values;
};

// What the pickle used: for tests and diagnostics.
struct PickleStats {
    std::map<std::string, uint64_t> opcodes;  // opcode name -> count
    std::map<std::string, uint64_t> globals;  // "module.name" -> count
    int protocol = 0;
};

// A loaded checkpoint. Move-only; the mapping lives as long as the object
// and every TensorEntry::storage points into it.
class Checkpoint {
public:
    static Checkpoint open(const std::filesystem::path& path, const Options& options = {});
    // The same from bytes in memory (kept by the object); `name` stands for
    // the path in messages.
    static Checkpoint from_bytes(std::vector<uint8_t> bytes, const std::string& name,
                                 const Options& options = {});
    // The same over bytes the caller owns; they must outlive the object.
    static Checkpoint borrow(const uint8_t* data, size_t size, const std::string& name, const Options& options = {});

    Checkpoint(Checkpoint&& other) noexcept;
    Checkpoint& operator=(Checkpoint&& other) noexcept;
    Checkpoint(const Checkpoint&) = delete;
    Checkpoint& operator=(const Checkpoint&) = delete;
    ~Checkpoint();

    const std::string& path() const { return path_; }
    const std::string& archive_name() const { return archive_; }    // the entries' folder
    const std::string& format_version() const { return version_; }  // "<archive>/version", trimmed; "" if absent

    // Tensors in the order of the pickled dict.
    const std::vector<TensorEntry>& tensors() const { return tensors_; }
    std::vector<std::string> names() const;  // in order
    bool contains(const std::string& name) const { return index_.count(name) != 0; }
    // Throws when there is no such tensor.
    const TensorEntry& tensor(const std::string& name) const;
    // Also throws when the shape differs from `expected` (-1 matches any size).
    const TensorEntry& tensor(const std::string& name, const Shape& expected) const;

    const std::vector<SkippedEntry>& skipped() const { return skipped_; }
    const std::vector<ModuleMetadata>& module_metadata() const { return metadata_; }
    const PickleStats& pickle_stats() const { return stats_; }

    // Floating-point tensors (F32, F64, F16, BF16) as contiguous row-major
    // float32, honouring strides and storage offset.
    std::vector<float> read_f32(const std::string& name) const;
    std::vector<float> read_f32(const std::string& name, const Shape& expected) const;
    std::vector<float> read_f32(const TensorEntry& tensor) const;
    // Integer and BOOL tensors as contiguous row-major int64.
    std::vector<int64_t> read_i64(const std::string& name) const;
    std::vector<int64_t> read_i64(const TensorEntry& tensor) const;

    // "<path>" or "<path>: tensor 'x'", the start of this file's messages.
    std::string where(const std::string& tensor = {}) const;

private:
    Checkpoint() = default;
    void load(const Options& options);
    void release() noexcept;

    std::string path_;
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    bool mapped_ = false;           // data_ is an mmap to unmap
    std::vector<uint8_t> owned_;    // from_bytes: the bytes
    std::string archive_;
    std::string version_;
    std::vector<TensorEntry> tensors_;
    std::unordered_map<std::string, size_t> index_;
    std::vector<SkippedEntry> skipped_;
    std::vector<ModuleMetadata> metadata_;
    PickleStats stats_;
};

// CRC-32 (IEEE, as zip uses), continuing from `crc` (0 to start).
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);

}  // namespace cadenza::torch_checkpoint
