#include "plugin_manifest.h"

#include <cmath>
#include <sstream>

#include <toml++/toml.h>

#include "descriptor_check.h"
#include "error.h"
#include "parameter_values.h"
#include "plugin_library.h"
#include "shared_object_symbols.h"
#include "toml_literal.h"

namespace cadenza {
namespace {

constexpr cdz_plugin_kind all_kinds[] = {CDZ_PLUGIN_KIND_FRONTEND, CDZ_PLUGIN_KIND_CODEC, CDZ_PLUGIN_KIND_BACKBONE,
                                         CDZ_PLUGIN_KIND_DRAFTER, CDZ_PLUGIN_KIND_ACCEPTOR};
constexpr cdz_param_type all_types[] = {CDZ_PARAM_BOOL,      CDZ_PARAM_INT,       CDZ_PARAM_FLOAT,
                                        CDZ_PARAM_STRING,    CDZ_PARAM_PATH,      CDZ_PARAM_INT_ARRAY,
                                        CDZ_PARAM_FLOAT_ARRAY, CDZ_PARAM_STRING_ARRAY};

std::string text_or_empty(const char* text) { return text ? text : ""; }

}  // namespace

std::string write_plugin_manifest(const std::vector<const cdz_plugin_descriptor*>& descriptors) {
    std::ostringstream out;
    out << "# cadenza plugin manifest (docs/abi.md): what this library's entry point returns, without the function "
           "tables\n";
    for (const cdz_plugin_descriptor* d : descriptors) {
        out << "\n[[plugin]]\n";
        out << "name = " << toml_string_literal(d->name) << '\n';
        out << "kind = " << toml_string_literal(plugin_kind_name(d->kind)) << '\n';
        out << "version = " << toml_string_literal(text_or_empty(d->version)) << '\n';
        out << "summary = " << toml_string_literal(text_or_empty(d->summary)) << '\n';
        out << "abi = [" << d->abi_major << ", " << d->abi_minor << "]\n";
        for (const cdz_param_spec& spec : descriptor_parameter_specs(*d)) {
            out << "[[plugin.param]]\n";
            out << "name = " << toml_string_literal(spec.name) << '\n';
            out << "type = " << toml_string_literal(param_type_name(spec.type)) << '\n';
            if (spec.default_value) out << "default = " << toml_string_literal(spec.default_value) << '\n';
            if (spec.has_range)
                out << "range = [" << toml_float_literal(spec.min_value) << ", " << toml_float_literal(spec.max_value)
                    << "]\n";
            if (spec.choices) {
                out << "choices = [";
                for (const char* const* choice = spec.choices; *choice; ++choice)
                    out << (choice == spec.choices ? "" : ", ") << toml_string_literal(*choice);
                out << "]\n";
            }
            out << "doc = " << toml_string_literal(text_or_empty(spec.doc)) << '\n';
        }
    }
    return out.str();
}

const char* PluginManifest::keep(const std::string& text) {
    strings_.push_back(text);
    return strings_.back().c_str();
}

PluginManifest::PluginManifest(const std::string& text, const std::string& library) {
    const std::string where = library + ": its plugin manifest (section " + plugin_manifest_section + ")";
    auto fail = [&](const std::string& what, const toml::node* node) {
        std::string position;
        if (node && node->source().begin)
            position = " at line " + std::to_string(node->source().begin.line);
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, where + position + ": " + what + "; rebuild the library");
    };
    toml::table document;
    try {
        document = toml::parse(text, std::string_view(plugin_manifest_section));
    } catch (const toml::parse_error& error) {
        fail(std::string(error.description()) + " (line " + std::to_string(error.source().begin.line) + ")", nullptr);
    }
    auto string_of = [&](const toml::table& table, const char* key, bool required) -> std::optional<std::string> {
        const toml::node* node = table.get(key);
        if (!node) {
            if (required) fail(std::string("missing '") + key + "'", &table);
            return std::nullopt;
        }
        if (!node->is_string()) fail(std::string("'") + key + "' is not a string", node);
        return node->as_string()->get();
    };
    const toml::node* plugins = document.get("plugin");
    if (!plugins) return;  // a library without plugins
    if (!plugins->is_array_of_tables()) fail("'plugin' is not an array of tables", plugins);
    for (const toml::node& item : *plugins->as_array()) {
        const toml::table& table = *item.as_table();
        Described& described = described_.emplace_back();
        cdz_plugin_descriptor& d = described.descriptor;
        d.struct_size = sizeof(cdz_plugin_descriptor);
        d.name = keep(*string_of(table, "name", true));
        const std::string kind = *string_of(table, "kind", true);
        for (cdz_plugin_kind candidate : all_kinds)
            if (kind == plugin_kind_name(candidate)) d.kind = candidate;
        if (d.kind == 0) fail("unknown kind '" + kind + "'", table.get("kind"));
        d.version = keep(*string_of(table, "version", true));
        d.summary = keep(*string_of(table, "summary", true));
        const toml::array* abi = table.get_as<toml::array>("abi");
        if (!abi || abi->size() != 2 || !abi->get(0)->is_integer() || !abi->get(1)->is_integer())
            fail("'abi' is not [major, minor]", &table);
        d.abi_major = static_cast<uint32_t>(abi->get(0)->as_integer()->get());
        d.abi_minor = static_cast<uint32_t>(abi->get(1)->as_integer()->get());

        if (const toml::node* params = table.get("param")) {
            if (!params->is_array_of_tables()) fail("'param' is not an array of tables", params);
            for (const toml::node& param_item : *params->as_array()) {
                const toml::table& param = *param_item.as_table();
                cdz_param_spec spec{};
                spec.name = keep(*string_of(param, "name", true));
                const std::string type = *string_of(param, "type", true);
                for (cdz_param_type candidate : all_types)
                    if (type == param_type_name(candidate)) spec.type = candidate;
                if (spec.type == 0) fail("unknown parameter type '" + type + "'", param.get("type"));
                if (auto value = string_of(param, "default", false)) spec.default_value = keep(*value);
                if (const toml::node* range = param.get("range")) {
                    const toml::array* bounds = range->as_array();
                    if (!bounds || bounds->size() != 2 || !bounds->get(0)->is_number() || !bounds->get(1)->is_number())
                        fail("'range' is not [min, max]", range);
                    spec.has_range = 1;
                    spec.min_value = bounds->get(0)->value<double>().value_or(NAN);
                    spec.max_value = bounds->get(1)->value<double>().value_or(NAN);
                }
                if (const toml::node* choices = param.get("choices")) {
                    const toml::array* list = choices->as_array();
                    if (!list) fail("'choices' is not an array", choices);
                    std::vector<const char*>& kept = described.choices.emplace_back();
                    for (const toml::node& choice : *list) {
                        if (!choice.is_string()) fail("a choice is not a string", &choice);
                        kept.push_back(keep(choice.as_string()->get()));
                    }
                    kept.push_back(nullptr);
                    spec.choices = kept.data();
                }
                spec.doc = keep(string_of(param, "doc", false).value_or(""));
                described.params.push_back(spec);
            }
        }
        d.params = described.params.empty() ? nullptr : described.params.data();
        d.param_count = static_cast<uint32_t>(described.params.size());
        d.param_spec_size = sizeof(cdz_param_spec);
        check_descriptor(&d, where, DescriptorParts::without_function_table);
        pointers_.push_back(&d);
    }
}

std::unique_ptr<PluginManifest> read_plugin_manifest(const std::filesystem::path& library) {
    const std::optional<std::string> text = section_contents(library, plugin_manifest_section);
    if (!text) return nullptr;
    return std::make_unique<PluginManifest>(*text, library.string());
}

std::optional<std::string> manifest_disagreement(const cdz_plugin_descriptor& described,
                                                 const cdz_plugin_descriptor& loaded) {
    // Both sides as a manifest: equal text, equal descriptions.
    const std::string expected = write_plugin_manifest({&described});
    const std::string actual = write_plugin_manifest({&loaded});
    if (expected == actual) return std::nullopt;
    std::istringstream a(expected), b(actual);
    std::string line_a, line_b;
    while (std::getline(a, line_a)) {
        if (!std::getline(b, line_b)) line_b.clear();
        if (line_a != line_b) return "the manifest says " + line_a + ", the library " + line_b;
    }
    return std::string("the library describes more than its manifest");
}

}  // namespace cadenza
