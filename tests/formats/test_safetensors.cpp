// The safetensors library: round trips, exact f16/bf16 conversions, every
// malformed header the reader must refuse, and sharded checkpoints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "safetensors.h"

namespace st = cadenza::safetensors;
namespace fs = std::filesystem;

namespace {

class SafetensorsTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        directory_ = fs::temp_directory_path() /
                     ("cadenza_safetensors_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(directory_);
        fs::create_directories(directory_);
    }
    void TearDown() override { fs::remove_all(directory_); }

    fs::path path(const std::string& name) const { return directory_ / name; }

    // A file with the given header text and data bytes; `length` overrides
    // the header length field.
    fs::path raw(const std::string& name, const std::string& header, const std::string& data = {},
                 int64_t length = -1) const {
        const fs::path file = path(name);
        std::ofstream out(file, std::ios::binary);
        const uint64_t n = length >= 0 ? static_cast<uint64_t>(length) : header.size();
        for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
        out << header << data;
        return file;
    }

    // Opening `file` fails with a message containing every fragment.
    static void expect_open_error(const fs::path& file, const std::vector<std::string>& fragments) {
        try {
            st::File opened(file);
            FAIL() << "opened " << file << " without an error";
        } catch (const st::Error& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find(file.string()), std::string::npos) << message;
            for (const auto& fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
        }
    }

    fs::path directory_;
};

std::string error_of(const std::function<void()>& body) {
    try {
        body();
    } catch (const st::Error& error) {
        return error.what();
    }
    return "(no error)";
}

uint32_t bits_of(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
}

TEST_F(SafetensorsTest, RoundTripsEveryWrittenDtypeWithMetadata) {
    const std::vector<float> matrix = {0.5f, -1.25f, 3.0f, 1e-3f, 65504.0f, -0.0f};
    const std::vector<int32_t> ints = {1, -2, 2147483647};
    const std::vector<int64_t> longs = {-9223372036854775807LL, 42};
    st::Writer writer;
    writer.set_metadata("format", "pt");
    writer.set_metadata("note", "round trip");
    writer.add_f32("a.f32", {2, 3}, matrix.data());
    writer.add_f16("b.f16", {3, 2}, matrix.data());
    writer.add_bf16("c.bf16", {6}, matrix.data());
    writer.add_i32("d.i32", {3}, ints.data());
    writer.add_i64("e.i64", {2, 1}, longs.data());
    writer.add_f32("f.empty", {0, 4}, nullptr);
    writer.write(path("model.safetensors"));

    const st::File file(path("model.safetensors"));
    EXPECT_EQ(file.metadata().at("format"), "pt");
    EXPECT_EQ(file.metadata().at("note"), "round trip");
    ASSERT_EQ(file.tensors().size(), 6u);
    EXPECT_EQ(file.info("a.f32").shape, (st::Shape{2, 3}));
    EXPECT_EQ(file.info("b.f16").dtype, st::DType::F16);
    EXPECT_EQ(file.info("c.bf16").dtype, st::DType::BF16);
    EXPECT_EQ(file.read_f32("a.f32", {2, 3}), matrix);
    const std::vector<float> halves = file.read_f32("b.f16");
    const std::vector<float> brains = file.read_f32("c.bf16");
    for (size_t i = 0; i < matrix.size(); ++i) {
        EXPECT_EQ(bits_of(halves[i]), bits_of(st::f16_to_f32(st::f32_to_f16(matrix[i])))) << i;
        EXPECT_EQ(bits_of(brains[i]), bits_of(st::bf16_to_f32(st::f32_to_bf16(matrix[i])))) << i;
        EXPECT_NEAR(halves[i], matrix[i], std::fabs(matrix[i]) * 1e-3) << i;
    }
    EXPECT_EQ(bits_of(halves[5]), 0x80000000u);  // -0 kept
    EXPECT_EQ(file.read_i64("d.i32"), (std::vector<int64_t>{1, -2, 2147483647}));
    EXPECT_EQ(file.read_i64("e.i64", {2, -1}), longs);
    EXPECT_TRUE(file.read_f32("f.empty").empty());
    // Every tensor starts 8-byte aligned within the data section, and the
    // header length is a multiple of 8.
    for (const auto& tensor : file.tensors()) EXPECT_EQ(tensor.data_begin % 8, 0u) << tensor.name;
    std::ifstream raw(path("model.safetensors"), std::ios::binary);
    uint64_t header_length = 0;
    raw.read(reinterpret_cast<char*>(&header_length), 8);
    EXPECT_EQ(header_length % 8, 0u);
}

TEST_F(SafetensorsTest, ReadsRowRanges) {
    std::vector<float> values(5 * 3);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
    st::Writer writer;
    writer.add_bf16("m", {5, 3}, values.data());
    writer.write(path("rows.safetensors"));
    const st::File file(path("rows.safetensors"));
    std::vector<float> rows(2 * 3);
    file.read_f32_rows("m", 2, 4, rows.data());
    EXPECT_EQ(rows, (std::vector<float>{6, 7, 8, 9, 10, 11}));
    const std::string message = error_of([&] { file.read_f32_rows("m", 3, 6, rows.data()); });
    EXPECT_NE(message.find("tensor 'm'"), std::string::npos) << message;
    EXPECT_NE(message.find("[3, 6)"), std::string::npos) << message;
}

TEST_F(SafetensorsTest, HalfPrecisionKnownValuesConvertExactly) {
    const struct {
        uint16_t bits;
        float value;
    } table[] = {
        {0x0000, 0.0f},           {0x3c00, 1.0f},          {0xc000, -2.0f},
        {0x3555, 0.333251953125f}, {0x3bff, 0.99951171875f}, {0x7bff, 65504.0f},
        {0x0400, 6.103515625e-05f}, {0x0001, 5.9604644775390625e-08f}, {0x03ff, 6.097555160522461e-05f},
        {0x4248, 3.140625f},      {0xd640, -100.0f},
    };
    for (const auto& row : table) {
        EXPECT_EQ(bits_of(st::f16_to_f32(row.bits)), bits_of(row.value)) << std::hex << row.bits;
        EXPECT_EQ(st::f32_to_f16(row.value), row.bits) << row.value;
    }
    EXPECT_EQ(bits_of(st::f16_to_f32(0x8000)), 0x80000000u);
    EXPECT_TRUE(std::isinf(st::f16_to_f32(0x7c00)) && st::f16_to_f32(0x7c00) > 0);
    EXPECT_TRUE(std::isinf(st::f16_to_f32(0xfc00)) && st::f16_to_f32(0xfc00) < 0);
    EXPECT_TRUE(std::isnan(st::f16_to_f32(0x7e00)));
    EXPECT_TRUE(std::isnan(st::f16_to_f32(0x7c01)));
    // Rounding to nearest even, overflow and underflow.
    EXPECT_EQ(st::f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie, to even
    EXPECT_EQ(st::f32_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie, to even (up)
    EXPECT_EQ(st::f32_to_f16(1.0f + std::ldexp(1.5f, -11)), 0x3c01);      // above the tie
    EXPECT_EQ(st::f32_to_f16(65519.0f), 0x7bff);
    EXPECT_EQ(st::f32_to_f16(65520.0f), 0x7c00);
    EXPECT_EQ(st::f32_to_f16(-1e10f), 0xfc00);
    EXPECT_EQ(st::f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);             // tie between 0 and the smallest subnormal
    EXPECT_EQ(st::f32_to_f16(std::ldexp(1.5f, -25)), 0x0001);
    EXPECT_EQ(st::f32_to_f16(std::ldexp(1.0f, -26)), 0x0000);
    EXPECT_EQ(st::f32_to_f16(std::ldexp(1023.5f, -24)), 0x0400);          // rounds up into the normals
    EXPECT_EQ(st::f32_to_f16(-0.0f), 0x8000);
    EXPECT_EQ(st::f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
    EXPECT_EQ(st::f32_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x7c00, 0x7c00);
    EXPECT_NE(st::f32_to_f16(std::numeric_limits<float>::quiet_NaN()) & 0x03ff, 0);
    // Every f16 value survives f16 -> f32 -> f16.
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const float value = st::f16_to_f32(static_cast<uint16_t>(bits));
        if (std::isnan(value)) continue;
        ASSERT_EQ(st::f32_to_f16(value), bits) << std::hex << bits;
    }
}

TEST_F(SafetensorsTest, BrainFloatKnownValuesConvertExactly) {
    const struct {
        uint16_t bits;
        float value;
    } table[] = {
        {0x0000, 0.0f}, {0x3f80, 1.0f}, {0x4049, 3.140625f}, {0xc2f7, -123.5f},
        {0x7f7f, 3.3895313892515355e38f}, {0x0080, 1.1754943508222875e-38f}, {0x0001, 9.183549615799121e-41f},
    };
    for (const auto& row : table) {
        EXPECT_EQ(bits_of(st::bf16_to_f32(row.bits)), bits_of(row.value)) << std::hex << row.bits;
        EXPECT_EQ(st::f32_to_bf16(row.value), row.bits) << row.value;
    }
    EXPECT_TRUE(std::isinf(st::bf16_to_f32(0x7f80)));
    EXPECT_TRUE(std::isnan(st::bf16_to_f32(0x7fc0)));
    EXPECT_EQ(st::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie, to even
    EXPECT_EQ(st::f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie, to even (up)
    EXPECT_EQ(st::f32_to_bf16(1.0f + std::ldexp(1.5f, -8)), 0x3f81);
    EXPECT_EQ(st::f32_to_bf16(std::numeric_limits<float>::max()), 0x7f80); // rounds to infinity
    EXPECT_TRUE(std::isnan(st::bf16_to_f32(st::f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
    // A signalling NaN whose payload sits in the low bits stays a NaN.
    const uint32_t signalling = 0x7f800001u;
    float snan;
    std::memcpy(&snan, &signalling, sizeof(snan));
    EXPECT_TRUE(std::isnan(st::bf16_to_f32(st::f32_to_bf16(snan))));
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
        const float value = st::bf16_to_f32(static_cast<uint16_t>(bits));
        if (std::isnan(value)) continue;
        ASSERT_EQ(st::f32_to_bf16(value), bits) << std::hex << bits;
    }
}

TEST_F(SafetensorsTest, ReadsHalfTensorsThroughTheConversion) {
    const std::vector<uint16_t> bits = {0x3c00, 0x0001, 0xfc00, 0x7bff};
    st::Writer writer;
    writer.add("h", st::DType::F16, {4}, bits.data(), 8);
    writer.add("b", st::DType::BF16, {4}, bits.data(), 8);
    writer.write(path("half.safetensors"));
    const st::File file(path("half.safetensors"));
    const auto h = file.read_f32("h"), b = file.read_f32("b");
    for (size_t i = 0; i < bits.size(); ++i) {
        EXPECT_EQ(bits_of(h[i]), bits_of(st::f16_to_f32(bits[i])));
        EXPECT_EQ(bits_of(b[i]), bits_of(st::bf16_to_f32(bits[i])));
    }
}

TEST_F(SafetensorsTest, RefusesTooShortFile) {
    expect_open_error(raw("short.safetensors", "", "", 0), {"too short"});
    std::ofstream(path("tiny.safetensors"), std::ios::binary) << "abc";
    expect_open_error(path("tiny.safetensors"), {"too short", "3 bytes"});
}

TEST_F(SafetensorsTest, RefusesHeaderLengthBeyondTheFile) {
    expect_open_error(raw("long.safetensors", "{}", "", 1000), {"header length 1000", "beyond the end"});
}

TEST_F(SafetensorsTest, RefusesInvalidJson) {
    expect_open_error(raw("json.safetensors", "{\"a\": {\"dtype\": \"F32\",}"), {"invalid JSON"});
}

TEST_F(SafetensorsTest, RefusesNonObjectHeader) {
    expect_open_error(raw("array.safetensors", "[1, 2]  "), {"not a JSON object"});
    expect_open_error(raw("entry.safetensors", "{\"a\": 3}"), {"tensor 'a'", "not an object"});
}

TEST_F(SafetensorsTest, RefusesUnknownDtype) {
    expect_open_error(raw("dtype.safetensors", R"({"w": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}})",
                          std::string(4, '\0')),
                      {"tensor 'w'", "unknown dtype 'F33'"});
}

TEST_F(SafetensorsTest, RefusesBadShapes) {
    expect_open_error(raw("negative.safetensors", R"({"w": {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 8]}})",
                          std::string(8, '\0')),
                      {"tensor 'w'", "bad shape"});
    expect_open_error(raw("fraction.safetensors", R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})",
                          std::string(4, '\0')),
                      {"tensor 'w'", "bad shape"});
    expect_open_error(raw("noshape.safetensors", R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})",
                          std::string(4, '\0')),
                      {"tensor 'w'", "shape"});
    expect_open_error(
        raw("overflow.safetensors",
            R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})"),
        {"tensor 'w'", "overflows"});
}

TEST_F(SafetensorsTest, RefusesOffsetsThatDoNotMatchTheShape) {
    expect_open_error(raw("size.safetensors", R"({"w": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 8]}})",
                          std::string(16, '\0')),
                      {"tensor 'w'", "hold 8 bytes", "needs 12"});
    expect_open_error(raw("reversed.safetensors", R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 0]}})",
                          std::string(8, '\0')),
                      {"tensor 'w'", "bad data_offsets"});
}

TEST_F(SafetensorsTest, RefusesOutOfBoundsTensor) {
    expect_open_error(raw("bounds.safetensors", R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
                          std::string(12, '\0')),
                      {"tensor 'w'", "beyond the data section (12 bytes)"});
}

TEST_F(SafetensorsTest, RefusesOverlappingTensors) {
    expect_open_error(raw("overlap.safetensors",
                          R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                          std::string(12, '\0')),
                      {"'a'", "'b'", "overlap"});
}

TEST_F(SafetensorsTest, RefusesDuplicateKeysUnknownFieldsAndBadMetadata) {
    expect_open_error(raw("dup.safetensors",
                          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                          R"( "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                          std::string(8, '\0')),
                      {"'a' twice"});
    expect_open_error(raw("field.safetensors",
                          R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "stride": 1}})",
                          std::string(4, '\0')),
                      {"tensor 'a'", "unexpected field 'stride'"});
    expect_open_error(raw("meta.safetensors", R"({"__metadata__": {"n": 3}})"), {"__metadata__", "not a string"});
}

TEST_F(SafetensorsTest, AcceptsPaddedHeadersAndGaps) {
    const st::File file(raw("gap.safetensors",
                            R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}     )",
                            std::string(12, '\0')));
    EXPECT_EQ(file.read_f32("a"), std::vector<float>{0.0f});
}

TEST_F(SafetensorsTest, ReportsMissingTensorsAndShapeMismatches) {
    const std::vector<float> values(6, 1.0f);
    st::Writer writer;
    writer.add_f32("layer.weight", {2, 3}, values.data());
    writer.write(path("m.safetensors"));
    const st::File file(path("m.safetensors"));
    std::string message = error_of([&] { file.info("layer.bias"); });
    EXPECT_NE(message.find(path("m.safetensors").string()), std::string::npos) << message;
    EXPECT_NE(message.find("'layer.bias'"), std::string::npos) << message;
    message = error_of([&] { file.read_f32("layer.weight", {3, 2}); });
    EXPECT_NE(message.find("'layer.weight'"), std::string::npos) << message;
    EXPECT_NE(message.find("[2, 3]"), std::string::npos) << message;
    EXPECT_NE(message.find("expected [3, 2]"), std::string::npos) << message;
    EXPECT_NO_THROW(file.info("layer.weight", {-1, 3}));
    message = error_of([&] { file.read_i64("layer.weight"); });
    EXPECT_NE(message.find("not an integer type"), std::string::npos) << message;
    const std::vector<int32_t> ints = {1};
    st::Writer int_writer;
    int_writer.add_i32("i", {1}, ints.data());
    int_writer.write(path("i.safetensors"));
    message = error_of([&] { st::File(path("i.safetensors")).read_f32("i"); });
    EXPECT_NE(message.find("cannot be read as float32"), std::string::npos) << message;
    message = error_of([&] { st::File(path("absent.safetensors")); });
    EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
}

TEST_F(SafetensorsTest, WriterRefusesInconsistentTensors) {
    st::Writer writer;
    const float value = 1.0f;
    writer.add_f32("a", {1}, &value);
    EXPECT_THROW(writer.add_f32("a", {1}, &value), st::Error);
    EXPECT_THROW(writer.add("b", st::DType::F32, {2}, &value, 4), st::Error);
    EXPECT_THROW(writer.add("__metadata__", st::DType::F32, {1}, &value, 4), st::Error);
    EXPECT_THROW(writer.add("c", st::DType::F32, {-1}, &value, 4), st::Error);
}

TEST_F(SafetensorsTest, OpensShardedCheckpoints) {
    const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6};
    st::Writer first, second;
    first.add_f32("embed.weight", {2, 2}, a.data());
    second.add_bf16("head.weight", {2}, b.data());
    fs::create_directories(path("ckpt"));
    first.write(path("ckpt") / "model-00001-of-00002.safetensors");
    second.write(path("ckpt") / "model-00002-of-00002.safetensors");
    std::ofstream(path("ckpt") / "model.safetensors.index.json")
        << R"({"metadata": {"total_size": 20}, "weight_map": {)"
        << R"("embed.weight": "model-00001-of-00002.safetensors", "head.weight": "model-00002-of-00002.safetensors"}})";

    for (const fs::path& where : {path("ckpt"), path("ckpt") / "model.safetensors.index.json"}) {
        const st::Checkpoint checkpoint = st::Checkpoint::open(where);
        EXPECT_EQ(checkpoint.shard_count(), 2u);
        EXPECT_EQ(checkpoint.names(), (std::vector<std::string>{"embed.weight", "head.weight"}));
        EXPECT_EQ(checkpoint.metadata().at("total_size"), "20");
        EXPECT_EQ(checkpoint.read_f32("embed.weight", {2, 2}), a);
        EXPECT_EQ(checkpoint.read_f32("head.weight"), b);
        EXPECT_NE(checkpoint.file_of("head.weight").path().string().find("00002"), std::string::npos);
        const std::string message = error_of([&] { checkpoint.info("lm_head.weight"); });
        EXPECT_NE(message.find("'lm_head.weight'"), std::string::npos) << message;
    }
    // A single file opens as a one-shard checkpoint.
    EXPECT_EQ(st::Checkpoint::open(path("ckpt") / "model-00001-of-00002.safetensors").names(),
              std::vector<std::string>{"embed.weight"});
}

TEST_F(SafetensorsTest, RefusesBrokenIndexes) {
    const std::vector<float> a = {1, 2};
    st::Writer writer;
    writer.add_f32("x", {2}, a.data());
    writer.write(path("shard.safetensors"));
    auto index = [&](const std::string& name, const std::string& text) {
        std::ofstream(path(name)) << text;
        return error_of([&] { st::Checkpoint::open(path(name)); });
    };
    std::string message = index("missing.json", R"({"weight_map": {"x": "nowhere.safetensors"}})");
    EXPECT_NE(message.find("shard 'nowhere.safetensors'"), std::string::npos) << message;
    EXPECT_NE(message.find("does not exist"), std::string::npos) << message;
    message = index("wrong.json", R"({"weight_map": {"y": "shard.safetensors"}})");
    EXPECT_NE(message.find("tensor 'y'"), std::string::npos) << message;
    EXPECT_NE(message.find("does not hold it"), std::string::npos) << message;
    message = index("nomap.json", R"({"metadata": {}})");
    EXPECT_NE(message.find("weight_map"), std::string::npos) << message;
    message = index("escape.json", R"({"weight_map": {"x": "../shard.safetensors"}})");
    EXPECT_NE(message.find("not a relative path inside"), std::string::npos) << message;
    message = index("broken.json", R"({"weight_map": )");
    EXPECT_NE(message.find("invalid JSON"), std::string::npos) << message;
    message = error_of([&] { st::Checkpoint::open(path("")); });
    EXPECT_NE(message.find("neither"), std::string::npos) << message;
}

}  // namespace
