'use strict';
// cadenza: fast autoregressive speech synthesis, from Node.
//
//   const { Pipeline } = require('cadenza');
//   const pipeline = new Pipeline('pipelines/default.toml');
//   const { audio, sampleRate, stats } = pipeline.synthesize('Hello there.', { seed: 42 });
//   pipeline.close();
//
// A thin layer over libcadenza's C API (cadenza/cadenza.h) through koffi.

const { koffi, lib, check, pipelineParams, Version, CatalogEntry } = require('./library');
const { CadenzaError, StatusCode } = require('./errors');
const { Pipeline, Stream, Synthesis } = require('./pipeline');

// The library's versions and the file it was loaded from.
function version() {
  const raw = { struct_size: koffi.sizeof(Version) };
  lib().cdz_version_get(raw);
  return {
    library: raw.library_version,
    abi: [raw.abi_major, raw.abi_minor],
    pluginAbi: [raw.plugin_abi_major, raw.plugin_abi_minor],
    path: lib().path,
  };
}

function scan(pluginPaths) {
  const params = pipelineParams(pluginPaths);
  const out = [null];
  check(lib().cdz_catalog_scan(params, out));
  const catalog = out[0];
  try {
    const plugins = [];
    const count = Number(lib().cdz_catalog_count(catalog));
    for (let index = 0; index < count; ++index) {
      const entry = { struct_size: koffi.sizeof(CatalogEntry) };
      check(lib().cdz_catalog_get(catalog, index, entry));
      plugins.push({
        name: entry.name, kind: entry.kind, version: entry.version, summary: entry.summary,
        library: entry.library, origin: entry.origin, shadowed: entry.shadowed !== 0,
      });
    }
    const problems = [];
    const problemCount = Number(lib().cdz_catalog_problem_count(catalog));
    for (let index = 0; index < problemCount; ++index) problems.push(lib().cdz_catalog_problem(catalog, index));
    return { plugins, problems };
  } finally {
    lib().cdz_catalog_free(catalog);
  }
}

// Every plugin found: pluginPaths first, then $CADENZA_PLUGIN_PATH, then cadenza's own.
function plugins(pluginPaths) { return scan(pluginPaths).plugins; }
// Libraries that failed to load, missing explicit paths, ambiguous names.
function pluginProblems(pluginPaths) { return scan(pluginPaths).problems; }

module.exports = { CadenzaError, Pipeline, StatusCode, Stream, Synthesis, plugins, pluginProblems, version };
