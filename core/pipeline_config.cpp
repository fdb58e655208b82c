#include "pipeline_config.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "descriptor_check.h"
#include "diagnostic.h"
#include "install_layout.h"
#include "logits_processor_factory.h"
#include "parameter_schema.h"
#include "plugin_library.h"
#include "spelling_suggestion.h"
#include "toml_limits.h"
#include "toml_literal.h"

namespace cadenza {
namespace {

const cdz_param_spec pipeline_specs[] = {
    {"name", CDZ_PARAM_STRING, "\"unnamed\"", 0, 0, 0, nullptr, "a name for logs and reports"},
    {"device", CDZ_PARAM_STRING, "\"cpu\"", 0, 0, 0, nullptr, "where models run: cpu or cuda:N"},
    {"seed", CDZ_PARAM_INT, "0", 1, 0, 9.2e18, nullptr, "seed of every random stream; a synthesis repeats bit for bit"},
    {"max_audio_seconds", CDZ_PARAM_FLOAT, "30.0", 1, 0.01, 3600, nullptr, "stop a synthesis after this much audio"},
    {"plugin_paths", CDZ_PARAM_STRING_ARRAY, "[]", 0, 0, 0, nullptr,
     "plugin directories or libraries searched first, relative to this file"},
    {"voice_prompt", CDZ_PARAM_STRING, "\"\"", 0, 0, 0, nullptr,
     "audio file of the voice to imitate when a synthesis gives none, relative to this file; empty: none"},
    {"codec_thread", CDZ_PARAM_BOOL, "true", 0, 0, 0, nullptr,
     "when audio is streamed: the codec decodes on a second thread beside the decoding loop; false decodes "
     "between steps on the synthesis thread (the audio is the same)"},
    {"draft_ahead", CDZ_PARAM_BOOL, "false", 0, 0, 0, nullptr,
     "the drafter proposes the next step on a second thread during the target's verifying pass, as if its whole "
     "chain were accepted; used when it is (then that step's bonus token is left to the next step's check of the "
     "continuation). Needs a drafter that does not read the target's hidden states; the output's distribution "
     "is the acceptor's either way"},
};

const cdz_param_spec sampling_specs[] = {
    {"temperature", CDZ_PARAM_FLOAT, "1.0", 1, 0, 100, nullptr, "softmax temperature; 0 is greedy"},
    {"top_k", CDZ_PARAM_INT, "0", 1, 0, 1e9, nullptr, "keep the k most likely tokens; 0 keeps all"},
    {"top_p", CDZ_PARAM_FLOAT, "1.0", 1, 1e-6, 1, nullptr, "keep the smallest set with this much mass; 1 keeps all"},
};

// Keys that left [sampling] for a logits processor, and where they went.
const std::pair<const char*, const char*> moved_sampling_keys[] = {
    {"guidance_scale",
     "[logits] processors = [\"classifier_free_guidance\"] with [logits.classifier_free_guidance] scale"},
    {"max_phone_seconds", "[logits] processors = [\"phone_markers\"] with [logits.phone_markers] max_phone_seconds"},
};

// The known processors' names, NULL-terminated, as a schema's choices.
const char* const* logits_processor_names() {
    static const std::vector<const char*> names = [] {
        std::vector<const char*> list;
        for (const auto& kind : logits_processor_kinds()) list.push_back(kind.name);
        list.push_back(nullptr);
        return list;
    }();
    return names.data();
}

std::vector<cdz_param_spec> logits_specs() {
    return {{"processors", CDZ_PARAM_STRING_ARRAY, "[]", 0, 0, 0, logits_processor_names(),
             "logits processors between the backbone's logits and sampling, applied in this order; each one's "
             "parameters in [logits.NAME]"}};
}

std::vector<cdz_param_spec> specs_of(const cdz_param_spec* begin, const cdz_param_spec* end) {
    return std::vector<cdz_param_spec>(begin, end);
}

Diagnostic at(const std::string& file, const toml::source_region& region, std::string message) {
    return Diagnostic{file, region.begin.line, region.begin.column, std::move(message)};
}

std::string quoted_list(const std::vector<std::string>& names) {
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "'" : ", '") + name + "'";
    return list;
}

class PipelineParser {
public:
    PipelineParser(std::string source, std::filesystem::path base, std::vector<PluginLocation> extra)
        : source_(std::move(source)), base_(std::move(base)), extra_(std::move(extra)) {}

    PipelineConfig parse(const std::string& text) {
        check_toml_limits(text, source_);
        toml::table document;
        try {
            document = toml::parse(text, source_);
        } catch (const toml::parse_error& e) {
            throw ValidationError({at(source_, e.source(), std::string(e.description()))});
        }
        config_.source = source_;
        config_.base_directory = base_;
        check_top_level(document);
        read_pipeline_table(document);
        read_sampling_table(document);
        read_logits_table(document);
        PluginCatalog catalog = PluginCatalog::scan(plugin_search_path(locations()), plugin_names(document));
        for (const auto& stage : pipeline_stage_kinds()) read_stage(document, stage, catalog);
        if (!diagnostics_.empty()) throw ValidationError(capped_diagnostics(diagnostics_, source_));
        return config_;
    }

private:
    std::vector<std::string> table_names() const {
        std::vector<std::string> names{"pipeline", "sampling", "logits"};
        for (const auto& stage : pipeline_stage_kinds()) names.push_back(stage.table);
        return names;
    }

    void check_top_level(const toml::table& document) {
        const auto names = table_names();
        for (const auto& [key, node] : document) {
            const std::string name(key.str());
            const bool known = std::find(names.begin(), names.end(), name) != names.end();
            if (!known) {
                diagnostics_.push_back(at(source_, key.source(), "unknown table or key '" + name + "'" +
                                                                     did_you_mean(name, names)));
            } else if (!node.is_table()) {
                diagnostics_.push_back(at(source_, node.source(), "'" + name + "' must be a table ([" + name + "])"));
            }
        }
    }

    const toml::table& table_or_empty(const toml::table& document, const char* name) {
        static const toml::table empty;
        const toml::table* table = document[name].as_table();
        return table ? *table : empty;
    }

    cdz_params validate_core_table(const toml::table& document, const char* name,
                                   const std::vector<cdz_param_spec>& specs, std::set<std::string> reserved = {}) {
        SchemaContext context{"cadenza", std::string("[") + name + "]", source_, base_, std::move(reserved)};
        return validate_parameters(context, specs, table_or_empty(document, name), diagnostics_);
    }

    void read_pipeline_table(const toml::table& document) {
        cdz_params params = validate_core_table(document, "pipeline",
                                                specs_of(std::begin(pipeline_specs), std::end(pipeline_specs)));
        const toml::table& table = table_or_empty(document, "pipeline");
        auto value = [&](const char* key) -> const ParameterValue* {
            auto found = params.values.find(key);
            return found == params.values.end() ? nullptr : &found->second;
        };
        if (auto* name = value("name")) config_.name = name->text;
        if (auto* seed = value("seed")) config_.seed = static_cast<uint64_t>(seed->integer);
        if (auto* seconds = value("max_audio_seconds")) config_.max_audio_seconds = seconds->number;
        if (auto* thread = value("codec_thread")) config_.codec_thread = thread->boolean;
        if (auto* ahead = value("draft_ahead"); ahead && ahead->boolean) {
            config_.draft_ahead = true;
            config_.draft_ahead_at = at(source_, table["draft_ahead"].node()->source(), "").to_string();
        }
        if (auto* device = value("device")) {
            static const std::regex device_pattern("cpu|cuda(:[0-9]+)?");
            if (std::regex_match(device->text, device_pattern)) {
                config_.device = device->text == "cuda" ? "cuda:0" : device->text;
            } else {
                diagnostics_.push_back(at(source_, table["device"].node()->source(),
                                          "'device': expected 'cpu' or 'cuda:N', found '" + device->text + "'"));
            }
        }
        if (auto* prompt = value("voice_prompt"); prompt && !prompt->text.empty()) {
            std::filesystem::path path(prompt->text);
            if (path.is_relative()) path = base_ / path;
            path = path.lexically_normal();
            std::error_code ignored;
            if (std::filesystem::is_regular_file(path, ignored))
                config_.voice_prompt = path;
            else
                diagnostics_.push_back(at(source_, table["voice_prompt"].node()->source(),
                                          "'voice_prompt': not found: " + path.string()));
        }
        if (auto* paths = value("plugin_paths")) {
            const toml::array* array = table["plugin_paths"].as_array();
            for (size_t i = 0; i < paths->texts.size(); ++i) {
                std::filesystem::path path(paths->texts[i]);
                if (path.is_relative()) path = base_ / path;
                path = path.lexically_normal();
                std::error_code ignored;
                if (!std::filesystem::exists(path, ignored)) {
                    diagnostics_.push_back(at(source_, array->get(i)->source(),
                                              "'plugin_paths': not found: " + path.string()));
                    continue;
                }
                config_.plugin_paths.push_back(path);
            }
        }
    }

    void read_sampling_table(const toml::table& document) {
        std::set<std::string> moved;
        for (const auto& [key, node] : table_or_empty(document, "sampling"))
            for (const auto& [name, destination] : moved_sampling_keys)
                if (key.str() == name) {
                    diagnostics_.push_back(
                        at(source_, key.source(), "'" + std::string(name) + "' moved: " + destination));
                    moved.insert(name);
                }
        cdz_params params = validate_core_table(
            document, "sampling", specs_of(std::begin(sampling_specs), std::end(sampling_specs)), moved);
        config_.sampling.struct_size = sizeof(cdz_sampling);
        config_.sampling.temperature = params.values.count("temperature") ? params.values["temperature"].number : 1.0;
        config_.sampling.top_k = params.values.count("top_k") ? params.values["top_k"].integer : 0;
        config_.sampling.top_p = params.values.count("top_p") ? params.values["top_p"].number : 1.0;
    }

    // [logits] processors, and a [logits.NAME] table for each listed one
    // (optional when its parameters all have defaults).
    void read_logits_table(const toml::table& document) {
        const toml::table& table = table_or_empty(document, "logits");
        std::set<std::string> processor_tables;  // keys that are processors' tables, not parameters
        for (const auto& [key, node] : table) {
            const std::string name(key.str());
            if (node.is_table() || find_logits_processor_kind(name)) processor_tables.insert(name);
        }
        cdz_params params = validate_core_table(document, "logits", logits_specs(), processor_tables);
        std::set<std::string> listed;
        const auto processors = params.values.find("processors");
        if (processors == params.values.end()) return;  // an invalid list, reported
        const toml::array* array = table["processors"].as_array();
        for (size_t i = 0; i < processors->second.texts.size(); ++i) {
            const std::string& name = processors->second.texts[i];
            const toml::source_region& entry = array->get(i)->source();
            if (!listed.insert(name).second) {
                diagnostics_.push_back(at(source_, entry, "'" + name + "' is listed twice in [logits] processors"));
                continue;
            }
            read_logits_processor(table, *find_logits_processor_kind(name), entry);
        }
        std::vector<std::string> known;
        for (const auto& kind : logits_processor_kinds()) known.push_back(kind.name);
        for (const auto& [key, node] : table) {
            const std::string name(key.str());
            if (!processor_tables.count(name) || listed.count(name)) continue;
            if (!find_logits_processor_kind(name))
                diagnostics_.push_back(at(source_, key.source(),
                                          "unknown logits processor [logits." + name + "]; known: " +
                                              quoted_list(known) + did_you_mean(name, known)));
            else
                diagnostics_.push_back(at(source_, key.source(),
                                          "[logits." + name + "] is for a processor that [logits] processors does "
                                          "not list; add \"" + name + "\" there or remove the table"));
        }
    }

    // `entry`: where the list names it, for the problems of a table that is
    // not there.
    void read_logits_processor(const toml::table& logits, const LogitsProcessorKind& kind,
                               const toml::source_region& entry) {
        static const toml::table empty;
        const std::string table_name = std::string("[logits.") + kind.name + "]";
        const toml::node* node = logits.get(kind.name);
        if (node && !node->is_table()) {
            diagnostics_.push_back(at(source_, node->source(), "'" + std::string(kind.name) + "' must be a table (" +
                                                                   table_name + ")"));
            return;
        }
        const toml::table* table = node ? node->as_table() : nullptr;
        SchemaContext context{"cadenza", table_name, source_, base_, {}};
        std::vector<Diagnostic> found;
        cdz_params params = validate_parameters(context, kind.parameters(), table ? *table : empty, found);
        if (!table)
            for (Diagnostic& diagnostic : found) {
                diagnostic.line = entry.begin.line;
                diagnostic.column = entry.begin.column;
            }
        diagnostics_.insert(diagnostics_.end(), found.begin(), found.end());
        config_.logits_processors.push_back({kind.name, std::move(params)});
    }

    // The plugins the stages name, so that the search stops where all are found.
    static std::vector<std::string> plugin_names(const toml::table& document) {
        std::vector<std::string> names;
        for (const auto& stage : pipeline_stage_kinds())
            if (const auto* name = document[stage.table]["plugin"].as_string()) names.push_back(name->get());
        return names;
    }

    std::vector<PluginLocation> locations() const {
        std::vector<PluginLocation> result = extra_;
        for (const auto& path : config_.plugin_paths) result.push_back({path, "pipeline plugin_paths", true});
        return result;
    }

    void read_stage(const toml::table& document, const StageKind& stage, const PluginCatalog& catalog) {
        const toml::table* table = document[stage.table].as_table();
        if (!table) return;
        const std::string table_name = std::string("[") + stage.table + "]";
        const toml::node* plugin_node = table->get("plugin");
        if (!plugin_node) {
            diagnostics_.push_back(at(source_, table->source(), "missing required key 'plugin' in " + table_name));
            return;
        }
        if (!plugin_node->is_string()) {
            diagnostics_.push_back(at(source_, plugin_node->source(), "'plugin': expected a string naming a plugin"));
            return;
        }
        const std::string plugin_name = plugin_node->as_string()->get();
        const CatalogEntry* entry = nullptr;
        try {
            entry = &catalog.find(plugin_name);
        } catch (const Error& e) {
            diagnostics_.push_back(at(source_, plugin_node->source(), e.what()));
            return;
        }
        if (entry->descriptor->kind != stage.kind) {
            diagnostics_.push_back(at(source_, plugin_node->source(),
                                      "plugin '" + plugin_name + "' is a " + plugin_kind_name(entry->descriptor->kind) +
                                          ", but " + table_name + " needs a " + plugin_kind_name(stage.kind)));
            return;
        }
        SchemaContext context{plugin_name, table_name, source_, base_, {"plugin"}};
        auto params = std::make_shared<cdz_params>(
            validate_parameters(context, descriptor_parameter_specs(*entry->descriptor), *table, diagnostics_));
        config_.stages.push_back({stage.table, stage.kind, *entry, std::move(params)});
    }

    std::string source_;
    std::filesystem::path base_;
    std::vector<PluginLocation> extra_;
    PipelineConfig config_;
    std::vector<Diagnostic> diagnostics_;
};

void write_parameters(std::ostream& out, const cdz_params& params, const std::vector<cdz_param_spec>& order) {
    for (const auto& spec : order) {
        auto found = params.values.find(spec.name);
        if (found == params.values.end()) continue;
        out << spec.name << " = " << format_parameter_value(found->second);
        if (found->second.from_default) out << "  # default";
        out << '\n';
    }
}

}  // namespace

const std::vector<StageKind>& pipeline_stage_kinds() {
    static const std::vector<StageKind> kinds{
        {"frontend", CDZ_PLUGIN_KIND_FRONTEND}, {"codec", CDZ_PLUGIN_KIND_CODEC},
        {"backbone", CDZ_PLUGIN_KIND_BACKBONE}, {"draft", CDZ_PLUGIN_KIND_DRAFTER},
        {"acceptor", CDZ_PLUGIN_KIND_ACCEPTOR},
    };
    return kinds;
}

const StageConfig* PipelineConfig::stage(const std::string& table) const {
    for (const auto& candidate : stages)
        if (candidate.table == table) return &candidate;
    return nullptr;
}

std::string PipelineConfig::to_toml() const {
    std::ostringstream out;
    out << "# resolved from " << source << "\n[pipeline]\n";
    out << "name = " << toml_string_literal(name) << '\n';
    out << "device = " << toml_string_literal(device) << '\n';
    out << "seed = " << seed << '\n';
    out << "max_audio_seconds = " << toml_float_literal(max_audio_seconds) << '\n';
    out << "plugin_paths = [";
    for (size_t i = 0; i < plugin_paths.size(); ++i)
        out << (i ? ", " : "") << toml_string_literal(plugin_paths[i].string());
    out << "]\n";
    out << "voice_prompt = " << toml_string_literal(voice_prompt.string()) << '\n';
    out << "codec_thread = " << (codec_thread ? "true" : "false") << '\n';
    out << "draft_ahead = " << (draft_ahead ? "true" : "false") << '\n';
    out << "\n[sampling]\n";
    out << "temperature = " << toml_float_literal(sampling.temperature) << '\n';
    out << "top_k = " << sampling.top_k << '\n';
    out << "top_p = " << toml_float_literal(sampling.top_p) << '\n';
    out << "\n[logits]\nprocessors = [";
    for (size_t i = 0; i < logits_processors.size(); ++i)
        out << (i ? ", " : "") << toml_string_literal(logits_processors[i].name);
    out << "]\n";
    for (const auto& processor : logits_processors) {
        out << "\n[logits." << processor.name << "]\n";
        write_parameters(out, processor.params, find_logits_processor_kind(processor.name)->parameters());
    }
    for (const auto& stage : stages) {
        out << "\n[" << stage.table << "]\n";
        out << "plugin = " << toml_string_literal(stage.plugin.descriptor->name) << "  # "
            << stage.plugin.descriptor->version << ", " << stage.plugin.library.string() << '\n';
        write_parameters(out, *stage.params, descriptor_parameter_specs(*stage.plugin.descriptor));
    }
    return out.str();
}

PipelineConfig load_pipeline_config_string(const std::string& text, const std::string& source_name,
                                           const std::filesystem::path& base_directory,
                                           const std::vector<PluginLocation>& extra_locations) {
    return PipelineParser(source_name, base_directory, extra_locations).parse(text);
}

PipelineConfig load_pipeline_config_file(const std::filesystem::path& argument,
                                         const std::vector<PluginLocation>& extra_locations) {
    const std::filesystem::path path = resolve_pipeline_path(argument);  // a shipped pipeline's bare name too
    std::error_code error;
    const auto status = std::filesystem::status(path, error);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw Error(CDZ_STATUS_INVALID_ARGUMENT, path.string() + ": not a regular file (a directory, FIFO or device)");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw Error(CDZ_STATUS_NOT_FOUND, path.string() + ": cannot open pipeline file");
    const TomlLimits limits;
    std::string text(limits.max_bytes + 1, '\0');
    file.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(file.gcount()));
    std::filesystem::path base = std::filesystem::absolute(path).parent_path();
    return load_pipeline_config_string(text, path.string(), base, extra_locations);
}

}  // namespace cadenza
