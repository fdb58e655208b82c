#include "parameter_schema.h"

#include <cmath>
#include <sstream>

#include "spelling_suggestion.h"
#include "toml_literal.h"

namespace cadenza {
namespace {

std::string describe_node_type(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a float";
        case toml::node_type::boolean: return "a bool";
        case toml::node_type::date: return "a date";
        case toml::node_type::time: return "a time";
        case toml::node_type::date_time: return "a date-time";
        default: return "nothing";
    }
}

std::string format_number(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

// Checks one scalar against the spec's element type; returns a problem or "".
std::string read_scalar(const toml::node& node, cdz_param_type element_type, const cdz_param_spec& spec,
                        ParameterValue& out) {
    auto range_problem = [&](double value) -> std::string {
        if (spec.has_range && (value < spec.min_value || value > spec.max_value))
            return "value " + format_number(value) + " is out of range [" + format_number(spec.min_value) +
                   ", " + format_number(spec.max_value) + "]";
        return {};
    };
    switch (element_type) {
        case CDZ_PARAM_BOOL:
            if (!node.is_boolean()) break;
            out.boolean = node.as_boolean()->get();
            return {};
        case CDZ_PARAM_INT: {
            if (!node.is_integer()) break;
            const int64_t value = node.as_integer()->get();
            out.integers.push_back(value);
            out.integer = value;
            return range_problem(static_cast<double>(value));
        }
        case CDZ_PARAM_FLOAT: {
            double value = 0.0;
            if (node.is_floating_point()) value = node.as_floating_point()->get();
            else if (node.is_integer()) value = static_cast<double>(node.as_integer()->get());
            else break;
            if (!std::isfinite(value)) return "value must be finite";
            out.numbers.push_back(value);
            out.number = value;
            return range_problem(value);
        }
        case CDZ_PARAM_STRING:
        case CDZ_PARAM_PATH: {
            if (!node.is_string()) break;
            const std::string value = node.as_string()->get();
            out.texts.push_back(value);
            out.text = value;
            if (spec.choices) {
                std::vector<std::string> allowed;
                for (const char* const* choice = spec.choices; *choice; ++choice) allowed.push_back(*choice);
                bool listed = false;
                for (const auto& choice : allowed) listed = listed || choice == value;
                if (!listed) {
                    std::string list;
                    for (const auto& choice : allowed) list += (list.empty() ? "'" : ", '") + choice + "'";
                    return "'" + value + "' is not one of " + list + did_you_mean(value, allowed);
                }
            }
            return {};
        }
        default:
            break;
    }
    const char* expected = element_type == CDZ_PARAM_PATH ? "string" : param_type_name(element_type);
    return std::string("expected ") + (element_type == CDZ_PARAM_INT ? "an " : "a ") + expected + ", found " +
           describe_node_type(node);
}

cdz_param_type element_type_of(cdz_param_type type) {
    switch (type) {
        case CDZ_PARAM_INT_ARRAY: return CDZ_PARAM_INT;
        case CDZ_PARAM_FLOAT_ARRAY: return CDZ_PARAM_FLOAT;
        case CDZ_PARAM_STRING_ARRAY: return CDZ_PARAM_STRING;
        default: return type;
    }
}

bool is_array_type(cdz_param_type type) { return element_type_of(type) != type; }

// Reads `node` as the spec's type; returns a problem and the node it is about.
std::string read_value(const toml::node& node, const cdz_param_spec& spec, ParameterValue& out,
                       const toml::node** where) {
    out = ParameterValue{};
    out.type = spec.type;
    *where = &node;
    if (!is_array_type(spec.type)) return read_scalar(node, spec.type, spec, out);
    const toml::array* array = node.as_array();
    if (!array)
        return std::string(spec.type == CDZ_PARAM_INT_ARRAY ? "expected an " : "expected a ") +
               param_type_name(spec.type) + ", found " + describe_node_type(node);
    for (const toml::node& element : *array) {
        std::string problem = read_scalar(element, element_type_of(spec.type), spec, out);
        if (!problem.empty()) {
            *where = &element;
            return "element: " + problem;
        }
    }
    return {};
}

void refresh_text_views(ParameterValue& value) {
    value.text_views.clear();
    for (const auto& text : value.texts) value.text_views.push_back(text.c_str());
}

Diagnostic diagnostic_at(const SchemaContext& context, const toml::source_region& region, std::string message) {
    return Diagnostic{context.file, region.begin.line, region.begin.column, std::move(message)};
}

}  // namespace

ParameterValue parse_default_value(const cdz_param_spec& spec) {
    const std::string name = spec.name ? spec.name : "?";
    if (!spec.default_value) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "parameter '" + name + "' has no default");
    toml::table parsed;
    try {
        parsed = toml::parse(std::string("value = ") + spec.default_value);
    } catch (const toml::parse_error& e) {
        throw Error(CDZ_STATUS_INVALID_CONFIG, "parameter '" + name + "': default '" + spec.default_value +
                                                   "' is not a TOML literal: " + std::string(e.description()));
    }
    ParameterValue value;
    const toml::node* where = nullptr;
    std::string problem = read_value(*parsed.get("value"), spec, value, &where);
    if (!problem.empty())
        throw Error(CDZ_STATUS_INVALID_CONFIG,
                    "parameter '" + name + "': default '" + spec.default_value + "': " + problem);
    refresh_text_views(value);
    value.from_default = true;
    return value;
}

cdz_params validate_parameters(const SchemaContext& context, const std::vector<cdz_param_spec>& specs,
                               const toml::table& table, std::vector<Diagnostic>& diagnostics) {
    cdz_params params;
    params.owner = context.owner;
    std::vector<std::string> known;
    for (const auto& spec : specs) known.push_back(spec.name);

    for (const auto& [key, node] : table) {
        const std::string name(key.str());
        if (context.reserved_keys.count(name)) continue;
        const cdz_param_spec* spec = nullptr;
        for (const auto& candidate : specs)
            if (name == candidate.name) spec = &candidate;
        if (!spec) {
            diagnostics.push_back(diagnostic_at(context, key.source(),
                                                "unknown key '" + name + "' in " + context.table_name + " for '" +
                                                    context.owner + "'" + did_you_mean(name, known)));
            continue;
        }
        ParameterValue value;
        const toml::node* where = nullptr;
        std::string problem = read_value(node, *spec, value, &where);
        if (problem.empty() && spec->type == CDZ_PARAM_PATH) {
            std::filesystem::path path(value.text);
            if (value.text.empty()) {
                problem = "empty path";
            } else {
                if (path.is_relative()) path = context.base_directory / path;
                path = path.lexically_normal();
                std::error_code ignored;
                const std::filesystem::file_status status = std::filesystem::status(path, ignored);
                if (!std::filesystem::exists(status))
                    problem = "file not found: " + path.string();
                else if (!std::filesystem::is_regular_file(status) && !std::filesystem::is_directory(status))
                    problem = "not a regular file or directory (a FIFO, device or socket): " + path.string();
                value.text = path.string();
            }
        }
        if (!problem.empty()) {
            diagnostics.push_back(diagnostic_at(context, where->source(), "'" + name + "': " + problem));
            continue;
        }
        refresh_text_views(value);
        params.values[name] = std::move(value);
    }

    for (const auto& spec : specs) {
        if (params.values.count(spec.name)) continue;
        const bool given_but_invalid = table.contains(spec.name);
        if (given_but_invalid) continue;
        if (!spec.default_value) {
            diagnostics.push_back(diagnostic_at(context, table.source(),
                                                "missing required key '" + std::string(spec.name) + "' in " +
                                                    context.table_name + " for '" + context.owner + "'"));
            continue;
        }
        params.values[spec.name] = parse_default_value(spec);
    }
    return params;
}

std::string format_parameter_value(const ParameterValue& value) {
    std::ostringstream out;
    auto quoted = [&](const std::string& text) { out << toml_string_literal(text); };
    auto join = [&](size_t count, auto&& element) {
        out << '[';
        for (size_t i = 0; i < count; ++i) {
            if (i) out << ", ";
            element(i);
        }
        out << ']';
    };
    switch (value.type) {
        case CDZ_PARAM_BOOL: out << (value.boolean ? "true" : "false"); break;
        case CDZ_PARAM_INT: out << value.integer; break;
        case CDZ_PARAM_FLOAT: out << toml_float_literal(value.number); break;
        case CDZ_PARAM_STRING:
        case CDZ_PARAM_PATH: quoted(value.text); break;
        case CDZ_PARAM_INT_ARRAY: join(value.integers.size(), [&](size_t i) { out << value.integers[i]; }); break;
        case CDZ_PARAM_FLOAT_ARRAY:
            join(value.numbers.size(), [&](size_t i) { out << toml_float_literal(value.numbers[i]); });
            break;
        case CDZ_PARAM_STRING_ARRAY: join(value.texts.size(), [&](size_t i) { quoted(value.texts[i]); }); break;
    }
    return out.str();
}

}  // namespace cadenza
