// The torch.save checkpoint reader: the golden EnCodec / SpeechTokenizer
// checkpoints load with the right names, shapes and values; handmade
// archives and pickles exercise every refusal; a deterministic mutation fuzz
// over the golden files requires "loads, or TorchCheckpointError", never a
// crash or another exception.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "safetensors.h"
#include "torch_checkpoint.h"

namespace tc = cadenza::torch_checkpoint;
namespace st = cadenza::safetensors;
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

// ---------------------------------------------------------------------------
// Helpers: bytes, a STORED zip writer, a pickle writer.

void put16(Bytes& out, uint32_t v) {
    out.push_back(static_cast<uint8_t>(v));
    out.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(Bytes& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(Bytes& out, uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint16_t get16(const Bytes& b, size_t p) { return static_cast<uint16_t>(b[p] | (b[p + 1] << 8)); }
uint32_t get32(const Bytes& b, size_t p) {
    return static_cast<uint32_t>(b[p]) | (static_cast<uint32_t>(b[p + 1]) << 8) |
           (static_cast<uint32_t>(b[p + 2]) << 16) | (static_cast<uint32_t>(b[p + 3]) << 24);
}

struct ZipFile {
    std::string name;
    Bytes data;
    uint16_t method = 0;     // written as is (the data is not compressed)
    bool corrupt_crc = false;
    bool crc_known = false;  // `crc` holds the data's CRC-32 (saves computing it again)
    uint32_t crc = 0;
};

struct ZipStyle {
    bool zip64_end = false;      // ZIP64 end record and locator, as torch writes them
    bool zip64_extra = false;    // sizes and offsets in ZIP64 extra fields (as for >4 GiB files)
    bool descriptor = false;     // torch's style: zero CRC/sizes locally, data descriptor after the data
    size_t align = 64;           // data aligned with an "FB" padding extra field (0: none)
};

// Writes the archive into `out` (cleared first; its capacity is reused).
void make_zip_into(Bytes& out, const std::vector<ZipFile>& files, const ZipStyle& style = {}) {
    out.clear();
    size_t total = 200;
    for (const auto& f : files) total += 2 * f.name.size() + f.data.size() + 30 + 46 + 16 + 28 + style.align + 4;
    out.reserve(total);
    struct Placed {
        uint64_t offset;
        uint32_t crc;
    };
    std::vector<Placed> placed;
    for (const auto& f : files) {
        const uint64_t offset = out.size();
        uint32_t crc = f.crc_known ? f.crc : tc::crc32(f.data.data(), f.data.size());
        if (f.corrupt_crc) crc ^= 0x1u;
        placed.push_back({offset, crc});
        size_t pad = 0;
        if (style.align) {
            const size_t unpadded = offset + 30 + f.name.size();
            pad = (style.align - (unpadded + 4) % style.align) % style.align + 4;
        }
        put32(out, 0x04034b50);
        put16(out, 20);
        put16(out, style.descriptor ? 0x0808 : 0);
        put16(out, f.method);
        put16(out, 0);
        put16(out, 0);
        put32(out, style.descriptor ? 0 : crc);
        put32(out, style.descriptor ? 0 : static_cast<uint32_t>(f.data.size()));
        put32(out, style.descriptor ? 0 : static_cast<uint32_t>(f.data.size()));
        put16(out, static_cast<uint32_t>(f.name.size()));
        put16(out, static_cast<uint32_t>(pad));
        out.insert(out.end(), f.name.begin(), f.name.end());
        if (pad) {
            put16(out, 0x4246);  // "FB", as torch's writer pads
            put16(out, static_cast<uint32_t>(pad - 4));
            out.insert(out.end(), pad - 4, 'Z');
        }
        out.insert(out.end(), f.data.begin(), f.data.end());
        if (style.descriptor) {
            put32(out, 0x08074b50);
            put32(out, crc);
            put32(out, static_cast<uint32_t>(f.data.size()));
            put32(out, static_cast<uint32_t>(f.data.size()));
        }
    }
    const uint64_t cd_offset = out.size();
    for (size_t i = 0; i < files.size(); ++i) {
        const auto& f = files[i];
        put32(out, 0x02014b50);
        put16(out, 45);
        put16(out, 45);
        put16(out, style.descriptor ? 0x0808 : 0);
        put16(out, f.method);
        put16(out, 0);
        put16(out, 0);
        put32(out, placed[i].crc);
        const uint32_t size32 = style.zip64_extra ? 0xFFFFFFFFu : static_cast<uint32_t>(f.data.size());
        put32(out, size32);
        put32(out, size32);
        put16(out, static_cast<uint32_t>(f.name.size()));
        put16(out, style.zip64_extra ? 28 : 0);
        put16(out, 0);
        put16(out, 0);
        put16(out, 0);
        put32(out, 0);
        put32(out, style.zip64_extra ? 0xFFFFFFFFu : static_cast<uint32_t>(placed[i].offset));
        out.insert(out.end(), f.name.begin(), f.name.end());
        if (style.zip64_extra) {
            put16(out, 0x0001);
            put16(out, 24);
            put64(out, f.data.size());
            put64(out, f.data.size());
            put64(out, placed[i].offset);
        }
    }
    const uint64_t cd_size = out.size() - cd_offset;
    if (style.zip64_end) {
        const uint64_t end64 = out.size();
        put32(out, 0x06064b50);
        put64(out, 44);
        put16(out, 45);
        put16(out, 45);
        put32(out, 0);
        put32(out, 0);
        put64(out, files.size());
        put64(out, files.size());
        put64(out, cd_size);
        put64(out, cd_offset);
        put32(out, 0x07064b50);
        put32(out, 0);
        put64(out, end64);
        put32(out, 1);
    }
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    const uint32_t count = style.zip64_extra ? 0xFFFF : static_cast<uint32_t>(files.size());
    put16(out, count);
    put16(out, count);
    put32(out, style.zip64_extra ? 0xFFFFFFFFu : static_cast<uint32_t>(cd_size));
    put32(out, style.zip64_extra ? 0xFFFFFFFFu : static_cast<uint32_t>(cd_offset));
    put16(out, 0);
}

Bytes make_zip(const std::vector<ZipFile>& files, const ZipStyle& style = {}) {
    Bytes out;
    make_zip_into(out, files, style);
    return out;
}

// The entries of a well-formed archive (the golden files), in order.
std::vector<ZipFile> read_zip(const Bytes& b) {
    size_t end = b.size() - 22;
    while (get32(b, end) != 0x06054b50) --end;
    const uint32_t count = get16(b, end + 10);
    size_t pos = get32(b, end + 16);
    std::vector<ZipFile> files;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t size = get32(b, pos + 24);
        const uint16_t n = get16(b, pos + 28), e = get16(b, pos + 30), c = get16(b, pos + 32);
        const uint32_t local = get32(b, pos + 42);
        ZipFile f;
        f.name.assign(reinterpret_cast<const char*>(&b[pos + 46]), n);
        const size_t data = local + 30 + get16(b, local + 26) + get16(b, local + 28);
        f.data.assign(b.begin() + static_cast<std::ptrdiff_t>(data),
                      b.begin() + static_cast<std::ptrdiff_t>(data + size));
        files.push_back(std::move(f));
        pos += 46 + n + e + c;
    }
    return files;
}

struct Pickle {
    Bytes b;
    Pickle& op(uint8_t c) {
        b.push_back(c);
        return *this;
    }
    Pickle& raw(const std::string& s) {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Pickle& proto(int p = 2) { return op(0x80).op(static_cast<uint8_t>(p)); }
    Pickle& global(const std::string& module, const std::string& name) {
        return op('c').raw(module + "\n" + name + "\n");
    }
    Pickle& str(const std::string& s) {
        op('X');
        put32(b, static_cast<uint32_t>(s.size()));
        return raw(s);
    }
    Pickle& integer(int64_t v) {
        if (v >= 0 && v < 256) return op('K').op(static_cast<uint8_t>(v));
        if (v >= 0 && v < 65536) {
            op('M');
            put16(b, static_cast<uint32_t>(v));
            return *this;
        }
        if (v >= INT32_MIN && v <= INT32_MAX) {
            op('J');
            put32(b, static_cast<uint32_t>(v));
            return *this;
        }
        op(0x8a).op(8);
        put64(b, static_cast<uint64_t>(v));
        return *this;
    }
    Pickle& mark() { return op('('); }
    Pickle& tuple() { return op('t'); }
    Pickle& ints(const std::vector<int64_t>& values) {
        mark();
        for (const int64_t v : values) integer(v);
        return tuple();
    }
    Pickle& put(uint8_t i) { return op('q').op(i); }
    Pickle& get(uint8_t i) { return op('h').op(i); }
    Pickle& stop() { return op('.'); }
};

struct TensorSpec {
    std::string name;
    std::string key;
    int64_t numel;
    std::vector<int64_t> size;
    std::vector<int64_t> stride;
    int64_t offset = 0;
    std::string storage = "FloatStorage";
    bool parameter = false;
};

// A state dict pickled the way torch.save does it (memo 0: OrderedDict).
// `extra` writes more key/value pairs into the dict; `tail` runs after the
// items, before STOP (e.g. a BUILD of _metadata).
Bytes state_dict(const std::vector<TensorSpec>& tensors, const std::function<void(Pickle&)>& extra = {},
                 const std::function<void(Pickle&)>& tail = {}, int protocol = 2) {
    Pickle p;
    p.proto(protocol).global("collections", "OrderedDict").put(0).op(')').op('R').mark();
    for (const auto& t : tensors) {
        p.str(t.name);
        if (t.parameter) p.global("torch._utils", "_rebuild_parameter");
        p.global("torch._utils", "_rebuild_tensor_v2").mark();
        p.mark().str("storage").global("torch", t.storage).str(t.key).str("cpu").integer(t.numel).tuple().op('Q');
        p.integer(t.offset).ints(t.size).ints(t.stride).op(0x89).get(0).op(')').op('R').tuple().op('R');
        if (t.parameter) p.op(0x88).get(0).op(')').op('R').op(0x87).op('R');
    }
    if (extra) extra(p);
    p.op('u');
    if (tail) tail(p);
    p.stop();
    return p.b;
}

template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
    Bytes out(values.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

Bytes archive(const Bytes& pickle, std::vector<ZipFile> storages = {}, const ZipStyle& style = {}) {
    std::vector<ZipFile> files;
    files.push_back({"model/data.pkl", pickle});
    for (auto& s : storages) {
        s.name = "model/data/" + s.name;
        files.push_back(std::move(s));
    }
    files.push_back({"model/version", Bytes{'3', '\n'}});
    return make_zip(files, style);
}

std::string error_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const tc::TorchCheckpointError& error) {
        return error.what();
    }
    return "(no error)";
}

std::string load_error(const Bytes& bytes, const tc::Options& options = {}) {
    return error_of([&] { tc::Checkpoint::from_bytes(bytes, "handmade.pt", options); });
}

#define EXPECT_CONTAINS(message, fragment) \
    EXPECT_NE(std::string(message).find(fragment), std::string::npos) << "message: " << (message)

uint32_t bits_of(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits;
}

// ---------------------------------------------------------------------------
// Golden checkpoints.

#ifdef CADENZA_GOLDEN_DIR
const fs::path golden_dir = CADENZA_GOLDEN_DIR;
#else
const fs::path golden_dir;
#endif

#define REQUIRE_GOLDEN()                                                                              \
    do {                                                                                              \
        if (golden_dir.empty() || !fs::exists(golden_dir / "README.md"))                              \
            GTEST_SKIP() << "golden directory absent (" << golden_dir << "); golden checks skipped";  \
    } while (0)

Bytes read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

nlohmann::json read_json(const fs::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

struct OfficialKey {
    std::string name;
    tc::Shape shape;
};

std::vector<OfficialKey> read_official_keys(const fs::path& path) {
    std::vector<OfficialKey> out;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::istringstream fields(line);
        OfficialKey key;
        std::string shape;
        std::getline(fields, key.name, '\t');
        std::getline(fields, shape, '\t');
        shape = shape.substr(1, shape.size() - 2);
        std::istringstream dims(shape);
        std::string dim;
        while (std::getline(dims, dim, ',')) key.shape.push_back(std::stoll(dim));
        out.push_back(std::move(key));
    }
    return out;
}

// The codebook layer of "quantizer.vq.layers.N...", or -1.
int codebook_layer(const std::string& name) {
    const std::string prefix = "quantizer.vq.layers.";
    if (name.compare(0, prefix.size(), prefix) != 0) return -1;
    return std::stoi(name.substr(prefix.size()));
}

// The checkpoint's keys are the official configuration's keys (less the
// codebooks beyond n_q), each with as many dimensions, every size equal to
// the official one or smaller by one of `scales` (the reduced widths).
void expect_official_layout(const tc::Checkpoint& checkpoint, const fs::path& tsv, int n_q,
                            const std::set<int64_t>& scales) {
    std::map<std::string, tc::Shape> official;
    for (const auto& key : read_official_keys(tsv))
        if (codebook_layer(key.name) < n_q) official[key.name] = key.shape;
    std::set<std::string> ours;
    for (const auto& t : checkpoint.tensors()) ours.insert(t.name);
    std::set<std::string> theirs;
    for (const auto& [name, shape] : official) theirs.insert(name);
    EXPECT_EQ(ours, theirs);
    for (const auto& t : checkpoint.tensors()) {
        const auto it = official.find(t.name);
        if (it == official.end()) continue;
        ASSERT_EQ(t.shape.size(), it->second.size()) << t.name;
        for (size_t d = 0; d < t.shape.size(); ++d) {
            const int64_t a = t.shape[d], b = it->second[d];
            bool ok = a == b;
            for (const int64_t s : scales) ok = ok || a * s == b;
            EXPECT_TRUE(ok) << t.name << " dim " << d << ": " << a << " vs official " << b;
        }
    }
}

void expect_common_golden_properties(const tc::Checkpoint& checkpoint, size_t tensors) {
    EXPECT_EQ(checkpoint.tensors().size(), tensors);
    EXPECT_EQ(checkpoint.archive_name(), "checkpoint");
    EXPECT_EQ(checkpoint.format_version(), "3");
    EXPECT_TRUE(checkpoint.skipped().empty());
    for (const auto& t : checkpoint.tensors()) {
        EXPECT_EQ(t.dtype, tc::DType::F32) << t.name;
        EXPECT_TRUE(t.is_contiguous()) << t.name;
        EXPECT_FALSE(t.requires_grad) << t.name;
        EXPECT_EQ(t.storage_offset, 0) << t.name;
    }
    // _metadata: the root module and every submodule, each {"version": 1}.
    ASSERT_FALSE(checkpoint.module_metadata().empty());
    EXPECT_EQ(checkpoint.module_metadata()[0].module, "");
    for (const auto& m : checkpoint.module_metadata()) {
        ASSERT_EQ(m.values.size(), 1u) << m.module;
        EXPECT_EQ(m.values[0].first, "version");
        EXPECT_EQ(m.values[0].second, 1);
    }
    // Only the opcodes and globals a state dict needs.
    const std::set<std::string> expected_ops = {
        "PROTO",     "GLOBAL",   "BINPUT",   "LONG_BINPUT", "BINGET",  "LONG_BINGET", "EMPTY_TUPLE", "EMPTY_DICT",
        "REDUCE",    "MARK",     "TUPLE",    "TUPLE1",      "TUPLE2",  "TUPLE3",      "BINUNICODE",  "BININT",
        "BININT1",   "BININT2",  "BINPERSID", "NEWFALSE",   "SETITEM", "SETITEMS",    "BUILD",       "STOP"};
    const auto& stats = checkpoint.pickle_stats();
    EXPECT_EQ(stats.protocol, 2);
    std::string ops, globals;
    for (const auto& [name, count] : stats.opcodes) {
        EXPECT_TRUE(expected_ops.count(name)) << name;
        ops += name + "=" + std::to_string(count) + " ";
    }
    for (const auto& [name, count] : stats.globals) globals += name + "=" + std::to_string(count) + " ";
    EXPECT_EQ(stats.globals.size(), 3u);
    EXPECT_EQ(stats.globals.count("torch._utils._rebuild_tensor_v2"), 1u);
    std::cout << checkpoint.path() << ": opcodes " << ops << "\n  globals " << globals << "\n";
}

// Codebook internals: inited == 1, cluster_size == 0, embed_avg == embed.
void expect_codebooks(const tc::Checkpoint& checkpoint, int n_q, int64_t bins, int64_t dimension) {
    for (int q = 0; q < n_q; ++q) {
        const std::string prefix = "quantizer.vq.layers." + std::to_string(q) + "._codebook.";
        EXPECT_EQ(checkpoint.read_f32(prefix + "inited", {1}), std::vector<float>{1.0f});
        const auto cluster = checkpoint.read_f32(prefix + "cluster_size", {bins});
        EXPECT_TRUE(std::all_of(cluster.begin(), cluster.end(), [](float v) { return v == 0.0f; })) << q;
        const auto embed = checkpoint.read_f32(prefix + "embed", {bins, dimension});
        EXPECT_EQ(checkpoint.read_f32(prefix + "embed_avg", {bins, dimension}), embed) << q;
        EXPECT_TRUE(std::all_of(embed.begin(), embed.end(), [](float v) { return std::isfinite(v); }));
    }
    EXPECT_FALSE(checkpoint.contains("quantizer.vq.layers." + std::to_string(n_q) + "._codebook.embed"));
}

// quantized[b, :, t] == sum over q < n of embed_q[codes[q, b, t]], with codes
// given as a function of (q, t) for batch 0.
void expect_quantized_matches(const tc::Checkpoint& checkpoint, int n, int64_t dimension, int64_t frames,
                              const std::function<int64_t(int, int64_t)>& code, const std::vector<float>& quantized,
                              float tolerance) {
    std::vector<std::vector<float>> embeds;
    for (int q = 0; q < n; ++q)
        embeds.push_back(checkpoint.read_f32("quantizer.vq.layers." + std::to_string(q) + "._codebook.embed"));
    float worst = 0;
    for (int64_t t = 0; t < frames; ++t)
        for (int64_t d = 0; d < dimension; ++d) {
            float sum = 0;
            for (int q = 0; q < n; ++q) sum += embeds[q][static_cast<size_t>(code(q, t) * dimension + d)];
            worst = std::max(worst, std::fabs(sum - quantized[static_cast<size_t>(d * frames + t)]));
        }
    EXPECT_LE(worst, tolerance);
}

TEST(TorchCheckpointGolden, EncodecLoadsWithOfficialLayoutAndMatchingCodebooks) {
    REQUIRE_GOLDEN();
    const fs::path dir = golden_dir / "encodec";
    const auto config = read_json(dir / "config.json");
    const auto checkpoint = tc::Checkpoint::open(dir / "checkpoint.th");
    expect_common_golden_properties(checkpoint, 188);
    const int n_q = config["n_q"];
    const int64_t bins = config["bins"], dimension = config["dimension"], n_filters = config["n_filters"];
    const int64_t channels = config["channels"], kernel = config["encoder"]["kernel_size"];
    const int64_t last_kernel = config["encoder"]["last_kernel_size"];
    const int64_t widest = n_filters << config["ratios"].size();
    expect_official_layout(checkpoint, dir / "official_24khz_keys.tsv", n_q, {128 / dimension});
    EXPECT_EQ(checkpoint.tensor("quantizer.vq.layers.0._codebook.embed").shape, (tc::Shape{1024, 32}));
    checkpoint.tensor("encoder.model.0.conv.conv.weight_v", {n_filters, channels, kernel});
    checkpoint.tensor("encoder.model.0.conv.conv.weight_g", {n_filters, 1, 1});
    checkpoint.tensor("encoder.model.15.conv.conv.weight_v", {dimension, widest, last_kernel});
    checkpoint.tensor("decoder.model.0.conv.conv.weight_v", {widest, dimension, kernel});
    checkpoint.tensor("decoder.model.15.conv.conv.weight_v", {channels, n_filters, last_kernel});
    for (int l = 0; l < config["lstm"].get<int>(); ++l) {
        checkpoint.tensor("encoder.model.13.lstm.weight_ih_l" + std::to_string(l), {4 * widest, widest});
        checkpoint.tensor("decoder.model.1.lstm.weight_hh_l" + std::to_string(l), {4 * widest, widest});
    }
    expect_codebooks(checkpoint, n_q, bins, dimension);

    // The stored quantized vectors are sums of the codebook rows the stored
    // codes select: the codebook values are the reference's.
    const st::File vectors(dir / "vectors.safetensors");
    const auto codes = vectors.read_i64("codes_bw12", {1, n_q, -1});
    const int64_t frames = vectors.info("codes_bw12").shape[2];
    expect_quantized_matches(
        checkpoint, n_q, dimension, frames, [&](int q, int64_t t) { return codes[static_cast<size_t>(q * frames + t)]; },
        vectors.read_f32("quantized_bw12", {1, dimension, frames}), 2e-5f);
}

TEST(TorchCheckpointGolden, Encodec48LoadsWithOfficialLayoutAndMatchingCodebooks) {
    REQUIRE_GOLDEN();
    const fs::path dir = golden_dir / "encodec48";
    const auto config = read_json(dir / "config.json");
    const auto checkpoint = tc::Checkpoint::open(dir / "checkpoint.th");
    expect_common_golden_properties(checkpoint, 224);
    const int n_q = config["n_q"];
    const int64_t bins = config["bins"], dimension = config["dimension"], n_filters = config["n_filters"];
    const int64_t channels = config["channels"], kernel = config["encoder"]["kernel_size"];
    const int64_t last_kernel = config["encoder"]["last_kernel_size"];
    const int64_t widest = n_filters << config["ratios"].size();
    expect_official_layout(checkpoint, dir / "official_48khz_keys.tsv", n_q, {128 / dimension});
    // time_group_norm: plain convolutions, each followed by a GroupNorm.
    checkpoint.tensor("encoder.model.0.conv.conv.weight", {n_filters, channels, kernel});
    checkpoint.tensor("encoder.model.0.conv.norm.weight", {n_filters});
    checkpoint.tensor("encoder.model.15.conv.conv.weight", {dimension, widest, last_kernel});
    checkpoint.tensor("decoder.model.15.conv.conv.weight", {channels, n_filters, last_kernel});
    checkpoint.tensor("decoder.model.15.conv.norm.bias", {channels});
    expect_codebooks(checkpoint, n_q, bins, dimension);

    const st::File vectors(dir / "vectors.safetensors");
    for (const std::string seg : {"seg0", "seg1"}) {
        const auto codes = vectors.read_i64("codes_bw24_" + seg, {1, n_q, -1});
        const int64_t frames = vectors.info("codes_bw24_" + seg).shape[2];
        expect_quantized_matches(
            checkpoint, n_q, dimension, frames,
            [&](int q, int64_t t) { return codes[static_cast<size_t>(q * frames + t)]; },
            vectors.read_f32("quantized_bw24_" + seg, {1, dimension, frames}), 2e-5f);
    }
}

TEST(TorchCheckpointGolden, SpeechTokenizerLoadsWithOfficialLayoutAndMatchingValues) {
    REQUIRE_GOLDEN();
    const fs::path dir = golden_dir / "speechtokenizer";
    const auto config = read_json(dir / "config.json");
    const auto checkpoint = tc::Checkpoint::open(dir / "checkpoint.pt");
    expect_common_golden_properties(checkpoint, 166);
    const int n_q = config["n_q"];
    const int64_t bins = config["codebook_size"], dimension = config["dimension"];
    const int64_t semantic = config["semantic_dimension"], n_filters = config["n_filters"];
    const int64_t widest = n_filters << config["strides"].size();
    expect_official_layout(checkpoint, dir / "official_keys.tsv", n_q, {64 / n_filters, 1024 / dimension});
    checkpoint.tensor("transform.weight", {semantic, dimension});
    checkpoint.tensor("encoder.model.0.conv.conv.weight_v", {n_filters, 1, 7});
    // The bidirectional encoder LSTM doubles the last convolution's input.
    checkpoint.tensor("encoder.model.15.conv.conv.weight_v", {dimension, 2 * widest, 7});
    checkpoint.tensor("decoder.model.0.conv.conv.weight_v", {widest, dimension, 7});
    expect_codebooks(checkpoint, n_q, bins, dimension);

    const st::File vectors(dir / "vectors.safetensors");
    const auto codes = vectors.read_i64("codes", {n_q, 1, -1});  // [n_q, batch, frames]
    const int64_t frames = vectors.info("codes").shape[2];
    const auto code = [&](int q, int64_t t) { return codes[static_cast<size_t>(q * frames + t)]; };
    expect_quantized_matches(checkpoint, n_q, dimension, frames, code,
                             vectors.read_f32("quantized", {1, dimension, frames}), 2e-5f);
    // RVQ-1 alone is one codebook row: exactly equal.
    const auto rvq1 = vectors.read_f32("quantized_rvq1", {1, dimension, frames});
    expect_quantized_matches(checkpoint, 1, dimension, frames, code, rvq1, 0.0f);

    // feature = transform(quantized_rvq1) time-major: the Linear's values.
    const auto weight = checkpoint.read_f32("transform.weight");
    const auto bias = checkpoint.read_f32("transform.bias", {semantic});
    const auto feature = vectors.read_f32("feature", {1, frames, semantic});
    float worst = 0;
    for (int64_t t = 0; t < frames; ++t)
        for (int64_t j = 0; j < semantic; ++j) {
            double sum = bias[static_cast<size_t>(j)];
            for (int64_t d = 0; d < dimension; ++d)
                sum += double(weight[static_cast<size_t>(j * dimension + d)]) * rvq1[static_cast<size_t>(d * frames + t)];
            worst = std::max(worst, std::fabs(static_cast<float>(sum) - feature[static_cast<size_t>(t * semantic + j)]));
        }
    EXPECT_LE(worst, 1e-5f);
}

TEST(TorchCheckpointGolden, FromBytesAndWithoutCrcGiveTheSameTensors) {
    REQUIRE_GOLDEN();
    const fs::path file = golden_dir / "speechtokenizer" / "checkpoint.pt";
    const auto mapped = tc::Checkpoint::open(file);
    tc::Options fast;
    fast.verify_crc = false;
    const auto copied = tc::Checkpoint::from_bytes(read_file(file), "copy", fast);
    ASSERT_EQ(mapped.names(), copied.names());
    for (const auto& t : mapped.tensors()) {
        EXPECT_EQ(mapped.read_f32(t.name), copied.read_f32(t.name)) << t.name;
        EXPECT_EQ(copied.tensor(t.name).shape, t.shape);
    }
    // Moving keeps the mapping and the pointers into it.
    tc::Checkpoint moved = tc::Checkpoint::from_bytes(read_file(file), "moved", fast);
    const auto before = moved.read_f32("transform.bias");
    tc::Checkpoint target = std::move(moved);
    EXPECT_EQ(target.read_f32("transform.bias"), before);
    const std::string message = error_of([&] { target.tensor("no.such.tensor"); });
    EXPECT_CONTAINS(message, "no.such.tensor");
    EXPECT_CONTAINS(error_of([&] { target.tensor("transform.bias", {7}); }), "expected [7]");
    EXPECT_CONTAINS(error_of([&] { target.read_i64("transform.bias"); }), "not an integer type");
}

// ---------------------------------------------------------------------------
// Handmade archives: what is accepted.

TEST(TorchCheckpointHandmade, ReadsEveryDtypeStridesOffsetsParametersAndSkipsNonTensors) {
    const std::vector<float> f32 = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    const std::vector<double> f64 = {0.5, -1.5, 1e-40, 3};
    const std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x0001, 0x7c00};  // 1, -2, smallest subnormal, inf
    const std::vector<uint16_t> bf16 = {0x3f80, 0xc040, 0x8000};        // 1, -3, -0
    const std::vector<int64_t> i64 = {-5, 1LL << 40, 7};
    const std::vector<int32_t> i32 = {-1, 2};
    const std::vector<int16_t> i16 = {-300, 300};
    const std::vector<int8_t> i8 = {-7, 7};
    const Bytes u8 = {200, 3}, boolean = {1, 0, 1};
    std::vector<TensorSpec> specs = {
        {"contiguous", "0", 12, {3, 4}, {4, 1}},
        {"transposed", "0", 12, {4, 3}, {1, 4}},            // the same storage, transposed
        {"window", "0", 12, {2, 2}, {4, 1}, 5},             // offset 5: [[5, 6], [9, 10]]
        {"expanded", "0", 12, {2, 3}, {0, 1}, 1},           // zero stride: [[1, 2, 3], [1, 2, 3]]
        {"scalar", "0", 12, {}, {}, 11},
        {"empty", "0", 12, {0, 5}, {5, 1}},
        {"weight", "0", 12, {12}, {1}, 0, "FloatStorage", true},
        {"f64", "1", 4, {4}, {1}, 0, "DoubleStorage"},
        {"f16", "2", 4, {2, 2}, {1, 2}, 0, "HalfStorage"},  // column-major
        {"bf16", "3", 3, {3}, {1}, 0, "BFloat16Storage"},
        {"i64", "4", 3, {3}, {1}, 0, "LongStorage"},
        {"i32", "5", 2, {2}, {1}, 0, "IntStorage"},
        {"i16", "6", 2, {2}, {1}, 0, "ShortStorage"},
        {"i8", "7", 2, {2}, {1}, 0, "CharStorage"},
        {"u8", "8", 2, {2}, {1}, 0, "ByteStorage"},
        {"bool", "9", 3, {3}, {1}, 0, "BoolStorage"},
    };
    const auto extra = [](Pickle& p) {
        p.str("epoch").integer(12).str("note").str("hi").str("lr").op('G');
        for (uint8_t byte : {0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a}) p.op(byte);
        p.str("nested").op('}');
        p.str("flag").op(0x88).str("nothing").op('N').str("items").op(']').integer(1).op('a');
    };
    // _metadata as torch writes it: BUILD with {"_metadata": OrderedDict({"": {"version": 1}, "a": {"version": 2}})}.
    const auto tail = [](Pickle& p) {
        p.op('}').str("_metadata").get(0).op(')').op('R').mark();
        p.str("").op('}').str("version").integer(1).op('s');
        p.str("a").op('}').str("version").integer(2).op('s');
        p.op('u').op('s').op('b');
    };
    std::vector<ZipFile> storages = {{"0", bytes_of(f32)}, {"1", bytes_of(f64)},  {"2", bytes_of(f16)},
                                     {"3", bytes_of(bf16)}, {"4", bytes_of(i64)}, {"5", bytes_of(i32)},
                                     {"6", bytes_of(i16)}, {"7", bytes_of(i8)},   {"8", u8},
                                     {"9", boolean}};
    for (const ZipStyle style : {ZipStyle{}, ZipStyle{true, false, true, 64}, ZipStyle{true, true, false, 0},
                                 ZipStyle{false, false, false, 0}}) {
        const Bytes file = archive(state_dict(specs, extra, tail), storages, style);
        const auto c = tc::Checkpoint::from_bytes(file, "handmade.pt");
        ASSERT_EQ(c.tensors().size(), specs.size());
        for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(c.tensors()[i].name, specs[i].name);
        EXPECT_EQ(c.archive_name(), "model");
        EXPECT_EQ(c.read_f32("contiguous"), f32);
        EXPECT_EQ(c.read_f32("transposed"), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
        EXPECT_FALSE(c.tensor("transposed").is_contiguous());
        EXPECT_EQ(c.read_f32("window"), (std::vector<float>{5, 6, 9, 10}));
        EXPECT_EQ(c.read_f32("expanded"), (std::vector<float>{1, 2, 3, 1, 2, 3}));
        EXPECT_EQ(c.read_f32("scalar"), std::vector<float>{11});
        EXPECT_TRUE(c.read_f32("empty").empty());
        EXPECT_TRUE(c.tensor("weight").is_parameter);
        EXPECT_TRUE(c.tensor("weight").requires_grad);
        EXPECT_EQ(c.read_f32("weight"), f32);
        EXPECT_EQ(c.read_f32("f64"), (std::vector<float>{0.5f, -1.5f, static_cast<float>(1e-40), 3.0f}));
        const auto halves = c.read_f32("f16");
        EXPECT_EQ(halves[0], 1.0f);
        EXPECT_EQ(halves[1], 0x1p-24f);  // [[1, smallest], [-2, inf]] read row-major
        EXPECT_EQ(halves[2], -2.0f);
        EXPECT_TRUE(std::isinf(halves[3]));
        const auto brains = c.read_f32("bf16");
        EXPECT_EQ(brains[0], 1.0f);
        EXPECT_EQ(brains[1], -3.0f);
        EXPECT_EQ(bits_of(brains[2]), 0x80000000u);
        EXPECT_EQ(c.read_i64("i64"), i64);
        EXPECT_EQ(c.read_i64("i32"), (std::vector<int64_t>{-1, 2}));
        EXPECT_EQ(c.read_i64("i16"), (std::vector<int64_t>{-300, 300}));
        EXPECT_EQ(c.read_i64("i8"), (std::vector<int64_t>{-7, 7}));
        EXPECT_EQ(c.read_i64("u8"), (std::vector<int64_t>{200, 3}));
        EXPECT_EQ(c.read_i64("bool"), (std::vector<int64_t>{1, 0, 1}));
        EXPECT_EQ(c.tensor("bool").dtype, tc::DType::BOOL);
        EXPECT_CONTAINS(error_of([&] { c.read_f32("i64"); }), "not a floating-point type");
        ASSERT_EQ(c.skipped().size(), 7u);
        EXPECT_EQ(c.skipped()[0].name, "epoch");
        EXPECT_EQ(c.skipped()[0].kind, "int");
        EXPECT_EQ(c.skipped()[2].kind, "float");
        EXPECT_EQ(c.skipped()[3].kind, "dict");
        EXPECT_EQ(c.skipped()[6].kind, "list");
        ASSERT_EQ(c.module_metadata().size(), 2u);
        EXPECT_EQ(c.module_metadata()[1].module, "a");
        EXPECT_EQ(c.module_metadata()[1].values, (std::vector<std::pair<std::string, int64_t>>{{"version", 2}}));
        EXPECT_EQ(c.format_version(), "3");
    }
}

TEST(TorchCheckpointHandmade, AcceptsProtocol4FramesStackGlobalAndMemoize) {
    const std::vector<float> values = {1, 2, 3};
    Pickle p;
    p.proto(4).op(0x95);
    put64(p.b, 0);  // a frame length, patched below
    const size_t frame_start = p.b.size();
    p.op(0x8c).op(11).raw("collections").op(0x94).op(0x8c).op(11).raw("OrderedDict").op(0x94).op(0x93).op(0x94);
    p.op(')').op('R').op(0x94).mark();
    p.op(0x8c).op(1).raw("w").op(0x94);
    p.op(0x8c).op(12).raw("torch._utils").op(0x8c).op(18).raw("_rebuild_tensor_v2").op(0x93).op(0x94);
    p.mark().mark().op(0x8c).op(7).raw("storage").op(0x8c).op(5).raw("torch").op(0x8c).op(12).raw("FloatStorage").op(0x93);
    p.op(0x8c).op(1).raw("0").op(0x8c).op(3).raw("cpu").integer(3).op('t').op('Q');
    p.integer(0).integer(3).op(0x85).integer(1).op(0x85).op(0x89).op('h').op(2).op(')').op('R').op('t').op('R');
    p.op('u').stop();
    const uint64_t frame = p.b.size() - frame_start;
    for (int i = 0; i < 8; ++i) p.b[frame_start - 8 + i] = static_cast<uint8_t>(frame >> (8 * i));
    const auto c = tc::Checkpoint::from_bytes(archive(p.b, {{"0", bytes_of(values)}}), "p4.pt");
    EXPECT_EQ(c.read_f32("w", {3}), values);
    EXPECT_EQ(c.pickle_stats().protocol, 4);
    EXPECT_EQ(c.pickle_stats().globals.count("collections.OrderedDict"), 1u);
}

TEST(TorchCheckpointHandmade, OpensFromDiskAndNamesThePath) {
    const fs::path dir = fs::temp_directory_path() / ("cadenza_torch_checkpoint_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path good = dir / "good.pt", bad = dir / "bad.pt";
    {
        const Bytes file = archive(state_dict({{"w", "0", 2, {2}, {1}}}), {{"0", bytes_of(std::vector<float>{4, 5})}});
        std::ofstream(good, std::ios::binary).write(reinterpret_cast<const char*>(file.data()),
                                                   static_cast<std::streamsize>(file.size()));
        std::ofstream(bad, std::ios::binary) << "not a zip at all, just some text that is long enough";
    }
    EXPECT_EQ(tc::Checkpoint::open(good).read_f32("w"), (std::vector<float>{4, 5}));
    const std::string message = error_of([&] { tc::Checkpoint::open(bad); });
    EXPECT_CONTAINS(message, bad.string());
    EXPECT_CONTAINS(message, "not a zip archive");
    EXPECT_CONTAINS(error_of([&] { tc::Checkpoint::open(dir / "missing.pt"); }), "cannot open");
    EXPECT_CONTAINS(error_of([&] { tc::Checkpoint::open(dir); }), "not a regular file");
    fs::remove_all(dir);
}

// ---------------------------------------------------------------------------
// Handmade archives: what is refused.

const std::vector<float> four = {1, 2, 3, 4};

Bytes simple(const Bytes& pickle) { return archive(pickle, {{"0", bytes_of(four)}}); }

TEST(TorchCheckpointRefuses, UnknownGlobalsNamingThemAndTheOffset) {
    Pickle p;
    p.proto().global("os", "system").str("echo pwned").op(0x85).op('R').stop();
    const std::string message = load_error(simple(p.b));
    EXPECT_CONTAINS(message, "handmade.pt");
    EXPECT_CONTAINS(message, "model/data.pkl offset 2 (GLOBAL)");
    EXPECT_CONTAINS(message, "refused global 'os.system'");
    // Also through STACK_GLOBAL, and torch names that are not allowed.
    Pickle q;
    q.proto(4).op(0x8c).op(8).raw("builtins").op(0x8c).op(4).raw("eval").op(0x93).stop();
    EXPECT_CONTAINS(load_error(simple(q.b)), "refused global 'builtins.eval'");
    Pickle r;
    r.proto().global("torch._utils", "_rebuild_qtensor").stop();
    EXPECT_CONTAINS(load_error(simple(r.b)), "refused global 'torch._utils._rebuild_qtensor'");
    Pickle s;
    s.proto().global("torch", "ComplexFloatStorage").stop();
    EXPECT_CONTAINS(load_error(simple(s.b)), "refused global 'torch.ComplexFloatStorage'");
    Pickle t;
    t.proto().global("torch\x01", "x\xff").stop();
    EXPECT_CONTAINS(load_error(simple(t.b)), "refused global 'torch\\x01.x\\xff'");
}

TEST(TorchCheckpointRefuses, CompressedEncryptedAndMalformedArchives) {
    const Bytes pickle = state_dict({{"w", "0", 4, {4}, {1}}});
    std::vector<ZipFile> files = {{"model/data.pkl", pickle}, {"model/data/0", bytes_of(four), 8}};
    std::string message = load_error(make_zip(files));
    EXPECT_CONTAINS(message, "handmade.pt: zip: entry 'model/data/0' is compressed (method 8, deflate)");
    EXPECT_CONTAINS(message, "only STORED");

    Bytes encrypted = simple(pickle);
    encrypted[6] |= 1;  // the first local header's flags
    EXPECT_CONTAINS(load_error(encrypted), "encrypted");

    // Truncated anywhere: a clear error, never a crash.
    const Bytes whole = simple(pickle);
    for (size_t cut = 0; cut < whole.size(); cut += std::max<size_t>(1, whole.size() / 97)) {
        const Bytes part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
        const std::string error = load_error(part);
        EXPECT_NE(error, "(no error)") << cut;
        EXPECT_CONTAINS(error, "handmade.pt");
    }
    EXPECT_CONTAINS(load_error(Bytes(whole.begin(), whole.end() - 1)), "no end of central directory");

    EXPECT_CONTAINS(load_error(make_zip({{"model/data.pkl", pickle}, {"model/data.pkl", pickle}})),
                    "duplicate entry 'model/data.pkl'");
    EXPECT_CONTAINS(load_error(make_zip({{"model/data.pkl", pickle}, {"other/data/0", bytes_of(four)}})),
                    "outside the archive folder");
    EXPECT_CONTAINS(load_error(make_zip({{"model/x.pkl", pickle}})), "no '<archive>/data.pkl' entry");
    EXPECT_CONTAINS(load_error(make_zip({{"m/constants.pkl", pickle}, {"m/code/x.py", {}}})), "TorchScript");
    EXPECT_CONTAINS(load_error(make_zip({{"model/data.pkl", pickle}, {"model/byteorder", {'b', 'i', 'g'}}})),
                    "byte order 'big' is not supported");
    EXPECT_CONTAINS(load_error(make_zip({{"model/data.pkl", pickle}, {"model/version", {'x'}}})),
                    "not a version number");

    // A legacy (pre-1.6) file starts with a pickled magic number.
    Bytes legacy = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};
    legacy.resize(64, 0);
    EXPECT_CONTAINS(load_error(legacy), "legacy");

    // Central directory pointing past the end; local header naming another file.
    Bytes far = simple(pickle);
    const size_t end = far.size() - 22;
    far[end + 16] = 0xFF;
    far[end + 17] = 0xFF;
    far[end + 18] = 0xFF;
    far[end + 19] = 0x0F;
    EXPECT_CONTAINS(load_error(far), "central directory");
    Bytes renamed = simple(pickle);
    renamed[30] = 'M';  // first local header's name
    EXPECT_CONTAINS(load_error(renamed), "local header names another file");
}

TEST(TorchCheckpointRefuses, CrcMismatches) {
    const Bytes pickle = state_dict({{"w", "0", 4, {4}, {1}}});
    EXPECT_CONTAINS(load_error(make_zip({{"model/data.pkl", pickle, 0, true}, {"model/data/0", bytes_of(four)}})),
                    "entry 'model/data.pkl': CRC-32 mismatch");
    const Bytes bad_storage = make_zip({{"model/data.pkl", pickle}, {"model/data/0", bytes_of(four), 0, true}});
    EXPECT_CONTAINS(load_error(bad_storage), "entry 'model/data/0': CRC-32 mismatch");
    tc::Options unchecked;
    unchecked.verify_crc = false;
    EXPECT_EQ(tc::Checkpoint::from_bytes(bad_storage, "x", unchecked).read_f32("w"), four);
    EXPECT_EQ(tc::crc32(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xCBF43926u);
}

TEST(TorchCheckpointRefuses, MissingAndShortStorages) {
    std::string message = load_error(archive(state_dict({{"w", "7", 4, {4}, {1}}}), {{"0", bytes_of(four)}}));
    EXPECT_CONTAINS(message, "storage '7' has no entry 'model/data/7'");
    EXPECT_CONTAINS(message, "(BINPERSID)");
    message = load_error(archive(state_dict({{"w", "0", 5, {5}, {1}}}), {{"0", bytes_of(four)}}));
    EXPECT_CONTAINS(message, "declares 5 F32 elements (20 bytes) but 'model/data/0' has only 16 bytes");
    // The same key seen with another dtype.
    message = load_error(archive(state_dict({{"a", "0", 4, {4}, {1}}, {"b", "0", 2, {2}, {1}, 0, "DoubleStorage"}}),
                                 {{"0", bytes_of(four)}}));
    EXPECT_CONTAINS(message, "storage '0' is referenced as F64 x 2 after F32 x 4");
}

TEST(TorchCheckpointRefuses, TensorsReachingOutsideTheirStorage) {
    const auto error = [](const TensorSpec& spec) { return load_error(simple(state_dict({spec}))); };
    EXPECT_CONTAINS(error({"w", "0", 4, {5}, {1}}), "tensor [5] stride [1] offset 0 reaches outside its storage '0' of 4");
    EXPECT_CONTAINS(error({"w", "0", 4, {2, 2}, {3, 1}}), "reaches outside");
    EXPECT_CONTAINS(error({"w", "0", 4, {4}, {1}, 1}), "reaches outside");
    EXPECT_CONTAINS(error({"w", "0", 4, {0}, {1}, 5}), "reaches outside");
    EXPECT_CONTAINS(error({"w", "0", 4, {2, 2}, {1}}), "size has 2 dimensions but stride has 1");
    EXPECT_CONTAINS(error({"w", "0", 4, {1LL << 40, 1LL << 40}, {0, 0}}), "overflows");
    EXPECT_CONTAINS(error({"w", "0", 4, {1LL << 20, 1LL << 20}, {0, 0}}), "expanded tensor");
    EXPECT_CONTAINS(error({"w", "0", 4, {-1}, {1}}), "negative entry");
    EXPECT_CONTAINS(error({"w", "0", 4, {4}, {1}, -1}), "negative storage_offset");
    std::vector<int64_t> many(65, 1);
    EXPECT_CONTAINS(error({"w", "0", 4, many, many}), "65 dimensions");
}

TEST(TorchCheckpointRefuses, MalformedPickles) {
    const auto error = [](const Pickle& p) { return load_error(simple(p.b)); };
    const auto rebuild = [](Pickle& p) { p.global("torch._utils", "_rebuild_tensor_v2"); };
    const auto storage = [](Pickle& p) {
        p.mark().str("storage").global("torch", "FloatStorage").str("0").str("cpu").integer(4).tuple().op('Q');
    };
    Pickle p;
    p.proto().op('}').put(0).get(1).stop();
    EXPECT_CONTAINS(error(p), "offset 5 (BINGET): memo has no entry 1");
    p = {};
    p.proto().op('s').stop();
    EXPECT_CONTAINS(error(p), "(SETITEM): stack underflow");
    p = {};
    p.proto().op('}').mark().op('s').stop();  // the dict is below the mark: invisible
    EXPECT_CONTAINS(error(p), "stack underflow");
    p = {};
    p.proto().op('}').op('t').stop();
    EXPECT_CONTAINS(error(p), "no MARK to pop to");
    p = {};
    p.proto().op('}').op(0x81).stop();
    EXPECT_CONTAINS(error(p), "opcode NEWOBJ (0x81) is not allowed");
    p = {};
    p.proto().op('}').op('i').raw("os\nsystem\n").stop();
    EXPECT_CONTAINS(error(p), "opcode INST (0x69) is not allowed");
    p = {};
    p.proto().op('}').op(0xFF).stop();
    EXPECT_CONTAINS(error(p), "unknown opcode 0xff");
    p = {};
    p.op('}').stop();
    EXPECT_CONTAINS(error(p), "no PROTO opcode");
    p = {};
    p.proto(6).op('}').stop();
    EXPECT_CONTAINS(error(p), "unsupported pickle protocol 6");
    p = {};
    p.proto().op('}');
    EXPECT_CONTAINS(error(p), "no STOP opcode");
    p = {};
    p.proto().op('}').stop().op('N');
    EXPECT_CONTAINS(error(p), "1 trailing bytes after STOP");
    p = {};
    p.proto().op('}').op('}').stop();
    EXPECT_CONTAINS(error(p), "STOP with 2 values on the stack");
    p = {};
    p.proto().op(']').stop();
    EXPECT_CONTAINS(error(p), "the pickled object is a list, not a dict of tensors");
    p = {};
    p.proto().op('}').integer(1).integer(2).op('s').stop();
    EXPECT_CONTAINS(error(p), "top-level key 0 is a int, not a str");
    p = {};
    p.proto().op('}').op(0x95);
    put64(p.b, 1000);
    EXPECT_CONTAINS(error(p), "frame of 1000 bytes runs past the end");
    p = {};
    p.proto().op('X');
    put32(p.b, 0xFFFFFFF0u);
    EXPECT_CONTAINS(error(p), "(BINUNICODE): truncated pickle");
    p = {};
    p.proto().op('}').op(0x8c).op(2).op(0xC3).op(0x28).stop();
    EXPECT_CONTAINS(error(p), "not valid UTF-8");
    p = {};
    p.proto().op('}').op(0x8a).op(9).raw("123456789").stop();
    EXPECT_CONTAINS(error(p), "integer of 9 bytes");
    p = {};
    p.proto().op('}').op('c').raw("collections OrderedDict").stop();
    EXPECT_CONTAINS(error(p), "newline-terminated");
    p = {};
    p.proto().global("torch", "FloatStorage").op(')').op('R').stop();
    EXPECT_CONTAINS(error(p), "a storage type is not callable");
    p = {};
    p.proto().global("collections", "OrderedDict").integer(1).op(0x85).op('R').stop();
    EXPECT_CONTAINS(error(p), "OrderedDict is only rebuilt from an empty argument tuple");
    p = {};
    p.proto().op('}').op('}').op('b').stop();
    EXPECT_CONTAINS(error(p), "BUILD on a dict");
    p = {};
    p.proto().op('}').op(']').integer(1).op('s').stop();
    EXPECT_CONTAINS(error(p), "unsupported dict key type list");
    p = {};
    p.proto().op('}').mark().str("storage").tuple().op('Q').stop();
    EXPECT_CONTAINS(error(p), "persistent id must be ('storage', storage_type, key, location, numel)");
    p = {};
    p.proto().op('}').mark().str("storage").global("collections", "OrderedDict").str("0").str("cpu").integer(4);
    p.tuple().op('Q').stop();
    EXPECT_CONTAINS(error(p), "storage type is not a torch.*Storage global");
    // _rebuild_tensor_v2 with wrong argument shapes.
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark().integer(0).tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "_rebuild_tensor_v2 takes (storage, storage_offset, size, stride, requires_grad, "
                              "backward_hooks[, metadata]), got 1 arguments");
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark().str("storage").integer(0).ints({4}).ints({1}).op(0x89).op('}').tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "storage must be a persistent storage, not str");
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark();
    storage(p);
    p.integer(0).ints({4}).integer(1).op(0x89).op('}').tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "stride must be a tuple, not int");
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark();
    storage(p);
    p.integer(0).ints({4}).ints({1}).integer(0).op('}').tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "requires_grad must be a bool, not int");
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark();
    storage(p);
    p.integer(0).ints({4}).ints({1}).op(0x89).op('}').str("k").integer(1).op('s').tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "backward_hooks must be an empty OrderedDict");
    p = {};
    p.proto().op('}');
    rebuild(p);
    p.mark();
    storage(p);
    p.integer(0).ints({4}).ints({1}).op(0x89).op('}').op('}').str("k").integer(1).op('s').tuple().op('R').stop();
    EXPECT_CONTAINS(error(p), "tensor metadata (a non-empty dict) is not supported");
    p = {};
    p.proto().op('}').global("torch._utils", "_rebuild_parameter").integer(1).op(0x88).op('}').op(0x87).op('R');
    p.stop();
    EXPECT_CONTAINS(error(p), "_rebuild_parameter's data must be a tensor, not int");
}

TEST(TorchCheckpointRefuses, ResourceLimits) {
    tc::Options small;
    small.max_marks = 8;
    small.max_stack = 64;
    small.max_memo = 4;
    small.max_objects = 100;
    Pickle p;
    p.proto();
    for (int i = 0; i < 9; ++i) p.mark();
    EXPECT_CONTAINS(load_error(simple(p.b), small), "more than 8 nested MARKs");
    p = {};
    p.proto();
    for (int i = 0; i < 65; ++i) p.op('N');
    EXPECT_CONTAINS(load_error(simple(p.b), small), "pickle stack deeper than 64");
    p = {};
    p.proto().op('N');
    for (int i = 0; i < 5; ++i) p.put(static_cast<uint8_t>(i));
    EXPECT_CONTAINS(load_error(simple(p.b), small), "more than 4 memo entries");
    p = {};
    p.proto().op(']');
    for (int i = 0; i < 101; ++i) p.op(']').op('a');
    EXPECT_CONTAINS(load_error(simple(p.b), small), "more than 100 pickle values");
    tc::Options tiny;
    tiny.max_pickle_bytes = 16;
    EXPECT_CONTAINS(load_error(simple(state_dict({{"w", "0", 4, {4}, {1}}})), tiny), "more than the limit of 16");
    tiny = {};
    tiny.max_zip_entries = 2;
    EXPECT_CONTAINS(load_error(simple(state_dict({{"w", "0", 4, {4}, {1}}})), tiny), "3 entries, more than");
}

// ---------------------------------------------------------------------------
// Deterministic mutation fuzzing of the golden checkpoints.

struct Random {
    uint64_t state;
    uint64_t next() {  // splitmix64: the same sequence on every platform
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

// Bytes that matter to the reader: opcodes, small ints, zip signatures.
const uint8_t interesting[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xff, 'X', 'Q', 'R', 'b', 'c', 'h', 'j', 'q', 'r',
                               's',  'u',  't',  '(',  ')',  '}',  ']', '.', 0x85, 0x87, 0x89, 0x8a, 0x93, 0x95, 'P',
                               'K'};

void mutate(Bytes& b, size_t begin, size_t end, Random& r) {
    if (end <= begin) return;
    const int mutations = 1 + static_cast<int>(r.below(4));
    for (int m = 0; m < mutations && end > begin; ++m) {
        const size_t at = begin + r.below(end - begin);
        switch (r.below(7)) {
        case 0: b[at] ^= static_cast<uint8_t>(1u << r.below(8)); break;
        case 1: b[at] = static_cast<uint8_t>(r.next()); break;
        case 2: b[at] = interesting[r.below(sizeof interesting)]; break;
        case 3: {  // insert a few bytes
            const size_t n = 1 + r.below(8);
            Bytes extra(n);
            for (auto& x : extra) x = r.below(2) ? interesting[r.below(sizeof interesting)] : static_cast<uint8_t>(r.next());
            b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
            end += n;
            break;
        }
        case 4: {  // delete a few bytes
            const size_t n = std::min<size_t>(1 + r.below(16), end - at);
            b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(at + n));
            end -= n;
            break;
        }
        case 5: {  // overwrite with a little-endian 16/32-bit boundary value
            static const uint32_t values[] = {0, 1, 0x7f, 0xff, 0xffff, 0x7fffffff, 0xffffffff, 0x10000};
            const uint32_t v = values[r.below(8)];
            for (size_t k = 0; k < 4 && at + k < end; ++k) b[at + k] = static_cast<uint8_t>(v >> (8 * k));
            break;
        }
        case 6:  // truncate the region
            b.erase(b.begin() + static_cast<std::ptrdiff_t>(at), b.begin() + static_cast<std::ptrdiff_t>(end));
            end = at;
            break;
        }
    }
}

struct FuzzCounts {
    uint64_t tried = 0, loaded = 0, refused = 0, tensors_read = 0;
};

// Loads `bytes`; a load that succeeds has its changed tensors read.
void try_load(const Bytes& bytes, const tc::Options& options, const std::map<std::string, tc::Shape>& original,
              FuzzCounts& counts, const std::string& label) {
    ++counts.tried;
    try {
        const auto c = tc::Checkpoint::borrow(bytes.data(), bytes.size(), label, options);
        ++counts.loaded;
        for (const auto& t : c.tensors()) {
            const auto it = original.find(t.name);
            if (it != original.end() && it->second == t.shape && t.is_contiguous() && t.storage_offset == 0) continue;
            if (tc::is_floating_point(t.dtype))
                (void)c.read_f32(t);
            else
                (void)c.read_i64(t);
            ++counts.tensors_read;
        }
    } catch (const tc::TorchCheckpointError&) {
        ++counts.refused;
    } catch (const std::exception& e) {
        ADD_FAILURE() << label << ": unexpected exception: " << e.what();
    } catch (...) {
        ADD_FAILURE() << label << ": unexpected non-standard exception";
    }
}

TEST(TorchCheckpointFuzz, MutatedGoldenCheckpointsLoadOrFailCleanly) {
    REQUIRE_GOLDEN();
    const auto start = std::chrono::steady_clock::now();
    constexpr int pickle_mutations = 2500;   // per file: data.pkl mutated, CRC fixed
    constexpr int archive_mutations = 1500;  // per file: zip structures mutated in place
    FuzzCounts pickle_counts, archive_counts;
    uint64_t seed = 20240601;
    for (const fs::path file : {golden_dir / "encodec" / "checkpoint.th", golden_dir / "encodec48" / "checkpoint.th",
                                golden_dir / "speechtokenizer" / "checkpoint.pt"}) {
        const Bytes golden = read_file(file);
        std::map<std::string, tc::Shape> original;
        const auto reference = tc::Checkpoint::from_bytes(golden, "golden");
        for (const auto& t : reference.tensors()) original[t.name] = t.shape;
        std::vector<ZipFile> files = read_zip(golden);
        ASSERT_EQ(files[0].name, "checkpoint/data.pkl");
        const Bytes pickle = files[0].data;
        for (auto& f : files) {
            f.crc = tc::crc32(f.data.data(), f.data.size());
            f.crc_known = true;
        }
        files[0].crc_known = false;  // mutated each time
        tc::Options options;
        options.verify_crc = false;  // storages are not mutated here; data.pkl's CRC is always checked

        Random r{seed++};
        Bytes buffer;  // reused: only the mutated bytes change from one load to the next
        for (int i = 0; i < pickle_mutations; ++i) {
            files[0].data = pickle;
            mutate(files[0].data, 0, files[0].data.size(), r);
            make_zip_into(buffer, files, ZipStyle{true, false, true, 64});
            try_load(buffer, options, original, pickle_counts,
                     file.filename().string() + " pickle mutation " + std::to_string(i));
        }
        files[0].data = pickle;

        // The zip structures: the central directory and end records, the
        // local headers, or the whole file (truncations).
        const size_t cd = get32(golden, golden.size() - 22 + 16);
        for (int i = 0; i < archive_mutations; ++i) {
            Bytes& mutated = buffer;
            mutated.assign(golden.begin(), golden.end());
            switch (r.below(3)) {
            case 0: mutate(mutated, cd, mutated.size(), r); break;
            case 1: {
                // A local header (30 bytes + name + extra) of a random entry.
                size_t pos = cd;
                const size_t entry = r.below(files.size());
                for (size_t k = 0; k < entry; ++k) pos += 46 + get16(golden, pos + 28) + get16(golden, pos + 30);
                const size_t local = get32(golden, pos + 42);
                mutate(mutated, local, local + 30 + get16(golden, local + 26) + get16(golden, local + 28), r);
                break;
            }
            case 2: mutated.resize(r.below(mutated.size())); break;
            }
            tc::Options o = options;
            o.verify_crc = i % 50 == 0;
            try_load(mutated, o, original, archive_counts,
                     file.filename().string() + " archive mutation " + std::to_string(i));
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "fuzz: data.pkl mutations " << pickle_counts.tried << " (loaded " << pickle_counts.loaded
              << ", refused " << pickle_counts.refused << ", changed tensors read " << pickle_counts.tensors_read
              << "); archive mutations " << archive_counts.tried << " (loaded " << archive_counts.loaded
              << ", refused " << archive_counts.refused << "); " << seconds << " s\n";
    EXPECT_EQ(pickle_counts.loaded + pickle_counts.refused, pickle_counts.tried);
    EXPECT_EQ(archive_counts.loaded + archive_counts.refused, archive_counts.tried);
    EXPECT_GT(pickle_counts.refused, 0u);
    EXPECT_GT(pickle_counts.loaded, 0u);  // harmless mutations (a changed name or value) still load
}

}  // namespace
