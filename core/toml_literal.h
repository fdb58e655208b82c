// Values written as TOML literals for resolved pipelines: basic strings with
// escapes, and floats in the shortest form that reads back to the same value.
#pragma once

#include <string>

namespace cadenza {

std::string toml_string_literal(const std::string& text);
std::string toml_float_literal(double value);

}  // namespace cadenza
