// JSON as cadenza reads every file it is handed (safetensors headers, model
// configs, codec metadata): a duplicate key in any object, nesting deeper
// than a limit, or trailing content is an error rather than silently
// resolved. Linear in the text's length (nlohmann's callback parser, used
// before, rescans an object's members at every nested object's end:
// quadratic in a header's entries). No LibTorch; C++17.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace cadenza::json_format {

struct StrictJsonError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The default cap on nesting: the formats cadenza reads nest a few levels.
constexpr std::size_t default_max_json_depth = 64;

// Parses [begin, end); throws StrictJsonError whose message starts with
// `where` and says what is wrong (a parse error with its byte position, the
// duplicated key, the depth).
nlohmann::json parse_strict_json(const char* begin, const char* end, const std::string& where,
                                 std::size_t max_depth = default_max_json_depth);
nlohmann::json parse_strict_json(const std::string& text, const std::string& where,
                                 std::size_t max_depth = default_max_json_depth);

}  // namespace cadenza::json_format
