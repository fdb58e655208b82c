#include "torch_checkpoint.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>

#include "pickle_machine.h"
#include "zip_archive.h"

namespace cadenza::torch_checkpoint {
namespace {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559, "float32 required");

bool little_endian_host() {
    const uint16_t probe = 1;
    uint8_t first;
    std::memcpy(&first, &probe, 1);
    return first == 1;
}

template <typename T>
T read_as(const uint8_t* p) {
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
}

// Calls visit(element index in the storage) for each element of `t` in
// row-major order. The load checked that every index lies in the storage.
template <typename Visit>
void for_each_element(const TensorEntry& t, Visit&& visit) {
    const uint64_t count = t.element_count();
    if (count == 0) return;
    if (t.is_contiguous()) {
        for (uint64_t k = 0; k < count; ++k) visit(static_cast<uint64_t>(t.storage_offset) + k);
        return;
    }
    const size_t ndim = t.shape.size();
    std::vector<int64_t> counter(ndim, 0);
    uint64_t index = static_cast<uint64_t>(t.storage_offset);
    for (uint64_t k = 0; k < count; ++k) {
        visit(index);
        for (size_t d = ndim; d-- > 0;) {
            if (++counter[d] < t.shape[d]) {
                index += static_cast<uint64_t>(t.strides[d]);
                break;
            }
            index -= static_cast<uint64_t>(t.strides[d]) * static_cast<uint64_t>(t.shape[d] - 1);
            counter[d] = 0;
        }
    }
}

}  // namespace

size_t dtype_size(DType dtype) {
    switch (dtype) {
    case DType::F64:
    case DType::I64: return 8;
    case DType::F32:
    case DType::I32: return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16: return 2;
    case DType::I8:
    case DType::U8:
    case DType::BOOL: return 1;
    }
    return 1;
}

const char* dtype_name(DType dtype) {
    switch (dtype) {
    case DType::F32: return "F32";
    case DType::F64: return "F64";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
    case DType::I16: return "I16";
    case DType::I8: return "I8";
    case DType::U8: return "U8";
    case DType::BOOL: return "BOOL";
    }
    return "?";
}

bool is_floating_point(DType dtype) {
    return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 || dtype == DType::BF16;
}

std::string shape_string(const Shape& shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

float f16_to_f32(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1F;
    uint32_t mantissa = bits & 0x3FF;
    uint32_t out;
    if (exponent == 0x1F) {
        out = sign | 0x7F800000u | (mantissa << 13);
    } else if (exponent != 0) {
        out = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        out = sign;
    } else {
        // Subnormal: normalise.
        int shift = 0;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            ++shift;
        }
        mantissa &= 0x3FF;
        out = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mantissa << 13);
    }
    float value;
    std::memcpy(&value, &out, 4);
    return value;
}

float bf16_to_f32(uint16_t bits) {
    const uint32_t out = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &out, 4);
    return value;
}

uint64_t TensorEntry::element_count() const {
    uint64_t count = 1;
    for (const int64_t n : shape) count *= static_cast<uint64_t>(n);
    return count;
}

bool TensorEntry::is_contiguous() const {
    int64_t expected = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        if (shape[d] == 1) continue;  // any stride is fine for a size-1 dimension
        if (strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

const uint8_t* TensorEntry::data() const {
    return storage + static_cast<uint64_t>(storage_offset) * dtype_size(dtype);
}

Checkpoint Checkpoint::open(const std::filesystem::path& path, const Options& options) {
    Checkpoint checkpoint;
    checkpoint.path_ = path.string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw TorchCheckpointError(checkpoint.path_ + ": cannot open: " + std::strerror(errno));
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        const int error = errno;
        ::close(fd);
        throw TorchCheckpointError(checkpoint.path_ + ": cannot stat: " + std::strerror(error));
    }
    if (!S_ISREG(info.st_mode)) {
        ::close(fd);
        throw TorchCheckpointError(checkpoint.path_ + ": not a regular file");
    }
    const size_t size = static_cast<size_t>(info.st_size);
    if (size == 0) {
        ::close(fd);
        throw TorchCheckpointError(checkpoint.path_ + ": empty file, not a torch.save archive");
    }
    void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int error = errno;
    ::close(fd);
    if (mapping == MAP_FAILED) throw TorchCheckpointError(checkpoint.path_ + ": cannot map: " + std::strerror(error));
    checkpoint.data_ = static_cast<const uint8_t*>(mapping);
    checkpoint.size_ = size;
    checkpoint.mapped_ = true;
    checkpoint.load(options);
    return checkpoint;
}

Checkpoint Checkpoint::from_bytes(std::vector<uint8_t> bytes, const std::string& name, const Options& options) {
    Checkpoint checkpoint;
    checkpoint.path_ = name;
    checkpoint.owned_ = std::move(bytes);
    checkpoint.data_ = checkpoint.owned_.data();
    checkpoint.size_ = checkpoint.owned_.size();
    checkpoint.load(options);
    return checkpoint;
}

Checkpoint Checkpoint::borrow(const uint8_t* data, size_t size, const std::string& name, const Options& options) {
    Checkpoint checkpoint;
    checkpoint.path_ = name;
    checkpoint.data_ = data;
    checkpoint.size_ = data ? size : 0;
    checkpoint.load(options);
    return checkpoint;
}

Checkpoint::Checkpoint(Checkpoint&& other) noexcept { *this = std::move(other); }

Checkpoint& Checkpoint::operator=(Checkpoint&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        data_ = other.data_;
        size_ = other.size_;
        mapped_ = other.mapped_;
        owned_ = std::move(other.owned_);  // the heap buffer moves, pointers into it stay valid
        archive_ = std::move(other.archive_);
        version_ = std::move(other.version_);
        tensors_ = std::move(other.tensors_);
        index_ = std::move(other.index_);
        skipped_ = std::move(other.skipped_);
        metadata_ = std::move(other.metadata_);
        stats_ = std::move(other.stats_);
        other.data_ = nullptr;
        other.size_ = 0;
        other.mapped_ = false;
    }
    return *this;
}

Checkpoint::~Checkpoint() { release(); }

void Checkpoint::release() noexcept {
    if (mapped_ && data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
    mapped_ = false;
}

std::string Checkpoint::where(const std::string& tensor) const {
    return tensor.empty() ? path_ : path_ + ": tensor '" + tensor + "'";
}

void Checkpoint::load(const Options& options) {
    if (!little_endian_host()) throw TorchCheckpointError(path_ + ": big-endian hosts are not supported");
    const detail::ZipArchive zip(data_, size_, path_, options.max_zip_entries);

    // The archive's folder: the one holding data.pkl; every entry lives in it.
    const detail::ZipEntry* pickle = nullptr;
    for (const auto& entry : zip.entries()) {
        const size_t slash = entry.name.find('/');
        if (slash != std::string::npos && slash > 0 && entry.name.compare(slash, std::string::npos, "/data.pkl") == 0) {
            if (pickle)
                throw TorchCheckpointError(path_ + ": two data.pkl entries ('" + pickle->name + "', '" + entry.name +
                                           "')");
            pickle = &entry;
        }
    }
    if (!pickle) {
        for (const auto& entry : zip.entries())
            if (entry.name.size() >= 13 && entry.name.compare(entry.name.size() - 13, 13, "constants.pkl") == 0)
                throw TorchCheckpointError(path_ + ": a TorchScript archive (torch.jit.save), not a torch.save "
                                                   "checkpoint");
        throw TorchCheckpointError(path_ + ": no '<archive>/data.pkl' entry: not a torch.save checkpoint");
    }
    archive_ = pickle->name.substr(0, pickle->name.size() - 9);
    const std::string prefix = archive_ + "/";
    for (const auto& entry : zip.entries())
        if (entry.name.compare(0, prefix.size(), prefix) != 0)
            throw TorchCheckpointError(path_ + ": entry '" + entry.name + "' is outside the archive folder '" +
                                       archive_ + "'");

    // Optional records: the format version (newer PyTorch: .data/version) and
    // the byte order (absent in older files, which are little-endian).
    for (const char* name : {"version", ".data/version"}) {
        const detail::ZipEntry* entry = zip.find(prefix + name);
        if (!entry || !version_.empty()) continue;
        zip.verify_crc(*entry);
        std::string text(reinterpret_cast<const char*>(zip.bytes(*entry)), std::min<uint64_t>(entry->size, 64));
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
            throw TorchCheckpointError(path_ + ": '" + entry->name + "' is not a version number");
        version_ = text;
    }
    if (const detail::ZipEntry* entry = zip.find(prefix + "byteorder")) {
        zip.verify_crc(*entry);
        const std::string text(reinterpret_cast<const char*>(zip.bytes(*entry)), std::min<uint64_t>(entry->size, 16));
        if (text != "little")
            throw TorchCheckpointError(path_ + ": byte order '" + (text == "big" ? text : std::string("?")) +
                                       "' is not supported (only little-endian checkpoints)");
    }

    if (pickle->size > options.max_pickle_bytes)
        throw TorchCheckpointError(path_ + ": '" + pickle->name + "' has " + std::to_string(pickle->size) +
                                   " bytes, more than the limit of " + std::to_string(options.max_pickle_bytes));
    zip.verify_crc(*pickle);

    const detail::StorageResolver resolve = [&](const std::string& key, DType dtype, uint64_t numel) {
        detail::ResolvedStorage out;
        const std::string name = prefix + "data/" + key;
        const detail::ZipEntry* entry = zip.find(name);
        if (!entry) {
            out.error = "storage '" + key + "' has no entry '" + name + "' in the archive";
            return out;
        }
        const uint64_t needed = numel * dtype_size(dtype);
        if (entry->size < needed) {
            out.error = "storage '" + key + "' declares " + std::to_string(numel) + " " + dtype_name(dtype) +
                        " elements (" + std::to_string(needed) + " bytes) but '" + name + "' has only " +
                        std::to_string(entry->size) + " bytes";
            return out;
        }
        if (options.verify_crc) zip.verify_crc(*entry);  // once per storage: the machine resolves each key once
        out.bytes = zip.bytes(*entry);
        return out;
    };
    detail::PickleOutput output =
        detail::run_state_dict_pickle(zip.bytes(*pickle), static_cast<size_t>(pickle->size),
                                      path_ + ": " + pickle->name, options, resolve);
    tensors_ = std::move(output.tensors);
    skipped_ = std::move(output.skipped);
    metadata_ = std::move(output.metadata);
    stats_ = std::move(output.stats);
    index_.clear();
    for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;  // names are unique (dict keys)
}

std::vector<std::string> Checkpoint::names() const {
    std::vector<std::string> out;
    out.reserve(tensors_.size());
    for (const auto& t : tensors_) out.push_back(t.name);
    return out;
}

const TensorEntry& Checkpoint::tensor(const std::string& name) const {
    const auto it = index_.find(name);
    if (it == index_.end()) throw TorchCheckpointError(where(name) + ": no such tensor in the checkpoint");
    return tensors_[it->second];
}

const TensorEntry& Checkpoint::tensor(const std::string& name, const Shape& expected) const {
    const TensorEntry& t = tensor(name);
    bool match = t.shape.size() == expected.size();
    for (size_t i = 0; match && i < expected.size(); ++i) match = expected[i] == -1 || expected[i] == t.shape[i];
    if (!match)
        throw TorchCheckpointError(where(name) + ": shape " + shape_string(t.shape) + ", expected " +
                                   shape_string(expected));
    return t;
}

std::vector<float> Checkpoint::read_f32(const std::string& name) const { return read_f32(tensor(name)); }

std::vector<float> Checkpoint::read_f32(const std::string& name, const Shape& expected) const {
    return read_f32(tensor(name, expected));
}

std::vector<float> Checkpoint::read_f32(const TensorEntry& t) const {
    if (!is_floating_point(t.dtype))
        throw TorchCheckpointError(where(t.name) + ": dtype " + dtype_name(t.dtype) + " is not a floating-point type");
    std::vector<float> out(static_cast<size_t>(t.element_count()));
    float* o = out.data();
    const uint8_t* s = t.storage;
    switch (t.dtype) {
    case DType::F32:
        if (t.is_contiguous() && !out.empty()) {
            std::memcpy(o, t.data(), out.size() * 4);
            break;
        }
        for_each_element(t, [&](uint64_t i) { *o++ = read_as<float>(s + 4 * i); });
        break;
    case DType::F64: for_each_element(t, [&](uint64_t i) { *o++ = static_cast<float>(read_as<double>(s + 8 * i)); }); break;
    case DType::F16: for_each_element(t, [&](uint64_t i) { *o++ = f16_to_f32(read_as<uint16_t>(s + 2 * i)); }); break;
    case DType::BF16: for_each_element(t, [&](uint64_t i) { *o++ = bf16_to_f32(read_as<uint16_t>(s + 2 * i)); }); break;
    default: break;
    }
    return out;
}

std::vector<int64_t> Checkpoint::read_i64(const std::string& name) const { return read_i64(tensor(name)); }

std::vector<int64_t> Checkpoint::read_i64(const TensorEntry& t) const {
    if (is_floating_point(t.dtype))
        throw TorchCheckpointError(where(t.name) + ": dtype " + dtype_name(t.dtype) + " is not an integer type");
    std::vector<int64_t> out(static_cast<size_t>(t.element_count()));
    int64_t* o = out.data();
    const uint8_t* s = t.storage;
    switch (t.dtype) {
    case DType::I64: for_each_element(t, [&](uint64_t i) { *o++ = read_as<int64_t>(s + 8 * i); }); break;
    case DType::I32: for_each_element(t, [&](uint64_t i) { *o++ = read_as<int32_t>(s + 4 * i); }); break;
    case DType::I16: for_each_element(t, [&](uint64_t i) { *o++ = read_as<int16_t>(s + 2 * i); }); break;
    case DType::I8: for_each_element(t, [&](uint64_t i) { *o++ = read_as<int8_t>(s + i); }); break;
    case DType::U8: for_each_element(t, [&](uint64_t i) { *o++ = s[i]; }); break;
    case DType::BOOL: for_each_element(t, [&](uint64_t i) { *o++ = s[i] != 0; }); break;
    default: break;
    }
    return out;
}

}  // namespace cadenza::torch_checkpoint
