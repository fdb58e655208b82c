'use strict';
// Finds and loads libcadenza and declares the functions of cadenza/cadenza.h.
// Search order: $CADENZA_LIBRARY (a file), the install tree this package sits
// in (installed.json, written by `cmake --install`), then the system loader.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');
const { CadenzaError, StatusCode, invalidArgument } = require('./errors');
const { ensureStacks } = require('./stacks');

const SONAME = 'libcadenza.so.0';

const Version = koffi.struct('cdz_version', {
  struct_size: 'uint32_t', abi_major: 'uint32_t', abi_minor: 'uint32_t',
  plugin_abi_major: 'uint32_t', plugin_abi_minor: 'uint32_t', library_version: 'const char *',
});
const PipelineParams = koffi.struct('cdz_pipeline_params', {
  struct_size: 'uint32_t', plugin_paths: 'const char **', plugin_path_count: 'size_t',
});
const SynthesisParams = koffi.struct('cdz_synthesis_params', {
  struct_size: 'uint32_t', use_seed: 'int', seed: 'uint64_t', max_audio_seconds: 'double',
  voice_prompt_samples: 'const float *', voice_prompt_sample_count: 'size_t', voice_prompt_sample_rate: 'uint32_t',
});
const Audio = koffi.struct('cdz_audio', {
  struct_size: 'uint32_t', samples: 'float *', sample_count: 'size_t', sample_rate: 'uint32_t',
});
const Stats = koffi.struct('cdz_stats', {
  struct_size: 'uint32_t', tokens_generated: 'int64_t', steps: 'int64_t', target_passes: 'int64_t',
  draft_passes: 'int64_t', mean_accepted_length: 'double', tokens_per_second: 'double',
  seconds_per_token: 'double', audio_seconds: 'double', wall_seconds: 'double', draft_seconds: 'double',
  verify_seconds: 'double', accept_seconds: 'double', other_seconds: 'double', position_count: 'int32_t',
  acceptance_rate: koffi.array('double', 64, 'Array'),
  loop_seconds: 'double', loop_overhead_seconds: 'double', codec_seconds: 'double',
});
const CatalogEntry = koffi.struct('cdz_catalog_entry', {
  struct_size: 'uint32_t', name: 'const char *', kind: 'const char *', version: 'const char *',
  summary: 'const char *', library: 'const char *', origin: 'const char *', shadowed: 'int',
});
const AudioCallback = koffi.proto(
  'int cdz_audio_callback(const float *samples, size_t sample_count, uint32_t sample_rate, void *user_data)');

// Statuses, pipelines and catalogs are opaque pointers (null on success for statuses).
const declarations = {
  cdz_version_get: 'void cdz_version_get(_Inout_ cdz_version *out)',
  cdz_status_get_code: 'int cdz_status_get_code(void *status)',
  cdz_status_get_message: 'const char *cdz_status_get_message(void *status)',
  cdz_status_free: 'void cdz_status_free(void *status)',
  cdz_pipeline_load_file: 'void *cdz_pipeline_load_file(const char *path, const cdz_pipeline_params *params, _Out_ void **out)',
  cdz_pipeline_load_string: 'void *cdz_pipeline_load_string(const char *toml, const char *source_name, const cdz_pipeline_params *params, _Out_ void **out)',
  cdz_pipeline_free: 'void cdz_pipeline_free(void *pipeline)',
  cdz_pipeline_describe: 'void *cdz_pipeline_describe(void *pipeline, _Out_ void **out_toml)',
  cdz_string_free: 'void cdz_string_free(void *text)',
  cdz_pipeline_synthesize: 'void *cdz_pipeline_synthesize(void *pipeline, const char *text, const cdz_synthesis_params *params, _Out_ void **out_audio)',
  cdz_audio_free: 'void cdz_audio_free(void *audio)',
  cdz_pipeline_synthesize_stream: 'void *cdz_pipeline_synthesize_stream(void *pipeline, const char *text, const cdz_synthesis_params *params, cdz_audio_callback *callback, void *user_data)',
  cdz_pipeline_get_stats: 'void *cdz_pipeline_get_stats(void *pipeline, _Inout_ cdz_stats *out)',
  cdz_catalog_scan: 'void *cdz_catalog_scan(const cdz_pipeline_params *params, _Out_ void **out)',
  cdz_catalog_count: 'size_t cdz_catalog_count(void *catalog)',
  cdz_catalog_get: 'void *cdz_catalog_get(void *catalog, size_t index, _Inout_ cdz_catalog_entry *out)',
  cdz_catalog_problem_count: 'size_t cdz_catalog_problem_count(void *catalog)',
  cdz_catalog_problem: 'const char *cdz_catalog_problem(void *catalog, size_t index)',
  cdz_catalog_free: 'void cdz_catalog_free(void *catalog)',
};

function candidates() {
  const explicit = process.env.CADENZA_LIBRARY;
  if (explicit) return [explicit.includes('/') ? path.resolve(explicit) : explicit];  // asked for: no fallback
  const found = [];
  const installed = path.join(__dirname, '..', 'installed.json');
  if (fs.existsSync(installed)) {
    const { library } = JSON.parse(fs.readFileSync(installed, 'utf8'));
    found.push(path.resolve(path.dirname(installed), library));
  }
  found.push(SONAME);
  return found;
}

let loaded = null;

function load() {
  ensureStacks();
  const failures = [];
  for (const candidate of candidates()) {
    let library;
    try {
      library = koffi.load(candidate);
    } catch (error) {
      failures.push(`${candidate}: ${error.message}`);
      continue;
    }
    const functions = { path: candidate };
    for (const [name, prototype] of Object.entries(declarations)) {
      try {
        functions[name] = library.func(prototype);
      } catch (error) {
        throw new CadenzaError(StatusCode.ABI_MISMATCH, `${candidate} has no ${name}: it is older than these bindings`);
      }
    }
    return functions;
  }
  throw new CadenzaError(StatusCode.NOT_FOUND,
    `cannot load libcadenza (${failures.join('; ')}); set CADENZA_LIBRARY to the path of libcadenza.so`);
}

// libcadenza, loaded on first use.
function lib() {
  if (!loaded) loaded = load();
  return loaded;
}

// Throws CadenzaError for a non-null status, which it frees.
function check(status) {
  if (status === null || status === undefined) return;
  const { cdz_status_get_code, cdz_status_get_message, cdz_status_free } = lib();
  const code = cdz_status_get_code(status);
  const message = cdz_status_get_message(status);
  cdz_status_free(status);
  throw new CadenzaError(code, message);
}

// A string for a const char* argument: no NUL inside.
function cString(value, what) {
  if (typeof value !== 'string') throw invalidArgument(`${what} must be a string, not ${describeType(value)}`);
  if (value.includes('\0')) throw invalidArgument(`${what} contains a NUL character`);
  return value;
}

function describeType(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? (value.constructor ? value.constructor.name : 'object') : typeof value;
}

function pipelineParams(pluginPaths) {
  const params = { struct_size: koffi.sizeof(PipelineParams), plugin_paths: null, plugin_path_count: 0 };
  if (pluginPaths === undefined || pluginPaths === null) return params;
  if (!Array.isArray(pluginPaths)) throw invalidArgument('pluginPaths must be an array of paths');
  params.plugin_paths = pluginPaths.map((entry) => cString(entry, 'a plugin path'));
  params.plugin_path_count = pluginPaths.length;
  return params;
}

module.exports = {
  koffi, lib, check, cString, describeType, pipelineParams,
  Version, PipelineParams, SynthesisParams, Audio, Stats, CatalogEntry, AudioCallback,
};
