#include "strict_json.h"

#include <unordered_set>
#include <utility>
#include <vector>

namespace cadenza::json_format {
namespace {

using json = nlohmann::json;

// nlohmann's own DOM builder, with each object's keys checked as they come.
class StrictSax {
public:
    StrictSax(json& result, std::size_t max_depth) : dom_(result, /*allow_exceptions=*/true), max_depth_(max_depth) {}

    bool null() { return dom_.null(); }
    bool boolean(bool value) { return dom_.boolean(value); }
    bool number_integer(json::number_integer_t value) { return dom_.number_integer(value); }
    bool number_unsigned(json::number_unsigned_t value) { return dom_.number_unsigned(value); }
    bool number_float(json::number_float_t value, const json::string_t& text) { return dom_.number_float(value, text); }
    bool string(json::string_t& value) { return dom_.string(value); }
    bool binary(json::binary_t& value) { return dom_.binary(value); }
    bool start_object(std::size_t elements) {
        if (!enter()) return false;
        keys_.emplace_back();
        return dom_.start_object(elements);
    }
    bool key(json::string_t& name) {
        if (!keys_.back().insert(name).second) {
            problem_ = "an object has the key '" + name + "' twice";
            return false;
        }
        return dom_.key(name);
    }
    bool end_object() {
        keys_.pop_back();
        --depth_;
        return dom_.end_object();
    }
    bool start_array(std::size_t elements) { return enter() && dom_.start_array(elements); }
    bool end_array() {
        --depth_;
        return dom_.end_array();
    }
    template <class Exception>
    bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
        return dom_.parse_error(position, token, error);  // throws
    }

    const std::string& problem() const { return problem_; }

private:
    nlohmann::detail::json_sax_dom_parser<json> dom_;
    std::vector<std::unordered_set<std::string>> keys_;
    std::size_t depth_ = 0, max_depth_;
    std::string problem_;

    bool enter() {
        if (++depth_ <= max_depth_) return true;
        problem_ = "arrays and objects nest deeper than " + std::to_string(max_depth_) + " levels";
        return false;
    }
};

}  // namespace

nlohmann::json parse_strict_json(const char* begin, const char* end, const std::string& where, std::size_t max_depth) {
    json result;
    StrictSax sax(result, max_depth);
    bool complete = false;
    try {
        complete = json::sax_parse(begin, end, &sax, nlohmann::detail::input_format_t::json, /*strict=*/true);
    } catch (const json::exception& error) {
        throw StrictJsonError(where + ": invalid JSON: " + error.what());
    }
    if (!complete) throw StrictJsonError(where + ": " + (sax.problem().empty() ? "invalid JSON" : sax.problem()));
    return result;
}

nlohmann::json parse_strict_json(const std::string& text, const std::string& where, std::size_t max_depth) {
    return parse_strict_json(text.data(), text.data() + text.size(), where, max_depth);
}

}  // namespace cadenza::json_format
