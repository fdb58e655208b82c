// The strict JSON reader every cadenza format goes through.
#include "strict_json.h"

#include <string>

#include <gtest/gtest.h>

namespace cadenza::json_format {
namespace {

std::string error_of(const std::string& text, std::size_t max_depth = default_max_json_depth) {
    try {
        parse_strict_json(text, "file.json", max_depth);
    } catch (const StrictJsonError& error) {
        return error.what();
    }
    return "";
}

TEST(StrictJson, ReadsWhatNlohmannReads) {
    const std::string text = R"({"a": [1, 2.5, -3, true, null], "b": {"c": "d", "e": {}}, "f": 18446744073709551615})";
    EXPECT_EQ(parse_strict_json(text, "x"), nlohmann::json::parse(text));
}

TEST(StrictJson, RefusesADuplicateKeyAtAnyDepthButNotInSiblings) {
    EXPECT_NE(error_of(R"({"a": 1, "a": 2})").find("'a' twice"), std::string::npos);
    EXPECT_NE(error_of(R"({"x": {"y": [{"k": 1, "k": 1}]}})").find("'k' twice"), std::string::npos);
    EXPECT_EQ(error_of(R"({"x": {"k": 1}, "y": {"k": 2}, "k": 3})"), "");
}

TEST(StrictJson, CapsNestingBeforeBuildingIt) {
    EXPECT_EQ(error_of(std::string(64, '[') + std::string(64, ']')), "");
    const std::string deep = error_of(std::string(65, '[') + std::string(65, ']'));
    EXPECT_NE(deep.find("deeper than 64"), std::string::npos) << deep;
    // A million levels: refused at level 65, not a stack overflow.
    const std::string hostile = error_of(std::string(1000000, '[') + std::string(1000000, ']'));
    EXPECT_NE(hostile.find("deeper than 64"), std::string::npos);
    EXPECT_NE(error_of("[[[]]]", 2).find("deeper than 2"), std::string::npos);
}

TEST(StrictJson, NamesTheFileOnSyntaxErrorsAndTrailingContent) {
    for (const char* text : {"{\"a\": }", "{} {}", "{\"a\": 1} x", "", "[1,]"}) {
        const std::string message = error_of(text);
        EXPECT_EQ(message.rfind("file.json: ", 0), 0u) << text << ": " << message;
    }
}

TEST(StrictJson, ManyKeysTakeLinearWork) {
    // 200,000 members (nlohmann's callback parser rescanned them at every
    // nested object: ~4e10 steps here); parsed and checked for duplicates.
    std::string text = "{";
    for (int i = 0; i < 200000; ++i) text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":{\"v\":[1]}";
    text += "}";
    EXPECT_EQ(parse_strict_json(text, "x").size(), 200000u);
}

}  // namespace
}  // namespace cadenza::json_format
