/* cadenza embedding API.
 *
 * Load a pipeline (a TOML file naming a frontend, codec, backbone, drafter
 * and acceptor), synthesize text to audio, read the statistics of the last
 * run. C99; every handle is opaque; every fallible call returns cdz_status*
 * (NULL on success) which the caller releases with cdz_status_free; every
 * object the library returns has its own *_free function. Exceptions never
 * leave the library.
 *
 * Structs that may grow start with `struct_size`: get them from
 * *_default_params(), or set struct_size = sizeof(the struct) yourself.
 *
 * Threads (since ABI 0.5):
 * - Functions without a handle (versions, statuses, *_default_params,
 *   loading, catalog scans) may be called from any thread at any time.
 * - Different pipelines are independent: N pipelines in N threads give the
 *   same audio as the same calls one after another.
 * - One pipeline synthesizes one text at a time. cdz_pipeline_synthesize,
 *   cdz_pipeline_synthesize_stream and cdz_pipeline_get_stats called from
 *   several threads on one handle are serialized: each waits until the
 *   running synthesis returns. Called from inside that pipeline's own audio
 *   callback (the same thread), they return CDZ_STATUS_BUSY and leave the
 *   running synthesis untouched. cdz_pipeline_describe reads only what was
 *   fixed at load and may run at any time.
 * - cdz_pipeline_free and cdz_catalog_free must not race with any other call
 *   on the same handle (nor be called from its callback).
 * - A catalog is read-only after cdz_catalog_scan: any thread may read it.
 * - A status, an audio (cdz_audio) and a string the library returned are
 *   plain data owned by the caller that received them: any thread may read
 *   and free them, one at a time.
 */
#ifndef CADENZA_H
#define CADENZA_H

#include <stddef.h>
#include <stdint.h>

#include "cadenza/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CDZ_API __declspec(dllimport)
#else
#define CDZ_API __attribute__((visibility("default")))
#endif

#define CDZ_ABI_VERSION_MAJOR 0
#define CDZ_ABI_VERSION_MINOR 5

/* ------------------------------------------------------------------------ */
/* Versions and status                                                       */

typedef struct cdz_version {
    uint32_t struct_size;
    uint32_t abi_major;         /* of this embedding API */
    uint32_t abi_minor;
    uint32_t plugin_abi_major;  /* of the plugin ABI the library hosts */
    uint32_t plugin_abi_minor;
    const char* library_version; /* "0.1.0" */
} cdz_version;

/* Fills `out` up to out->struct_size. */
CDZ_API void cdz_version_get(cdz_version* out);
/* The library version as a string, e.g. "0.1.0". */
CDZ_API const char* cdz_library_version(void);

CDZ_API cdz_status_code cdz_status_get_code(const cdz_status* status);
/* Valid until the status is freed. */
CDZ_API const char* cdz_status_get_message(const cdz_status* status);
CDZ_API void cdz_status_free(cdz_status* status);

/* ------------------------------------------------------------------------ */
/* Pipelines                                                                 */

typedef struct cdz_pipeline cdz_pipeline;

typedef struct cdz_pipeline_params {
    uint32_t struct_size;
    /* Searched before the pipeline's own plugin_paths; may be NULL. */
    const char* const* plugin_paths;
    size_t plugin_path_count;
} cdz_pipeline_params;

CDZ_API cdz_pipeline_params cdz_pipeline_default_params(void);

/* Loads, validates and instantiates a pipeline. On a validation error the
 * status message lists every problem as "file:line:column: message". */
CDZ_API cdz_status* cdz_pipeline_load_file(const char* path, const cdz_pipeline_params* params,
                                           cdz_pipeline** out_pipeline);
/* `source_name` names the text in messages and anchors relative paths
 * (its directory); NULL means "<string>" and the working directory. */
CDZ_API cdz_status* cdz_pipeline_load_string(const char* toml_text, const char* source_name,
                                             const cdz_pipeline_params* params,
                                             cdz_pipeline** out_pipeline);
CDZ_API void cdz_pipeline_free(cdz_pipeline* pipeline);

/* The pipeline as resolved, defaults filled in, as TOML text.
 * Free with cdz_string_free. */
CDZ_API cdz_status* cdz_pipeline_describe(const cdz_pipeline* pipeline, char** out_toml);
CDZ_API void cdz_string_free(char* text);

/* ------------------------------------------------------------------------ */
/* Synthesis                                                                 */

typedef struct cdz_synthesis_params {
    uint32_t struct_size;
    /* The pipeline's seed is used unless use_seed is set. */
    int use_seed;
    uint64_t seed;
    /* Stop after this many seconds of audio; 0: the pipeline's limit. */
    double max_audio_seconds;
    /* Since ABI 0.2: mono audio of the voice to imitate, at any sample rate,
     * encoded by the pipeline's codec and placed after the text. NULL: the
     * pipeline's voice_prompt file, if any. Read during the call only. */
    const float* voice_prompt_samples;
    size_t voice_prompt_sample_count;
    uint32_t voice_prompt_sample_rate;
} cdz_synthesis_params;

CDZ_API cdz_synthesis_params cdz_synthesis_default_params(void);

typedef struct cdz_audio {
    uint32_t struct_size;
    float* samples;          /* mono, in [-1, 1] */
    size_t sample_count;
    uint32_t sample_rate;    /* Hz */
} cdz_audio;

CDZ_API cdz_status* cdz_pipeline_synthesize(cdz_pipeline* pipeline, const char* utf8_text,
                                            const cdz_synthesis_params* params,
                                            cdz_audio** out_audio);
CDZ_API void cdz_audio_free(cdz_audio* audio);

/* Receives audio as it is decoded. Return 0 to go on, non-zero to cancel:
 * the synthesis then stops and returns CDZ_STATUS_CANCELLED. `samples` is
 * valid only during the call. */
typedef int (*cdz_audio_callback)(const float* samples, size_t sample_count,
                                  uint32_t sample_rate, void* user_data);

CDZ_API cdz_status* cdz_pipeline_synthesize_stream(cdz_pipeline* pipeline, const char* utf8_text,
                                                   const cdz_synthesis_params* params,
                                                   cdz_audio_callback callback, void* user_data);

/* ------------------------------------------------------------------------ */
/* Statistics of the last synthesis                                          */

#define CDZ_STATS_MAX_POSITIONS 64

typedef struct cdz_stats {
    uint32_t struct_size;
    int64_t tokens_generated;
    int64_t steps;                  /* decoding loop iterations */
    int64_t target_passes;          /* backbone forward passes */
    int64_t draft_passes;           /* drafter proposals */
    double mean_accepted_length;    /* accepted drafts + 1 per step */
    double tokens_per_second;       /* over loop_seconds (since ABI 0.3; before, draft + verify + accept) */
    double seconds_per_token;
    double audio_seconds;
    double wall_seconds;
    double draft_seconds;
    double verify_seconds;
    double accept_seconds;
    double other_seconds;           /* frontend, codec, bookkeeping */
    int32_t position_count;         /* entries used in acceptance_rate */
    double acceptance_rate[CDZ_STATS_MAX_POSITIONS]; /* per draft depth */
    /* Since ABI 0.3. The decoding loop from the prompt's prefill to the last
     * token, its part outside draft, verify and accept (sampling,
     * bookkeeping), and the codec's decoding (streamed with the pipeline's
     * codec_thread: the decode thread's busy time, beside the loop). */
    double loop_seconds;
    double loop_overhead_seconds;
    double codec_seconds;
} cdz_stats;

/* Fills `out` up to out->struct_size (set it before the call). */
CDZ_API cdz_status* cdz_pipeline_get_stats(const cdz_pipeline* pipeline, cdz_stats* out);

/* ------------------------------------------------------------------------ */
/* The plugins cadenza finds (since ABI 0.4)                                 */

typedef struct cdz_catalog cdz_catalog;

typedef struct cdz_catalog_entry {
    uint32_t struct_size;
    const char* name;        /* "acceptor.bias" */
    const char* kind;        /* "frontend", "codec", "backbone", "drafter", "acceptor" */
    const char* version;     /* the plugin's own version */
    const char* summary;     /* one line; "" when the plugin gives none */
    const char* library;     /* the shared library it came from */
    const char* origin;      /* the search path entry that found it */
    int shadowed;            /* non-zero: an earlier place has a plugin of this name */
} cdz_catalog_entry;

/* Every plugin along the search path a pipeline loaded with `params` would
 * use (params may be NULL): the caller's paths, $CADENZA_PLUGIN_PATH, then
 * cadenza's own plugins. A library that fails to load is not an error here:
 * it is counted by cdz_catalog_problem_count. */
CDZ_API cdz_status* cdz_catalog_scan(const cdz_pipeline_params* params, cdz_catalog** out_catalog);
CDZ_API size_t cdz_catalog_count(const cdz_catalog* catalog);
/* Fills `out` up to out->struct_size; strings live as long as the catalog. */
CDZ_API cdz_status* cdz_catalog_get(const cdz_catalog* catalog, size_t index, cdz_catalog_entry* out);
/* Libraries that failed to load, missing explicit paths, ambiguous names. */
CDZ_API size_t cdz_catalog_problem_count(const cdz_catalog* catalog);
/* NULL when index is out of range; valid as long as the catalog. */
CDZ_API const char* cdz_catalog_problem(const cdz_catalog* catalog, size_t index);
CDZ_API void cdz_catalog_free(cdz_catalog* catalog);

#ifdef __cplusplus
}
#endif

#endif /* CADENZA_H */
