// Typed reads of JSON config values; each error names the field's path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cadenza::seanet {

int64_t json_int(const nlohmann::json& value, const std::string& where);    // an integer (2.0 is not)
double json_number(const nlohmann::json& value, const std::string& where);
bool json_bool(const nlohmann::json& value, const std::string& where);
std::string json_string(const nlohmann::json& value, const std::string& where);
std::vector<int64_t> json_int_list(const nlohmann::json& value, const std::string& where);
std::vector<double> json_number_list(const nlohmann::json& value, const std::string& where);

// Parses a JSON file; throws cadenza::sdk::Error naming the file and, for a
// syntax error, the byte where it is.
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace cadenza::seanet
