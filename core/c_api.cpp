// The embedding API of cadenza.h. Every entry point catches everything and
// returns a status: no exception leaves the library.
#include <cstddef>
#include "cadenza/cadenza.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cadenza/plugin.h"
#include "engine.h"
#include "error.h"
#include "logging.h"
#include "pipeline_config.h"
#include "plugin_catalog.h"
#include "plugin_library.h"
#include "status_object.h"

// One synthesis at a time per handle: calls from other threads wait for the
// running one; a call from the thread that is synthesizing (from inside the
// audio callback) cannot wait for itself and is refused.
struct cdz_pipeline {
    std::unique_ptr<cadenza::Engine> engine;
    mutable std::mutex in_use;
    mutable std::atomic<std::thread::id> synthesizing_thread{};
};

struct cdz_catalog {
    cadenza::PluginCatalog catalog;
    std::vector<std::string> libraries;  // the strings cdz_catalog_entry points to
};

namespace {

using cadenza::Error;

constexpr const char* library_version_string = CADENZA_VERSION;

void require(bool condition, const char* message) {
    if (!condition) throw Error(CDZ_STATUS_INVALID_ARGUMENT, message);
}

std::vector<cadenza::PluginLocation> caller_locations(const cdz_pipeline_params* params) {
    std::vector<cadenza::PluginLocation> locations;
    if (!params) return locations;
    require(params->struct_size >= sizeof(cdz_pipeline_params), "cdz_pipeline_params: struct_size is too small");
    require(params->plugin_path_count == 0 || params->plugin_paths, "cdz_pipeline_params: plugin_paths is NULL");
    for (size_t i = 0; i < params->plugin_path_count; ++i) {
        require(params->plugin_paths[i] != nullptr, "cdz_pipeline_params: a plugin path is NULL");
        locations.push_back({params->plugin_paths[i], "cdz_pipeline_params", true});
    }
    return locations;
}

void ensure_logging() {
    static bool configured = false;
    if (!configured) {
        try {
            cadenza::logging_configure();
        } catch (const Error&) {
            cadenza::logging_configure("info");
        }
        configured = true;
    }
}

cadenza::SynthesisRequest make_request(const char* text, const cdz_synthesis_params* params) {
    require(text != nullptr, "text is NULL");
    cadenza::SynthesisRequest request;
    request.text = text;
    if (params) {
        // Callers built against ABI 0.1 pass the shorter struct: fields past
        // their struct_size are not read.
        constexpr size_t version_0_1_size = offsetof(cdz_synthesis_params, max_audio_seconds) + sizeof(double);
        require(params->struct_size >= version_0_1_size, "cdz_synthesis_params: struct_size is too small");
        if (params->use_seed) request.seed = params->seed;
        require(params->max_audio_seconds >= 0, "cdz_synthesis_params: max_audio_seconds is negative");
        request.max_audio_seconds = params->max_audio_seconds;
        const bool has_voice = params->struct_size >= offsetof(cdz_synthesis_params, voice_prompt_sample_rate) +
                                                          sizeof(uint32_t);
        if (has_voice && params->voice_prompt_samples) {
            require(params->voice_prompt_sample_count > 0, "cdz_synthesis_params: the voice prompt has no samples");
            require(params->voice_prompt_sample_rate > 0, "cdz_synthesis_params: the voice prompt has no sample rate");
            request.voice_prompt.assign(params->voice_prompt_samples,
                                        params->voice_prompt_samples + params->voice_prompt_sample_count);
            request.voice_prompt_sample_rate = static_cast<int>(params->voice_prompt_sample_rate);
        }
    }
    return request;
}

class ExclusiveUse {
public:
    ExclusiveUse(const cdz_pipeline& pipeline, const char* call) : pipeline_(pipeline) {
        if (pipeline.synthesizing_thread.load() == std::this_thread::get_id())
            throw Error(CDZ_STATUS_BUSY, std::string(call) +
                                             ": called from inside a callback of this pipeline's running synthesis; "
                                             "a pipeline synthesizes one text at a time (use another pipeline, or "
                                             "call after the running synthesis returns)");
        pipeline.in_use.lock();
        pipeline.synthesizing_thread.store(std::this_thread::get_id());
    }
    ~ExclusiveUse() {
        pipeline_.synthesizing_thread.store(std::thread::id());
        pipeline_.in_use.unlock();
    }
    ExclusiveUse(const ExclusiveUse&) = delete;
    ExclusiveUse& operator=(const ExclusiveUse&) = delete;

private:
    const cdz_pipeline& pipeline_;
};

}  // namespace

extern "C" {

void cdz_version_get(cdz_version* out) {
    if (!out || out->struct_size == 0) return;
    cdz_version full{};
    full.struct_size = out->struct_size;
    full.abi_major = CDZ_ABI_VERSION_MAJOR;
    full.abi_minor = CDZ_ABI_VERSION_MINOR;
    full.plugin_abi_major = CDZ_PLUGIN_ABI_MAJOR;
    full.plugin_abi_minor = CDZ_PLUGIN_ABI_MINOR;
    full.library_version = library_version_string;
    std::memcpy(out, &full, std::min<size_t>(out->struct_size, sizeof(full)));
}

const char* cdz_library_version(void) { return library_version_string; }

cdz_status_code cdz_status_get_code(const cdz_status* status) { return status ? status->code : CDZ_STATUS_OK; }

const char* cdz_status_get_message(const cdz_status* status) { return status ? status->message.c_str() : ""; }

void cdz_status_free(cdz_status* status) { cadenza::status_release(status); }

cdz_pipeline_params cdz_pipeline_default_params(void) {
    cdz_pipeline_params params{};
    params.struct_size = sizeof(params);
    return params;
}

cdz_status* cdz_pipeline_load_file(const char* path, const cdz_pipeline_params* params, cdz_pipeline** out) {
    return cadenza::status_from_exceptions([&] {
        require(path && out, "path or out_pipeline is NULL");
        *out = nullptr;
        ensure_logging();
        auto config = cadenza::load_pipeline_config_file(path, caller_locations(params));
        auto pipeline = std::make_unique<cdz_pipeline>();
        pipeline->engine = std::make_unique<cadenza::Engine>(std::move(config));
        *out = pipeline.release();
    });
}

cdz_status* cdz_pipeline_load_string(const char* toml_text, const char* source_name,
                                     const cdz_pipeline_params* params, cdz_pipeline** out) {
    return cadenza::status_from_exceptions([&] {
        require(toml_text && out, "toml_text or out_pipeline is NULL");
        *out = nullptr;
        ensure_logging();
        const std::string name = source_name ? source_name : "<string>";
        const std::filesystem::path base = source_name ? std::filesystem::absolute(source_name).parent_path()
                                                       : std::filesystem::current_path();
        auto config = cadenza::load_pipeline_config_string(toml_text, name, base, caller_locations(params));
        auto pipeline = std::make_unique<cdz_pipeline>();
        pipeline->engine = std::make_unique<cadenza::Engine>(std::move(config));
        *out = pipeline.release();
    });
}

void cdz_pipeline_free(cdz_pipeline* pipeline) { delete pipeline; }

cdz_status* cdz_pipeline_describe(const cdz_pipeline* pipeline, char** out_toml) {
    return cadenza::status_from_exceptions([&] {
        require(pipeline && out_toml, "pipeline or out_toml is NULL");
        const std::string text = pipeline->engine->config().to_toml();
        char* copy = static_cast<char*>(std::malloc(text.size() + 1));
        if (!copy) throw std::bad_alloc();
        std::memcpy(copy, text.c_str(), text.size() + 1);
        *out_toml = copy;
    });
}

void cdz_string_free(char* text) { std::free(text); }

cdz_synthesis_params cdz_synthesis_default_params(void) {
    cdz_synthesis_params params{};
    params.struct_size = sizeof(params);
    return params;
}

cdz_status* cdz_pipeline_synthesize(cdz_pipeline* pipeline, const char* text, const cdz_synthesis_params* params,
                                    cdz_audio** out_audio) {
    return cadenza::status_from_exceptions([&] {
        require(pipeline && out_audio, "pipeline or out_audio is NULL");
        *out_audio = nullptr;
        ExclusiveUse use(*pipeline, "cdz_pipeline_synthesize");
        std::vector<float> samples = pipeline->engine->synthesize(make_request(text, params));
        auto audio = std::make_unique<cdz_audio>();
        audio->struct_size = sizeof(cdz_audio);
        audio->sample_rate = pipeline->engine->sample_rate();
        audio->sample_count = samples.size();
        audio->samples = static_cast<float*>(std::malloc(std::max<size_t>(1, samples.size()) * sizeof(float)));
        if (!audio->samples) throw std::bad_alloc();
        std::copy(samples.begin(), samples.end(), audio->samples);
        *out_audio = audio.release();
    });
}

void cdz_audio_free(cdz_audio* audio) {
    if (!audio) return;
    std::free(audio->samples);
    delete audio;
}

cdz_status* cdz_pipeline_synthesize_stream(cdz_pipeline* pipeline, const char* text,
                                           const cdz_synthesis_params* params, cdz_audio_callback callback,
                                           void* user_data) {
    return cadenza::status_from_exceptions([&] {
        require(pipeline && callback, "pipeline or callback is NULL");
        cadenza::SynthesisRequest request = make_request(text, params);
        ExclusiveUse use(*pipeline, "cdz_pipeline_synthesize_stream");
        const uint32_t rate = pipeline->engine->sample_rate();
        request.on_audio = [&](const float* samples, size_t count) {
            return callback(samples, count, rate, user_data) == 0;
        };
        pipeline->engine->synthesize(request);
    });
}

cdz_status* cdz_pipeline_get_stats(const cdz_pipeline* pipeline, cdz_stats* out) {
    return cadenza::status_from_exceptions([&] {
        require(pipeline && out, "pipeline or out is NULL");
        require(out->struct_size > 0, "cdz_stats: set struct_size before the call");
        ExclusiveUse use(*pipeline, "cdz_pipeline_get_stats");
        pipeline->engine->stats().fill(*out);
    });
}

cdz_status* cdz_catalog_scan(const cdz_pipeline_params* params, cdz_catalog** out_catalog) {
    return cadenza::status_from_exceptions([&] {
        require(out_catalog != nullptr, "out_catalog is NULL");
        *out_catalog = nullptr;
        ensure_logging();
        auto catalog = std::make_unique<cdz_catalog>();
        catalog->catalog = cadenza::PluginCatalog::scan(cadenza::plugin_search_path(caller_locations(params)));
        for (const auto& entry : catalog->catalog.entries()) catalog->libraries.push_back(entry.library.string());
        *out_catalog = catalog.release();
    });
}

size_t cdz_catalog_count(const cdz_catalog* catalog) { return catalog ? catalog->catalog.entries().size() : 0; }

cdz_status* cdz_catalog_get(const cdz_catalog* catalog, size_t index, cdz_catalog_entry* out) {
    return cadenza::status_from_exceptions([&] {
        require(catalog && out, "catalog or out is NULL");
        require(out->struct_size > 0, "cdz_catalog_entry: set struct_size before the call");
        require(index < catalog->catalog.entries().size(), "cdz_catalog_get: index is out of range");
        const cadenza::CatalogEntry& entry = catalog->catalog.entries()[index];
        cdz_catalog_entry full{};
        full.struct_size = out->struct_size;
        full.name = entry.descriptor->name;
        full.kind = cadenza::plugin_kind_name(entry.descriptor->kind);
        full.version = entry.descriptor->version ? entry.descriptor->version : "";
        full.summary = entry.descriptor->summary ? entry.descriptor->summary : "";
        full.library = catalog->libraries[index].c_str();
        full.origin = entry.origin.c_str();
        full.shadowed = entry.shadowed ? 1 : 0;
        std::memcpy(out, &full, std::min<size_t>(out->struct_size, sizeof(full)));
    });
}

size_t cdz_catalog_problem_count(const cdz_catalog* catalog) {
    return catalog ? catalog->catalog.problems().size() : 0;
}

const char* cdz_catalog_problem(const cdz_catalog* catalog, size_t index) {
    if (!catalog || index >= catalog->catalog.problems().size()) return nullptr;
    return catalog->catalog.problems()[index].c_str();
}

void cdz_catalog_free(cdz_catalog* catalog) { delete catalog; }

}  // extern "C"
