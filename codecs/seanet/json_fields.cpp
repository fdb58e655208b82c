#include "json_fields.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cadenza/sdk/plugin_error.hpp"
#include "strict_json.h"

namespace cadenza::seanet {

namespace {

[[noreturn]] void wrong_type(const std::string& where, const char* expected, const nlohmann::json& value) {
    throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, where + " must be " + expected + ", not " + value.dump());
}

}  // namespace

int64_t json_int(const nlohmann::json& value, const std::string& where) {
    if (!value.is_number_integer()) wrong_type(where, "an integer", value);
    return value.get<int64_t>();
}

double json_number(const nlohmann::json& value, const std::string& where) {
    if (!value.is_number()) wrong_type(where, "a number", value);
    return value.get<double>();
}

bool json_bool(const nlohmann::json& value, const std::string& where) {
    if (!value.is_boolean()) wrong_type(where, "true or false", value);
    return value.get<bool>();
}

std::string json_string(const nlohmann::json& value, const std::string& where) {
    if (!value.is_string()) wrong_type(where, "a string", value);
    return value.get<std::string>();
}

std::vector<int64_t> json_int_list(const nlohmann::json& value, const std::string& where) {
    if (!value.is_array()) wrong_type(where, "a list of integers", value);
    std::vector<int64_t> out;
    for (size_t i = 0; i < value.size(); ++i) out.push_back(json_int(value[i], where + "[" + std::to_string(i) + "]"));
    return out;
}

std::vector<double> json_number_list(const nlohmann::json& value, const std::string& where) {
    if (!value.is_array()) wrong_type(where, "a list of numbers", value);
    std::vector<double> out;
    for (size_t i = 0; i < value.size(); ++i)
        out.push_back(json_number(value[i], where + "[" + std::to_string(i) + "]"));
    return out;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
    std::ifstream file(path);
    if (!file) throw sdk::Error(CDZ_STATUS_NOT_FOUND, "cannot open the config file " + path.string());
    std::stringstream text;
    text << file.rdbuf();
    try {
        return json_format::parse_strict_json(text.str(), path.string());
    } catch (const json_format::StrictJsonError& e) {
        throw sdk::Error(CDZ_STATUS_INVALID_CONFIG, e.what());
    }
}

}  // namespace cadenza::seanet
