#include "pickle_machine.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <cstring>
#include <deque>
#include <limits>
#include <sstream>
#include <string_view>
#include <unordered_map>

namespace cadenza::torch_checkpoint::detail {
namespace {

constexpr uint32_t no_object = std::numeric_limits<uint32_t>::max();

// Every opcode of pickle protocols 0 to 5, so that refusals can name them.
const char* opcode_name(uint8_t op) {
    switch (op) {
    case '(': return "MARK";
    case '.': return "STOP";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'F': return "FLOAT";
    case 'I': return "INT";
    case 'J': return "BININT";
    case 'K': return "BININT1";
    case 'L': return "LONG";
    case 'M': return "BININT2";
    case 'N': return "NONE";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";
    case 'S': return "STRING";
    case 'T': return "BINSTRING";
    case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";
    case 'X': return "BINUNICODE";
    case 'a': return "APPEND";
    case 'b': return "BUILD";
    case 'c': return "GLOBAL";
    case 'd': return "DICT";
    case '}': return "EMPTY_DICT";
    case 'e': return "APPENDS";
    case 'g': return "GET";
    case 'h': return "BINGET";
    case 'i': return "INST";
    case 'j': return "LONG_BINGET";
    case 'l': return "LIST";
    case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";
    case 'p': return "PUT";
    case 'q': return "BINPUT";
    case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";
    case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";
    case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";
    case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";
    case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";
    case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";
    case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";
    case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";
    case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";
    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
    }
}

// Text from the file, safe to put in a message: printable ASCII kept,
// everything else as \xNN, at most `limit` bytes shown.
std::string printable(std::string_view text, size_t limit = 120) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < limit; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += static_cast<char>(c);
        } else {
            static const char digits[] = "0123456789abcdef";
            out += "\\x";
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    if (text.size() > limit) out += "...";
    return out;
}

bool valid_utf8(const uint8_t* p, size_t n) {
    size_t i = 0;
    while (i < n) {
        const uint8_t c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        size_t length;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            length = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            length = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            length = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (n - i < length) return false;
        for (size_t k = 1; k < length; ++k) {
            if ((p[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        if ((length == 2 && cp < 0x80) || (length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += length;
    }
    return true;
}

enum class Kind : uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
enum class GlobalId : uint8_t { OrderedDict, RebuildTensorV2, RebuildParameter, StorageType };

const char* kind_name(Kind kind) {
    switch (kind) {
    case Kind::None: return "None";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::Str: return "str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Dict: return "dict";
    case Kind::Global: return "global";
    case Kind::Storage: return "storage";
    case Kind::Tensor: return "tensor";
    }
    return "?";
}

struct Obj {
    Kind kind = Kind::None;
    uint8_t sub = 0;          // Global: GlobalId; Bool: value
    uint32_t ref = no_object;  // Str/Bytes: interned string; containers; storages; tensors
    int64_t i = 0;            // Int value; Global StorageType: DType
    double f = 0;             // Float value
};

// A dict key's identity: strings by their interned index, ints by value.
struct KeyId {
    uint8_t tag;
    int64_t value;
    bool operator==(const KeyId& other) const { return tag == other.tag && value == other.value; }
};
struct KeyIdHash {
    size_t operator()(const KeyId& k) const {
        return std::hash<int64_t>()(k.value) * 31u + k.tag;
    }
};

struct Container {
    std::vector<uint32_t> items;  // tuple/list: values; dict: key0, value0, key1, value1, ...
    // dict: key -> position of the key in items; allocated with the first key
    std::unique_ptr<std::unordered_map<KeyId, uint32_t, KeyIdHash>> index;
    uint32_t state = no_object;   // OrderedDict: the state BUILD gave it
    bool ordered = false;         // dict: an OrderedDict
};

struct StorageRec {
    DType dtype;
    uint32_t key;  // interned string
    uint64_t numel;
    const uint8_t* bytes;
};

struct TensorRec {
    DType dtype;
    Shape shape;
    Shape strides;
    int64_t offset;
    uint32_t storage;
    bool requires_grad;
    bool is_parameter;
};

struct GlobalSpec {
    const char* module;
    const char* name;
    GlobalId id;
    DType dtype;
};

constexpr GlobalSpec allowed_globals[] = {
    {"collections", "OrderedDict", GlobalId::OrderedDict, DType::F32},
    {"torch._utils", "_rebuild_tensor_v2", GlobalId::RebuildTensorV2, DType::F32},
    {"torch._utils", "_rebuild_parameter", GlobalId::RebuildParameter, DType::F32},
    {"torch", "FloatStorage", GlobalId::StorageType, DType::F32},
    {"torch", "DoubleStorage", GlobalId::StorageType, DType::F64},
    {"torch", "HalfStorage", GlobalId::StorageType, DType::F16},
    {"torch", "BFloat16Storage", GlobalId::StorageType, DType::BF16},
    {"torch", "LongStorage", GlobalId::StorageType, DType::I64},
    {"torch", "IntStorage", GlobalId::StorageType, DType::I32},
    {"torch", "ShortStorage", GlobalId::StorageType, DType::I16},
    {"torch", "CharStorage", GlobalId::StorageType, DType::I8},
    {"torch", "ByteStorage", GlobalId::StorageType, DType::U8},
    {"torch", "BoolStorage", GlobalId::StorageType, DType::BOOL},
};

class Machine {
public:
    Machine(const uint8_t* data, size_t size, const std::string& where, const Options& options,
            const StorageResolver& resolve)
        : data_(data), size_(size), where_(where), options_(options), resolve_(resolve) {
        none_ = make(Kind::None);
        false_ = make(Kind::Bool);
        true_ = make(Kind::Bool);
        objects_[true_].sub = 1;
    }

    PickleOutput run();

private:
    [[noreturn]] void fail(const std::string& message) const {
        std::ostringstream out;
        out << where_ << " offset " << op_pos_;
        if (const char* name = opcode_name(op_)) out << " (" << name << ")";
        out << ": " << message;
        throw TorchCheckpointError(out.str());
    }

    // Reading the operands.
    const uint8_t* take(uint64_t n) {
        if (n > size_ - pos_)
            fail("truncated pickle: operand needs " + std::to_string(n) + " bytes, " + std::to_string(size_ - pos_) +
                 " left");
        const uint8_t* p = data_ + pos_;
        pos_ += static_cast<size_t>(n);
        return p;
    }
    uint8_t u8() { return *take(1); }
    uint16_t u16() {
        const uint8_t* p = take(2);
        return static_cast<uint16_t>(p[0] | (p[1] << 8));
    }
    uint32_t u32() {
        const uint8_t* p = take(4);
        return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) | (static_cast<uint32_t>(p[2]) << 16) |
               (static_cast<uint32_t>(p[3]) << 24);
    }
    uint64_t u64() {
        const uint64_t lo = u32();
        return lo | (static_cast<uint64_t>(u32()) << 32);
    }
    std::string_view line() {
        const size_t limit = std::min<size_t>(size_ - pos_, 1024);
        const void* end = std::memchr(data_ + pos_, '\n', limit);
        if (!end) fail("GLOBAL operand is not a newline-terminated line of at most 1024 bytes");
        const size_t n = static_cast<size_t>(static_cast<const uint8_t*>(end) - (data_ + pos_));
        std::string_view text(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n + 1;
        return text;
    }

    // Values.
    uint32_t make(Kind kind) {
        if (objects_.size() >= options_.max_objects)
            fail("more than " + std::to_string(options_.max_objects) + " pickle values (limit)");
        Obj obj;
        obj.kind = kind;
        objects_.push_back(obj);
        return static_cast<uint32_t>(objects_.size() - 1);
    }
    uint32_t make_int(int64_t value) {
        const uint32_t id = make(Kind::Int);
        objects_[id].i = value;
        return id;
    }
    uint32_t make_string(Kind kind, const uint8_t* p, uint64_t n) {
        if (kind == Kind::Str && !valid_utf8(p, static_cast<size_t>(n))) fail("string is not valid UTF-8");
        const uint32_t id = make(kind);
        const std::string_view view(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
        auto& table = kind == Kind::Str ? str_intern_ : bytes_intern_;
        const auto it = table.find(view);
        if (it != table.end()) {
            objects_[id].ref = it->second;
        } else {
            strings_.emplace_back(view);
            const uint32_t index = static_cast<uint32_t>(strings_.size() - 1);
            table.emplace(std::string_view(strings_.back()), index);
            objects_[id].ref = index;
        }
        return id;
    }
    uint32_t make_container(Kind kind, std::vector<uint32_t> items = {}) {
        const uint32_t id = make(kind);
        containers_.emplace_back();
        containers_.back().items = std::move(items);
        objects_[id].ref = static_cast<uint32_t>(containers_.size() - 1);
        return id;
    }
    const Obj& obj(uint32_t id) const { return objects_[id]; }
    Container& container(uint32_t id) { return containers_[objects_[id].ref]; }
    const std::string& str(uint32_t id) const { return strings_[objects_[id].ref]; }
    bool is(uint32_t id, Kind kind) const { return objects_[id].kind == kind; }

    // The stack, in segments separated by marks as in Python's unpickler:
    // an opcode sees only the values above the latest mark.
    size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
    void push(uint32_t id) {
        if (stack_.size() >= options_.max_stack)
            fail("pickle stack deeper than " + std::to_string(options_.max_stack) + " (limit)");
        stack_.push_back(id);
    }
    uint32_t pop() {
        if (stack_.size() <= base()) fail("stack underflow");
        const uint32_t id = stack_.back();
        stack_.pop_back();
        return id;
    }
    uint32_t top() {
        if (stack_.size() <= base()) fail("stack underflow");
        return stack_.back();
    }
    std::vector<uint32_t> pop_mark() {
        if (marks_.empty()) fail("no MARK to pop to");
        const size_t mark = marks_.back();
        marks_.pop_back();
        std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
        stack_.resize(mark);
        return items;
    }
    void memo_put(uint64_t index) {
        const uint32_t value = top();
        if (index > std::numeric_limits<uint32_t>::max()) fail("memo index too large");
        const auto it = memo_.find(static_cast<uint32_t>(index));
        if (it != memo_.end()) {
            it->second = value;
            return;
        }
        if (memo_.size() >= options_.max_memo)
            fail("more than " + std::to_string(options_.max_memo) + " memo entries (limit)");
        memo_.emplace(static_cast<uint32_t>(index), value);
    }
    void memo_get(uint32_t index) {
        const auto it = memo_.find(index);
        if (it == memo_.end()) fail("memo has no entry " + std::to_string(index));
        push(it->second);
    }

    KeyId key_id(uint32_t key) {
        switch (obj(key).kind) {
        case Kind::Str: return {0, obj(key).ref};
        case Kind::Bytes: return {1, obj(key).ref};
        case Kind::Int: return {2, obj(key).i};
        default: fail(std::string("unsupported dict key type ") + kind_name(obj(key).kind));
        }
    }
    void set_item(uint32_t dict, uint32_t key, uint32_t value) {
        if (!is(dict, Kind::Dict)) fail(std::string("SETITEM on a ") + kind_name(obj(dict).kind) + ", not a dict");
        const KeyId id = key_id(key);
        Container& c = container(dict);
        if (!c.index) c.index = std::make_unique<std::unordered_map<KeyId, uint32_t, KeyIdHash>>();
        const auto it = c.index->find(id);
        if (it != c.index->end()) {
            c.items[it->second + 1] = value;  // Python semantics: replaced in place
            return;
        }
        c.index->emplace(id, static_cast<uint32_t>(c.items.size()));
        c.items.push_back(key);
        c.items.push_back(value);
    }

    void global(std::string_view module, std::string_view name);
    void persistent_load();
    void reduce();
    uint32_t rebuild_tensor(const std::vector<uint32_t>& args);
    uint32_t rebuild_parameter(const std::vector<uint32_t>& args);
    void build();
    int64_t int_arg(uint32_t id, const char* what) {
        if (!is(id, Kind::Int)) fail(std::string(what) + " must be an int, not " + kind_name(obj(id).kind));
        return obj(id).i;
    }
    bool bool_arg(uint32_t id, const char* what) {
        if (!is(id, Kind::Bool)) fail(std::string(what) + " must be a bool, not " + kind_name(obj(id).kind));
        return obj(id).sub != 0;
    }
    bool empty_dict(uint32_t id) { return is(id, Kind::Dict) && container(id).items.empty(); }
    Shape int_tuple(uint32_t id, const char* what);
    PickleOutput finish(uint32_t root);

    const uint8_t* data_;
    size_t size_;
    const std::string& where_;
    const Options& options_;
    const StorageResolver& resolve_;

    size_t pos_ = 0;
    size_t op_pos_ = 0;
    uint8_t op_ = 0;
    int protocol_ = 0;
    std::vector<Obj> objects_;
    std::vector<Container> containers_;
    std::deque<std::string> strings_;
    std::unordered_map<std::string_view, uint32_t> str_intern_, bytes_intern_;
    std::vector<StorageRec> storages_;
    std::unordered_map<uint32_t, uint32_t> storage_by_key_;  // interned key -> storages_ index
    std::vector<TensorRec> tensors_;
    std::vector<uint32_t> stack_;
    std::vector<size_t> marks_;
    std::unordered_map<uint32_t, uint32_t> memo_;
    std::array<uint64_t, 256> counts_{};
    std::map<std::string, uint64_t> globals_used_;
    uint32_t none_, false_, true_;
};

void Machine::global(std::string_view module, std::string_view name) {
    for (const auto& spec : allowed_globals) {
        if (module == spec.module && name == spec.name) {
            ++globals_used_[std::string(module) + "." + std::string(name)];
            const uint32_t id = make(Kind::Global);
            objects_[id].sub = static_cast<uint8_t>(spec.id);
            objects_[id].i = static_cast<int64_t>(spec.dtype);
            push(id);
            return;
        }
    }
    fail("refused global '" + printable(module) + "." + printable(name) +
         "': only collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and "
         "the torch.*Storage types of real and integer dtypes may appear in a checkpoint (nothing is imported or "
         "called)");
}

Shape Machine::int_tuple(uint32_t id, const char* what) {
    if (!is(id, Kind::Tuple)) fail(std::string(what) + " must be a tuple, not " + kind_name(obj(id).kind));
    const auto& items = container(id).items;
    if (items.size() > options_.max_ndim)
        fail(std::string(what) + " has " + std::to_string(items.size()) + " dimensions, more than the limit of " +
             std::to_string(options_.max_ndim));
    Shape out;
    out.reserve(items.size());
    for (const uint32_t item : items) {
        const int64_t value = int_arg(item, what);
        if (value < 0) fail(std::string(what) + " has a negative entry " + std::to_string(value));
        out.push_back(value);
    }
    return out;
}

void Machine::persistent_load() {
    const uint32_t pid = pop();
    if (!is(pid, Kind::Tuple)) fail(std::string("persistent id must be a tuple, not ") + kind_name(obj(pid).kind));
    const auto items = container(pid).items;  // copy: make() below may move containers_
    if (items.size() != 5)
        fail("persistent id must be ('storage', storage_type, key, location, numel), got a tuple of " +
             std::to_string(items.size()));
    if (!is(items[0], Kind::Str) || str(items[0]) != "storage")
        fail("persistent id must start with 'storage'");
    if (!is(items[1], Kind::Global) || static_cast<GlobalId>(obj(items[1]).sub) != GlobalId::StorageType)
        fail("persistent id's storage type is not a torch.*Storage global");
    if (!is(items[2], Kind::Str)) fail("persistent id's key must be a str");
    if (!is(items[3], Kind::Str)) fail("persistent id's location must be a str");
    const int64_t numel = int_arg(items[4], "persistent id's numel");
    if (numel < 0) fail("persistent id's numel is negative");
    const DType dtype = static_cast<DType>(obj(items[1]).i);
    const uint32_t key = obj(items[2]).ref;
    const std::string& key_text = strings_[key];
    if (static_cast<uint64_t>(numel) > (uint64_t{1} << 62) / dtype_size(dtype))
        fail("storage '" + printable(key_text) + "' is impossibly large (" + std::to_string(numel) + " elements)");

    const auto it = storage_by_key_.find(key);
    if (it != storage_by_key_.end()) {
        const StorageRec& known = storages_[it->second];
        if (known.dtype != dtype || known.numel != static_cast<uint64_t>(numel))
            fail("storage '" + printable(key_text) + "' is referenced as " + dtype_name(dtype) + " x " +
                 std::to_string(numel) + " after " + dtype_name(known.dtype) + " x " + std::to_string(known.numel));
    } else {
        const ResolvedStorage resolved = resolve_(key_text, dtype, static_cast<uint64_t>(numel));
        if (!resolved.error.empty()) fail(resolved.error);
        storages_.push_back({dtype, key, static_cast<uint64_t>(numel), resolved.bytes});
        storage_by_key_.emplace(key, static_cast<uint32_t>(storages_.size() - 1));
    }
    const uint32_t id = make(Kind::Storage);
    objects_[id].ref = storage_by_key_.at(key);
    push(id);
}

uint32_t Machine::rebuild_tensor(const std::vector<uint32_t>& args) {
    if (args.size() != 6 && args.size() != 7)
        fail("_rebuild_tensor_v2 takes (storage, storage_offset, size, stride, requires_grad, backward_hooks[, "
             "metadata]), got " + std::to_string(args.size()) + " arguments");
    if (!is(args[0], Kind::Storage))
        fail(std::string("_rebuild_tensor_v2's storage must be a persistent storage, not ") +
             kind_name(obj(args[0]).kind));
    const StorageRec storage = storages_[obj(args[0]).ref];
    TensorRec t;
    t.dtype = storage.dtype;
    t.storage = obj(args[0]).ref;
    t.offset = int_arg(args[1], "storage_offset");
    if (t.offset < 0) fail("negative storage_offset " + std::to_string(t.offset));
    t.shape = int_tuple(args[2], "size");
    t.strides = int_tuple(args[3], "stride");
    if (t.shape.size() != t.strides.size())
        fail("size has " + std::to_string(t.shape.size()) + " dimensions but stride has " +
             std::to_string(t.strides.size()));
    t.requires_grad = bool_arg(args[4], "requires_grad");
    t.is_parameter = false;
    if (!empty_dict(args[5])) fail("backward_hooks must be an empty OrderedDict");
    if (args.size() == 7 && !is(args[6], Kind::None) && !empty_dict(args[6]))
        fail("tensor metadata (a non-empty dict) is not supported");

    // Element count and the last element reached, without overflow.
    uint64_t numel = 1;
    uint64_t last = static_cast<uint64_t>(t.offset);
    bool overflow = false;
    for (size_t d = 0; d < t.shape.size(); ++d) {
        const uint64_t n = static_cast<uint64_t>(t.shape[d]);
        overflow |= __builtin_mul_overflow(numel, n, &numel);
        if (n > 0) {
            uint64_t reach;
            overflow |= __builtin_mul_overflow(n - 1, static_cast<uint64_t>(t.strides[d]), &reach);
            overflow |= __builtin_add_overflow(last, reach, &last);
        }
    }
    const std::string shape = shape_string(t.shape) + " stride " + shape_string(t.strides) + " offset " +
                              std::to_string(t.offset);
    if (overflow || numel > (uint64_t{1} << 62)) fail("tensor " + shape + " overflows");
    if (numel > 0 ? last >= storage.numel : static_cast<uint64_t>(t.offset) > storage.numel)
        fail("tensor " + shape + " reaches outside its storage '" + printable(strings_[storage.key]) + "' of " +
             std::to_string(storage.numel) + " elements");
    if (numel > storage.numel && numel > options_.max_expanded_elements)
        fail("expanded tensor " + shape + " has " + std::to_string(numel) + " elements, more than its storage and the "
             "limit of " + std::to_string(options_.max_expanded_elements));
    tensors_.push_back(std::move(t));
    const uint32_t id = make(Kind::Tensor);
    objects_[id].ref = static_cast<uint32_t>(tensors_.size() - 1);
    return id;
}

uint32_t Machine::rebuild_parameter(const std::vector<uint32_t>& args) {
    if (args.size() != 3)
        fail("_rebuild_parameter takes (data, requires_grad, backward_hooks), got " + std::to_string(args.size()) +
             " arguments");
    if (!is(args[0], Kind::Tensor)) fail(std::string("_rebuild_parameter's data must be a tensor, not ") +
                                         kind_name(obj(args[0]).kind));
    TensorRec t = tensors_[obj(args[0]).ref];
    t.requires_grad = bool_arg(args[1], "requires_grad");
    t.is_parameter = true;
    if (!empty_dict(args[2])) fail("backward_hooks must be an empty OrderedDict");
    tensors_.push_back(std::move(t));
    const uint32_t id = make(Kind::Tensor);
    objects_[id].ref = static_cast<uint32_t>(tensors_.size() - 1);
    return id;
}

void Machine::reduce() {
    const uint32_t args_id = pop();
    const uint32_t callable = pop();
    if (!is(callable, Kind::Global))
        fail(std::string("REDUCE calls a ") + kind_name(obj(callable).kind) + ", not an allowed global");
    if (!is(args_id, Kind::Tuple)) fail(std::string("REDUCE arguments must be a tuple, not ") +
                                        kind_name(obj(args_id).kind));
    const std::vector<uint32_t> args = container(args_id).items;
    switch (static_cast<GlobalId>(obj(callable).sub)) {
    case GlobalId::OrderedDict: {
        if (!args.empty()) fail("OrderedDict is only rebuilt from an empty argument tuple");
        const uint32_t id = make_container(Kind::Dict);
        container(id).ordered = true;
        push(id);
        return;
    }
    case GlobalId::RebuildTensorV2: push(rebuild_tensor(args)); return;
    case GlobalId::RebuildParameter: push(rebuild_parameter(args)); return;
    case GlobalId::StorageType: fail("a storage type is not callable");
    }
    fail("unknown global");
}

void Machine::build() {
    const uint32_t state = pop();
    const uint32_t target = top();
    if (!is(target, Kind::Dict) || !container(target).ordered)
        fail(std::string("BUILD on a ") + kind_name(obj(target).kind) + " (only an OrderedDict's attributes may be set)");
    if (!is(state, Kind::Dict)) fail(std::string("BUILD state must be a dict, not ") + kind_name(obj(state).kind));
    container(target).state = state;
}

PickleOutput Machine::run() {
    while (true) {
        if (pos_ >= size_) {
            op_pos_ = pos_;
            op_ = 0;
            fail("truncated pickle: no STOP opcode");
        }
        op_pos_ = pos_;
        op_ = data_[pos_++];
        ++counts_[op_];
        if (op_pos_ == 0 && op_ != 0x80) fail("not a protocol 2+ pickle (no PROTO opcode at the start)");
        switch (op_) {
        case 0x80: {  // PROTO
            const int protocol = u8();
            if (op_pos_ != 0) fail("PROTO after the start");
            if (protocol < 2 || protocol > 5) fail("unsupported pickle protocol " + std::to_string(protocol));
            protocol_ = protocol;
            break;
        }
        case 0x95: {  // FRAME: a hint for buffered readers; only bounds-checked
            const uint64_t length = u64();
            if (length > size_ - pos_)
                fail("frame of " + std::to_string(length) + " bytes runs past the end (" +
                     std::to_string(size_ - pos_) + " left)");
            break;
        }
        case 'c': {
            const std::string_view module = line();
            const std::string_view name = line();
            global(module, name);
            break;
        }
        case 0x93: {  // STACK_GLOBAL
            const uint32_t name = pop();
            const uint32_t module = pop();
            if (!is(name, Kind::Str) || !is(module, Kind::Str)) fail("STACK_GLOBAL needs two strings");
            global(str(module), str(name));
            break;
        }
        case 'q': memo_put(u8()); break;
        case 'r': memo_put(u32()); break;
        case 0x94: memo_put(memo_.size()); break;
        case 'h': memo_get(u8()); break;
        case 'j': memo_get(u32()); break;
        case '}': push(make_container(Kind::Dict)); break;
        case ']': push(make_container(Kind::List)); break;
        case ')': push(make_container(Kind::Tuple)); break;
        case '(':
            if (marks_.size() >= options_.max_marks)
                fail("more than " + std::to_string(options_.max_marks) + " nested MARKs (limit)");
            marks_.push_back(stack_.size());
            break;
        case 't': push(make_container(Kind::Tuple, pop_mark())); break;
        case 'l': push(make_container(Kind::List, pop_mark())); break;
        case 0x85:
        case 0x86:
        case 0x87: {
            const size_t n = op_ - 0x84u;
            std::vector<uint32_t> items(n);
            for (size_t k = n; k-- > 0;) items[k] = pop();
            push(make_container(Kind::Tuple, std::move(items)));
            break;
        }
        case 'd': {
            const std::vector<uint32_t> items = pop_mark();
            if (items.size() % 2) fail("DICT with an odd number of items");
            const uint32_t dict = make_container(Kind::Dict);
            for (size_t k = 0; k < items.size(); k += 2) set_item(dict, items[k], items[k + 1]);
            push(dict);
            break;
        }
        case 'J': {
            const uint32_t v = u32();
            int32_t value;
            std::memcpy(&value, &v, 4);
            push(make_int(value));
            break;
        }
        case 'K': push(make_int(u8())); break;
        case 'M': push(make_int(u16())); break;
        case 0x8a:
        case 0x8b: {  // LONG1, LONG4: little-endian two's complement
            const uint64_t n = op_ == 0x8a ? u8() : u32();
            if (n > 8) fail("integer of " + std::to_string(n) + " bytes does not fit in 64 bits");
            const uint8_t* p = take(n);
            uint64_t value = 0;
            for (uint64_t k = 0; k < n; ++k) value |= static_cast<uint64_t>(p[k]) << (8 * k);
            if (n > 0 && n < 8 && (p[n - 1] & 0x80)) value |= ~uint64_t{0} << (8 * n);
            int64_t signed_value;
            std::memcpy(&signed_value, &value, 8);
            push(make_int(signed_value));
            break;
        }
        case 'G': {
            const uint8_t* p = take(8);
            uint64_t bits = 0;
            for (int k = 0; k < 8; ++k) bits = (bits << 8) | p[k];
            double value;
            std::memcpy(&value, &bits, 8);
            const uint32_t id = make(Kind::Float);
            objects_[id].f = value;
            push(id);
            break;
        }
        case 'X': {
            const uint64_t n = u32();
            push(make_string(Kind::Str, take(n), n));
            break;
        }
        case 0x8c: {
            const uint64_t n = u8();
            push(make_string(Kind::Str, take(n), n));
            break;
        }
        case 0x8d: {
            const uint64_t n = u64();
            push(make_string(Kind::Str, take(n), n));
            break;
        }
        case 'C': {
            const uint64_t n = u8();
            push(make_string(Kind::Bytes, take(n), n));
            break;
        }
        case 'B': {
            const uint64_t n = u32();
            push(make_string(Kind::Bytes, take(n), n));
            break;
        }
        case 0x8e: {
            const uint64_t n = u64();
            push(make_string(Kind::Bytes, take(n), n));
            break;
        }
        case 'N': push(none_); break;
        case 0x88: push(true_); break;
        case 0x89: push(false_); break;
        case 'Q': persistent_load(); break;
        case 'R': reduce(); break;
        case 'b': build(); break;
        case 's': {
            const uint32_t value = pop();
            const uint32_t key = pop();
            set_item(top(), key, value);
            break;
        }
        case 'u': {
            const std::vector<uint32_t> items = pop_mark();
            if (items.size() % 2) fail("SETITEMS with an odd number of items");
            const uint32_t dict = top();
            for (size_t k = 0; k < items.size(); k += 2) set_item(dict, items[k], items[k + 1]);
            break;
        }
        case 'a': {
            const uint32_t value = pop();
            const uint32_t list = top();
            if (!is(list, Kind::List)) fail(std::string("APPEND to a ") + kind_name(obj(list).kind) + ", not a list");
            container(list).items.push_back(value);
            break;
        }
        case 'e': {
            const std::vector<uint32_t> items = pop_mark();
            const uint32_t list = top();
            if (!is(list, Kind::List)) fail(std::string("APPENDS to a ") + kind_name(obj(list).kind) + ", not a list");
            auto& target = container(list).items;
            target.insert(target.end(), items.begin(), items.end());
            break;
        }
        case '.': {
            if (!marks_.empty()) fail("STOP with an open MARK");
            if (stack_.size() != 1) fail("STOP with " + std::to_string(stack_.size()) + " values on the stack, not 1");
            if (pos_ != size_) fail(std::to_string(size_ - pos_) + " trailing bytes after STOP");
            return finish(stack_.back());
        }
        default: {
            const char* name = opcode_name(op_);
            std::ostringstream hex;
            hex << "0x" << std::hex << static_cast<int>(op_);
            fail(name ? std::string("opcode ") + name + " (" + hex.str() + ") is not allowed in a checkpoint"
                      : "unknown opcode " + hex.str());
        }
        }
    }
}

PickleOutput Machine::finish(uint32_t root) {
    if (!is(root, Kind::Dict))
        fail(std::string("the pickled object is a ") + kind_name(obj(root).kind) + ", not a dict of tensors");
    PickleOutput out;
    const std::vector<uint32_t>& items = container(root).items;
    for (size_t k = 0; k < items.size(); k += 2) {
        const uint32_t key = items[k], value = items[k + 1];
        if (!is(key, Kind::Str))
            fail("top-level key " + std::to_string(k / 2) + " is a " + kind_name(obj(key).kind) + ", not a str");
        if (!is(value, Kind::Tensor)) {
            const Obj& v = obj(value);
            std::string kind = kind_name(v.kind);
            if (v.kind == Kind::Dict && containers_[v.ref].ordered) kind = "OrderedDict";
            out.skipped.push_back({str(key), kind});
            continue;
        }
        const TensorRec& t = tensors_[obj(value).ref];
        const StorageRec& s = storages_[t.storage];
        TensorEntry entry;
        entry.name = str(key);
        entry.dtype = t.dtype;
        entry.shape = t.shape;
        entry.strides = t.strides;
        entry.storage_offset = t.offset;
        entry.storage = s.bytes;
        entry.storage_elements = s.numel;
        entry.storage_key = strings_[s.key];
        entry.requires_grad = t.requires_grad;
        entry.is_parameter = t.is_parameter;
        out.tensors.push_back(std::move(entry));
    }

    // The state dict's _metadata attribute: {module: {"version": n}}. Entries
    // of other shapes are ignored; the work is bounded since the same dict
    // may be referenced many times.
    const uint32_t state = container(root).state;
    if (state != no_object) {
        const auto& attributes = container(state).items;
        uint64_t budget = options_.max_objects;
        for (size_t k = 0; k < attributes.size(); k += 2) {
            if (!is(attributes[k], Kind::Str) || str(attributes[k]) != "_metadata") continue;
            const uint32_t metadata = attributes[k + 1];
            if (!is(metadata, Kind::Dict)) break;
            const auto& modules = container(metadata).items;
            for (size_t m = 0; m < modules.size(); m += 2) {
                if (!is(modules[m], Kind::Str) || !is(modules[m + 1], Kind::Dict)) continue;
                ModuleMetadata module{str(modules[m]), {}};
                const auto& values = container(modules[m + 1]).items;
                if (values.size() / 2 + 1 > budget) fail("_metadata is too large");
                budget -= values.size() / 2 + 1;
                for (size_t v = 0; v < values.size(); v += 2)
                    if (is(values[v], Kind::Str) && is(values[v + 1], Kind::Int))
                        module.values.emplace_back(str(values[v]), obj(values[v + 1]).i);
                out.metadata.push_back(std::move(module));
            }
        }
    }

    out.stats.protocol = protocol_;
    for (int op = 0; op < 256; ++op)
        if (counts_[op]) {
            const char* name = opcode_name(static_cast<uint8_t>(op));
            out.stats.opcodes[name ? name : "?"] += counts_[op];
        }
    out.stats.globals = globals_used_;
    return out;
}

}  // namespace

PickleOutput run_state_dict_pickle(const uint8_t* data, size_t size, const std::string& where, const Options& options,
                                   const StorageResolver& resolve) {
    Machine machine(data, size, where, options, resolve);
    return machine.run();
}

}  // namespace cadenza::torch_checkpoint::detail
