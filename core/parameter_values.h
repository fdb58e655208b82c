// The definition of the opaque cdz_params: a plugin's parameters after
// validation, with defaults filled in and paths made absolute.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cadenza/plugin.h"

namespace cadenza {

struct ParameterValue {
    cdz_param_type type = CDZ_PARAM_BOOL;
    bool boolean = false;
    int64_t integer = 0;
    double number = 0.0;
    std::string text;                    // STRING and PATH
    std::vector<int64_t> integers;       // INT_ARRAY
    std::vector<double> numbers;         // FLOAT_ARRAY
    std::vector<std::string> texts;      // STRING_ARRAY
    std::vector<const char*> text_views; // C views of `texts`, kept in step
    bool from_default = false;
};

}  // namespace cadenza

struct cdz_params {
    std::string owner;  // the plugin's name, for messages
    std::map<std::string, cadenza::ParameterValue> values;
};

namespace cadenza {

// Looks a parameter up for the host table, checking that it exists and has
// the expected type; throws cadenza::Error otherwise.
const ParameterValue& parameter_lookup(const cdz_params& params, const char* key,
                                       cdz_param_type expected);

const char* param_type_name(cdz_param_type type);

}  // namespace cadenza
