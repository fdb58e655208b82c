#include "safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "replacing_file.h"
#include "strict_json.h"

namespace cadenza::safetensors {
namespace {

using json = nlohmann::json;

// The reference implementation refuses headers above 100 MB.
constexpr uint64_t max_header_size = 100'000'000;

struct DTypeEntry {
    DType dtype;
    const char* name;
    size_t size;
};

constexpr DTypeEntry dtype_table[] = {
    {DType::BOOL, "BOOL", 1}, {DType::U8, "U8", 1},   {DType::I8, "I8", 1},
    {DType::U16, "U16", 2},   {DType::I16, "I16", 2}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::U32, "U32", 4}, {DType::I32, "I32", 4},
    {DType::F32, "F32", 4},   {DType::U64, "U64", 8}, {DType::I64, "I64", 8},
    {DType::F64, "F64", 8},   {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
};

const DTypeEntry& entry_of(DType dtype) {
    for (const auto& entry : dtype_table)
        if (entry.dtype == dtype) return entry;
    throw Error("unknown safetensors dtype enumerator");
}

uint64_t read_le64(const uint8_t* p) {
    uint64_t value = 0;
    for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
    return value;
}

template <typename T>
T load(const uint8_t* p) {
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
}

std::string quote_name(const std::string& text) { return "'" + text + "'"; }

// Non-negative JSON integer, or nullopt.
std::optional<uint64_t> as_unsigned(const json& value) {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (value.is_number_integer()) {
        const int64_t v = value.get<int64_t>();
        if (v >= 0) return static_cast<uint64_t>(v);
    }
    return std::nullopt;
}

// No duplicate keys (the format does not say which entry would win), in linear time.
json parse_json(const char* text, size_t size, const std::string& where) {
    try {
        return json_format::parse_strict_json(text, text + size, where);
    } catch (const json_format::StrictJsonError& error) {
        throw Error(error.what());
    }
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

size_t dtype_size(DType dtype) { return entry_of(dtype).size; }
const char* dtype_name(DType dtype) { return entry_of(dtype).name; }

std::optional<DType> dtype_from_name(const std::string& name) {
    for (const auto& entry : dtype_table)
        if (name == entry.name) return entry.dtype;
    return std::nullopt;
}

float f16_to_f32(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    const uint32_t mantissa = bits & 0x3ffu;
    uint32_t out;
    if (exponent == 0) {
        // Zero or subnormal: mantissa x 2^-24, exact in float32.
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    } else if (exponent == 0x1f) {
        out = sign | 0x7f800000u | (mantissa << 13);  // infinity, or NaN keeping its payload
    } else {
        out = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
    }
    float value;
    std::memcpy(&value, &out, sizeof(value));
    return value;
}

float bf16_to_f32(uint16_t bits) {
    const uint32_t out = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &out, sizeof(value));
    return value;
}

uint16_t f32_to_f16(float value) {
    uint32_t x;
    std::memcpy(&x, &value, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) {  // infinity or NaN
        if (x > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to infinity
    if (x < 0x38800000u) {                                              // below 2^-14: subnormal or zero
        if (x < 0x33000000u) return static_cast<uint16_t>(sign);         // below 2^-25: zero
        const uint32_t exponent = x >> 23;
        const uint32_t mantissa = (x & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126 - exponent;  // 14..24
        uint32_t result = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1);
        const uint32_t half = 1u << (shift - 1);
        if (rest > half || (rest == half && (result & 1u))) ++result;
        return static_cast<uint16_t>(sign | result);
    }
    const uint32_t exponent = (x >> 23) - 127 + 15;
    const uint32_t mantissa = x & 0x7fffffu;
    uint32_t result = (exponent << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // a carry moves into the exponent
    return static_cast<uint16_t>(sign | result);
}

uint16_t f32_to_bf16(float value) {
    uint32_t x;
    std::memcpy(&x, &value, sizeof(x));
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

std::string shape_string(const Shape& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

std::optional<uint64_t> element_count(const Shape& shape) {
    uint64_t count = 1;
    for (int64_t size : shape) {
        if (size < 0) return std::nullopt;
        const uint64_t s = static_cast<uint64_t>(size);
        if (s != 0 && count > std::numeric_limits<uint64_t>::max() / s) return std::nullopt;
        count *= s;
    }
    return count;
}

uint64_t TensorInfo::element_count() const { return safetensors::element_count(shape).value_or(0); }

// --------------------------------------------------------------------------
// File

File::File(const std::filesystem::path& path) : path_(path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(where() + ": cannot open: " + errno_text());
    struct stat status {};
    if (::fstat(fd, &status) != 0) {
        const std::string message = errno_text();
        ::close(fd);
        throw Error(where() + ": cannot stat: " + message);
    }
    if (!S_ISREG(status.st_mode)) {
        ::close(fd);
        throw Error(where() + ": not a regular file");
    }
    const uint64_t file_size = static_cast<uint64_t>(status.st_size);
    if (file_size < 8) {
        ::close(fd);
        throw Error(where() + ": too short to be a safetensors file (" + std::to_string(file_size) +
                    " bytes; the header length alone takes 8)");
    }
    void* mapped = ::mmap(nullptr, static_cast<size_t>(file_size), PROT_READ, MAP_PRIVATE, fd, 0);
    const std::string map_error = mapped == MAP_FAILED ? errno_text() : std::string();
    ::close(fd);
    if (mapped == MAP_FAILED) throw Error(where() + ": cannot map: " + map_error);
    mapping_ = static_cast<const uint8_t*>(mapped);
    mapping_size_ = static_cast<size_t>(file_size);
    try {
        const uint64_t header_size = read_le64(mapping_);
        if (header_size > file_size - 8)
            throw Error(where() + ": header length " + std::to_string(header_size) + " goes beyond the end of the file (" +
                        std::to_string(file_size) + " bytes, " + std::to_string(file_size - 8) +
                        " after the length field)");
        if (header_size > max_header_size)
            throw Error(where() + ": header length " + std::to_string(header_size) + " exceeds the limit of " +
                        std::to_string(max_header_size) + " bytes");
        if (header_size < 2) throw Error(where() + ": header of " + std::to_string(header_size) + " bytes is too short");
        data_section_ = mapping_ + 8 + header_size;
        parse_header(reinterpret_cast<const char*>(mapping_ + 8), static_cast<size_t>(header_size),
                     file_size - 8 - header_size);
    } catch (...) {
        unmap();
        throw;
    }
}

File::~File() { unmap(); }

File::File(File&& other) noexcept { *this = std::move(other); }

File& File::operator=(File&& other) noexcept {
    if (this != &other) {
        unmap();
        path_ = std::move(other.path_);
        mapping_ = std::exchange(other.mapping_, nullptr);
        mapping_size_ = std::exchange(other.mapping_size_, 0);
        data_section_ = std::exchange(other.data_section_, nullptr);
        metadata_ = std::move(other.metadata_);
        tensors_ = std::move(other.tensors_);
        index_ = std::move(other.index_);
    }
    return *this;
}

void File::unmap() noexcept {
    if (mapping_) ::munmap(const_cast<uint8_t*>(mapping_), mapping_size_);
    mapping_ = nullptr;
    mapping_size_ = 0;
    data_section_ = nullptr;
}

std::string File::where(const std::string& tensor) const {
    std::string text = path_.string();
    if (!tensor.empty()) text += ": tensor " + quote_name(tensor);
    return text;
}

void File::parse_header(const char* text, size_t size, uint64_t data_size) {
    if (text[0] != '{') throw Error(where() + ": the header is not a JSON object (it starts with '" +
                                    std::string(1, std::isprint(static_cast<unsigned char>(text[0])) ? text[0] : '?') +
                                    "')");
    const json header = parse_json(text, size, where() + ": header");
    if (!header.is_object()) throw Error(where() + ": the header is not a JSON object");
    for (auto item = header.begin(); item != header.end(); ++item) {
        const std::string& name = item.key();
        const json& value = item.value();
        if (name == "__metadata__") {
            if (!value.is_object()) throw Error(where() + ": __metadata__ is not an object");
            for (auto field = value.begin(); field != value.end(); ++field) {
                if (!field.value().is_string())
                    throw Error(where() + ": __metadata__ value " + quote_name(field.key()) + " is not a string");
                metadata_[field.key()] = field.value().get<std::string>();
            }
            continue;
        }
        const std::string at = where(name);
        if (name.empty()) throw Error(where() + ": a tensor has an empty name");
        if (!value.is_object()) throw Error(at + ": the entry is not an object");
        for (auto field = value.begin(); field != value.end(); ++field)
            if (field.key() != "dtype" && field.key() != "shape" && field.key() != "data_offsets")
                throw Error(at + ": unexpected field " + quote_name(field.key()));
        TensorInfo tensor;
        tensor.name = name;

        const auto dtype_field = value.find("dtype");
        if (dtype_field == value.end() || !dtype_field->is_string()) throw Error(at + ": missing or non-string dtype");
        const auto dtype = dtype_from_name(dtype_field->get<std::string>());
        if (!dtype) throw Error(at + ": unknown dtype " + quote_name(dtype_field->get<std::string>()));
        tensor.dtype = *dtype;

        const auto shape_field = value.find("shape");
        if (shape_field == value.end() || !shape_field->is_array()) throw Error(at + ": missing or non-array shape");
        for (const json& size_value : *shape_field) {
            const auto size_number = as_unsigned(size_value);
            if (!size_number || *size_number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                throw Error(at + ": bad shape " + shape_field->dump() + " (sizes must be non-negative integers)");
            tensor.shape.push_back(static_cast<int64_t>(*size_number));
        }
        const auto elements = element_count(tensor.shape);
        const uint64_t element_bytes = dtype_size(tensor.dtype);
        if (!elements || (*elements != 0 && element_bytes > std::numeric_limits<uint64_t>::max() / *elements))
            throw Error(at + ": bad shape " + shape_string(tensor.shape) + " (its size overflows)");

        const auto offsets = value.find("data_offsets");
        if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2)
            throw Error(at + ": data_offsets must be an array [begin, end]");
        const auto begin = as_unsigned((*offsets)[0]), end = as_unsigned((*offsets)[1]);
        if (!begin || !end || *begin > *end)
            throw Error(at + ": bad data_offsets " + offsets->dump() + " (need integers 0 <= begin <= end)");
        tensor.data_begin = *begin;
        tensor.data_end = *end;
        if (tensor.byte_size() != *elements * element_bytes)
            throw Error(at + ": data_offsets " + offsets->dump() + " hold " + std::to_string(tensor.byte_size()) +
                        " bytes, but shape " + shape_string(tensor.shape) + " of " + dtype_name(tensor.dtype) + " needs " +
                        std::to_string(*elements * element_bytes));
        if (tensor.data_end > data_size)
            throw Error(at + ": data_offsets " + offsets->dump() + " go beyond the data section (" +
                        std::to_string(data_size) + " bytes)");
        tensors_.push_back(std::move(tensor));
    }
    std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
        return a.data_begin != b.data_begin ? a.data_begin < b.data_begin : a.data_end < b.data_end;
    });
    for (size_t i = 1; i < tensors_.size(); ++i) {
        const TensorInfo& previous = tensors_[i - 1];
        const TensorInfo& next = tensors_[i];
        if (next.data_begin < previous.data_end)
            throw Error(where() + ": tensors " + quote_name(previous.name) + " [" + std::to_string(previous.data_begin) +
                        ", " + std::to_string(previous.data_end) + ") and " + quote_name(next.name) + " [" +
                        std::to_string(next.data_begin) + ", " + std::to_string(next.data_end) + ") overlap");
    }
    for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

bool File::contains(const std::string& name) const { return index_.count(name) != 0; }

const TensorInfo& File::info(const std::string& name) const {
    const auto found = index_.find(name);
    if (found == index_.end()) throw Error(where() + ": no tensor named " + quote_name(name));
    return tensors_[found->second];
}

const TensorInfo& File::info(const std::string& name, const Shape& expected) const {
    const TensorInfo& tensor = info(name);
    bool matches = expected.size() == tensor.shape.size();
    for (size_t i = 0; matches && i < expected.size(); ++i)
        matches = expected[i] < 0 || expected[i] == tensor.shape[i];
    if (!matches)
        throw Error(where(name) + ": shape is " + shape_string(tensor.shape) + ", expected " + shape_string(expected) +
                    " (-1: any size)");
    return tensor;
}

const uint8_t* File::data(const TensorInfo& tensor) const { return data_section_ + tensor.data_begin; }

namespace {

void convert_to_f32(const File& file, const TensorInfo& tensor, uint64_t first, uint64_t count, float* out) {
    if (count == 0) return;  // `out` may be null (an empty vector's data), which memcpy must not get
    const uint8_t* p = file.data(tensor) + first * dtype_size(tensor.dtype);
    switch (tensor.dtype) {
        case DType::F32: std::memcpy(out, p, count * sizeof(float)); return;
        case DType::F16:
            for (uint64_t i = 0; i < count; ++i) out[i] = f16_to_f32(load<uint16_t>(p + 2 * i));
            return;
        case DType::BF16:
            for (uint64_t i = 0; i < count; ++i) out[i] = bf16_to_f32(load<uint16_t>(p + 2 * i));
            return;
        case DType::F64:
            for (uint64_t i = 0; i < count; ++i) out[i] = static_cast<float>(load<double>(p + 8 * i));
            return;
        default:
            throw Error(file.where(tensor.name) + ": dtype " + dtype_name(tensor.dtype) +
                        " cannot be read as float32 (F32, F16, BF16 or F64 can)");
    }
}

}  // namespace

std::vector<float> File::read_f32(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    std::vector<float> values(tensor.element_count());
    convert_to_f32(*this, tensor, 0, values.size(), values.data());
    return values;
}

std::vector<float> File::read_f32(const std::string& name, const Shape& expected) const {
    info(name, expected);
    return read_f32(name);
}

void File::read_f32_rows(const std::string& name, int64_t row_begin, int64_t row_end, float* out) const {
    const TensorInfo& tensor = info(name);
    if (tensor.shape.empty()) throw Error(where(name) + ": a scalar has no rows");
    if (row_begin < 0 || row_begin > row_end || row_end > tensor.shape[0])
        throw Error(where(name) + ": rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                    ") are outside its " + std::to_string(tensor.shape[0]) + " rows");
    const uint64_t row_size = *element_count(Shape(tensor.shape.begin() + 1, tensor.shape.end()));
    convert_to_f32(*this, tensor, static_cast<uint64_t>(row_begin) * row_size,
                   static_cast<uint64_t>(row_end - row_begin) * row_size, out);
}

std::vector<int64_t> File::read_i64(const std::string& name) const {
    const TensorInfo& tensor = info(name);
    const uint64_t count = tensor.element_count();
    const uint8_t* p = data(tensor);
    std::vector<int64_t> values(count);
    for (uint64_t i = 0; i < count; ++i) {
        switch (tensor.dtype) {
            case DType::BOOL:
            case DType::U8: values[i] = p[i]; break;
            case DType::I8: values[i] = load<int8_t>(p + i); break;
            case DType::U16: values[i] = load<uint16_t>(p + 2 * i); break;
            case DType::I16: values[i] = load<int16_t>(p + 2 * i); break;
            case DType::U32: values[i] = load<uint32_t>(p + 4 * i); break;
            case DType::I32: values[i] = load<int32_t>(p + 4 * i); break;
            case DType::I64: values[i] = load<int64_t>(p + 8 * i); break;
            case DType::U64: {
                const uint64_t v = load<uint64_t>(p + 8 * i);
                if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
                    throw Error(where(name) + ": element " + std::to_string(i) + " does not fit in int64");
                values[i] = static_cast<int64_t>(v);
                break;
            }
            default:
                throw Error(where(name) + ": dtype " + dtype_name(tensor.dtype) + " is not an integer type");
        }
    }
    return values;
}

std::vector<int64_t> File::read_i64(const std::string& name, const Shape& expected) const {
    info(name, expected);
    return read_i64(name);
}

// --------------------------------------------------------------------------
// Checkpoint

Checkpoint Checkpoint::open(const std::filesystem::path& path) {
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
        if (std::filesystem::exists(path / "model.safetensors.index.json"))
            return open_index(path / "model.safetensors.index.json");
        if (std::filesystem::exists(path / "model.safetensors")) return open(path / "model.safetensors");
        throw Error(path.string() + ": the directory holds neither model.safetensors.index.json nor model.safetensors");
    }
    if (path.extension() == ".json") return open_index(path);
    Checkpoint checkpoint;
    checkpoint.path_ = path;
    checkpoint.shards_.push_back(std::make_unique<File>(path));
    const File& file = *checkpoint.shards_.front();
    checkpoint.metadata_ = file.metadata();
    for (const auto& tensor : file.tensors()) checkpoint.owner_.emplace(tensor.name, 0);
    return checkpoint;
}

Checkpoint Checkpoint::open_index(const std::filesystem::path& index_path) {
    const std::string where = index_path.string();
    std::ifstream stream(index_path, std::ios::binary);
    if (!stream) throw Error(where + ": cannot open: " + errno_text());
    std::ostringstream text;
    text << stream.rdbuf();
    const std::string content = text.str();
    const json index = parse_json(content.data(), content.size(), where);
    if (!index.is_object()) throw Error(where + ": the index is not a JSON object");
    const auto weight_map = index.find("weight_map");
    if (weight_map == index.end() || !weight_map->is_object())
        throw Error(where + ": the index has no \"weight_map\" object");

    Checkpoint checkpoint;
    checkpoint.path_ = index_path;
    if (const auto metadata = index.find("metadata"); metadata != index.end()) {
        if (!metadata->is_object()) throw Error(where + ": \"metadata\" is not an object");
        for (auto item = metadata->begin(); item != metadata->end(); ++item)
            checkpoint.metadata_[item.key()] =
                item.value().is_string() ? item.value().get<std::string>() : item.value().dump();
    }
    const std::filesystem::path directory = index_path.parent_path();
    std::map<std::string, size_t> shard_of_file;
    for (auto item = weight_map->begin(); item != weight_map->end(); ++item) {
        const std::string& tensor = item.key();
        if (!item.value().is_string())
            throw Error(where + ": weight_map entry " + quote_name(tensor) + " is not a file name");
        const std::string shard_name = item.value().get<std::string>();
        const std::filesystem::path relative(shard_name);
        bool escapes = relative.empty() || relative.is_absolute();
        for (const auto& part : relative) escapes = escapes || part == "..";
        if (escapes)
            throw Error(where + ": weight_map entry " + quote_name(tensor) + " names shard " + quote_name(shard_name) +
                        ", which is not a relative path inside the checkpoint's directory");
        auto found = shard_of_file.find(shard_name);
        if (found == shard_of_file.end()) {
            const std::filesystem::path shard_path = directory / relative;
            if (!std::filesystem::exists(shard_path))
                throw Error(where + ": shard " + quote_name(shard_name) + " (for tensor " + quote_name(tensor) +
                            ") does not exist at " + shard_path.string());
            checkpoint.shards_.push_back(std::make_unique<File>(shard_path));
            found = shard_of_file.emplace(shard_name, checkpoint.shards_.size() - 1).first;
        }
        const File& shard = *checkpoint.shards_[found->second];
        if (!shard.contains(tensor))
            throw Error(where + ": tensor " + quote_name(tensor) + " is mapped to shard " + quote_name(shard_name) +
                        ", which does not hold it");
        checkpoint.owner_.emplace(tensor, found->second);
    }
    return checkpoint;
}

std::vector<std::string> Checkpoint::names() const {
    std::vector<std::string> names;
    names.reserve(owner_.size());
    for (const auto& item : owner_) names.push_back(item.first);
    std::sort(names.begin(), names.end());
    return names;
}

const File& Checkpoint::file_of(const std::string& name) const {
    const auto found = owner_.find(name);
    if (found == owner_.end()) throw Error(path_.string() + ": no tensor named " + quote_name(name));
    return *shards_[found->second];
}

// --------------------------------------------------------------------------
// Writer

void Writer::set_metadata(const std::string& key, const std::string& value) { metadata_[key] = value; }

void Writer::add(const std::string& name, DType dtype, const Shape& shape, const void* data, size_t byte_count) {
    if (name.empty() || name == "__metadata__") throw Error("safetensors writer: invalid tensor name " + quote_name(name));
    if (names_.count(name)) throw Error("safetensors writer: tensor " + quote_name(name) + " added twice");
    const auto elements = element_count(shape);
    if (!elements) throw Error("safetensors writer: tensor " + quote_name(name) + ": bad shape " + shape_string(shape));
    if (*elements * dtype_size(dtype) != byte_count)
        throw Error("safetensors writer: tensor " + quote_name(name) + ": " + std::to_string(byte_count) +
                    " bytes given, shape " + shape_string(shape) + " of " + dtype_name(dtype) + " needs " +
                    std::to_string(*elements * dtype_size(dtype)));
    Pending pending{name, dtype, shape, (data_size_ + 7) / 8 * 8, {}};
    const auto* bytes = static_cast<const uint8_t*>(data);
    pending.bytes.assign(bytes, bytes + byte_count);
    data_size_ = pending.begin + byte_count;
    names_.emplace(name, tensors_.size());
    tensors_.push_back(std::move(pending));
}

void Writer::add_f32(const std::string& name, const Shape& shape, const float* values) {
    const auto elements = element_count(shape).value_or(0);
    add(name, DType::F32, shape, values, elements * sizeof(float));
}

void Writer::add_f16(const std::string& name, const Shape& shape, const float* values) {
    std::vector<uint16_t> bits(element_count(shape).value_or(0));
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = f32_to_f16(values[i]);
    add(name, DType::F16, shape, bits.data(), bits.size() * 2);
}

void Writer::add_bf16(const std::string& name, const Shape& shape, const float* values) {
    std::vector<uint16_t> bits(element_count(shape).value_or(0));
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = f32_to_bf16(values[i]);
    add(name, DType::BF16, shape, bits.data(), bits.size() * 2);
}

void Writer::add_i32(const std::string& name, const Shape& shape, const int32_t* values) {
    add(name, DType::I32, shape, values, element_count(shape).value_or(0) * sizeof(int32_t));
}

void Writer::add_i64(const std::string& name, const Shape& shape, const int64_t* values) {
    add(name, DType::I64, shape, values, element_count(shape).value_or(0) * sizeof(int64_t));
}

std::string Writer::header() const {
    json header = json::object();
    if (!metadata_.empty()) header["__metadata__"] = metadata_;
    for (const auto& tensor : tensors_)
        header[tensor.name] = {{"dtype", dtype_name(tensor.dtype)},
                               {"shape", tensor.shape},
                               {"data_offsets", {tensor.begin, tensor.begin + tensor.bytes.size()}}};
    return header.dump();
}

void Writer::write(const std::filesystem::path& path) const {
    std::string text = header();
    text.append((8 - text.size() % 8) % 8, ' ');
    try {
        file_output::ReplacingFile output(path);
        std::ofstream out(output.write_path(), std::ios::binary | std::ios::trunc);
        if (!out) throw Error(path.string() + ": cannot write: " + errno_text());
        uint8_t length[8];
        for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
        out.write(reinterpret_cast<const char*>(length), 8);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        uint64_t position = 0;
        static const char zeros[8] = {};
        for (const auto& tensor : tensors_) {
            out.write(zeros, static_cast<std::streamsize>(tensor.begin - position));
            out.write(reinterpret_cast<const char*>(tensor.bytes.data()), static_cast<std::streamsize>(tensor.bytes.size()));
            position = tensor.begin + tensor.bytes.size();
        }
        out.flush();
        if (!out) throw Error(path.string() + ": write failed");
        out.close();
        output.commit();
    } catch (const file_output::OutputFileError& error) {
        throw Error(error.what());
    }
}

}  // namespace cadenza::safetensors
