// Checks a TOML table against a plugin's parameter schema and turns it into
// validated values: unknown keys, wrong types, out-of-range values, missing
// required keys and missing files are all reported, each with its position.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "cadenza/plugin.h"
#include "diagnostic.h"
#include "parameter_values.h"

namespace cadenza {

struct SchemaContext {
    std::string owner;                 // plugin name, or "pipeline"
    std::string table_name;            // "[acceptor]"
    std::string file;                  // for diagnostics
    std::filesystem::path base_directory;  // PATH values are relative to it
    std::set<std::string> reserved_keys;   // keys the caller handles (e.g. "plugin")
};

// Appends every problem to `diagnostics`; the result holds every value that
// was valid, defaults included.
cdz_params validate_parameters(const SchemaContext& context, const std::vector<cdz_param_spec>& specs,
                               const toml::table& table, std::vector<Diagnostic>& diagnostics);

// Parses a spec's default literal. Throws cadenza::Error if it does not fit
// the spec's type and range, or if the spec has no default.
ParameterValue parse_default_value(const cdz_param_spec& spec);

// The parameter as a TOML literal, for printing resolved pipelines.
std::string format_parameter_value(const ParameterValue& value);

}  // namespace cadenza
