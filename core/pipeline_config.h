// A pipeline file, parsed and validated: [pipeline], [sampling], [logits]
// (the logits processors and their tables) and one table per stage naming
// its plugin. Every problem is reported in one pass as
// "file:line:column: message".
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cadenza/plugin.h"
#include "parameter_values.h"
#include "plugin_catalog.h"

namespace cadenza {

struct StageConfig {
    std::string table;          // "frontend", "codec", "backbone", "draft", "acceptor"
    cdz_plugin_kind kind;
    CatalogEntry plugin;
    std::shared_ptr<cdz_params> params;
};

struct LogitsProcessorConfig {
    std::string name;   // as [logits] processors lists it
    cdz_params params;  // its [logits.NAME] table, defaults filled in
};

struct PipelineConfig {
    std::string source;                     // the file, or the name given to a string
    std::filesystem::path base_directory;   // relative paths start here
    std::string name;
    std::string device;                     // "cpu" or "cuda:N"
    uint64_t seed = 0;
    double max_audio_seconds = 0.0;
    std::vector<std::filesystem::path> plugin_paths;
    std::filesystem::path voice_prompt;     // empty: none
    bool codec_thread = true;               // streamed audio decodes on a thread beside the loop
    bool draft_ahead = false;               // the next proposal is made beside the verifying pass (DecodingLoop)
    std::string draft_ahead_at;             // "file:line:column: " of draft_ahead, for the engine's checks
    cdz_sampling sampling{};
    std::vector<LogitsProcessorConfig> logits_processors;  // in the order they apply
    std::vector<StageConfig> stages;        // in the order frontend, codec, backbone, draft, acceptor

    const StageConfig* stage(const std::string& table) const;
    // The resolved pipeline as TOML, defaults filled in and marked.
    std::string to_toml() const;
};

// `extra_locations` are searched for plugins before the pipeline's own
// plugin_paths. Throws ValidationError listing every problem, or
// cadenza::Error if the file cannot be read.
PipelineConfig load_pipeline_config_file(const std::filesystem::path& path,
                                         const std::vector<PluginLocation>& extra_locations = {});
PipelineConfig load_pipeline_config_string(const std::string& text, const std::string& source_name,
                                           const std::filesystem::path& base_directory,
                                           const std::vector<PluginLocation>& extra_locations = {});

// The stage tables a pipeline may have, with the kind each one takes.
struct StageKind {
    const char* table;
    cdz_plugin_kind kind;
};
const std::vector<StageKind>& pipeline_stage_kinds();

}  // namespace cadenza
