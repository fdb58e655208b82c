'use strict';
// What the suite runs against, from the environment the CTest entry sets:
// CADENZA_TEST_PREFIX (a fresh `cmake --install` prefix, whose
// lib/node_modules/cadenza is the package under test), CADENZA_TEST_PLUGINS
// (the test doubles' plugins), CADENZA_TEST_CLI (the cadenza program).
const path = require('node:path');

const prefix = process.env.CADENZA_TEST_PREFIX || '/nonexistent';
const doubles = process.env.CADENZA_TEST_PLUGINS || '/nonexistent';
const cli = process.env.CADENZA_TEST_CLI || path.join(prefix, 'bin', 'cadenza');
const share = path.join(prefix, 'share', 'cadenza');
const vocabulary = path.join(share, 'models', 'frontend', 'english_chars.vocab');
const defaultPipeline = path.join(share, 'pipelines', 'default.toml');
const voice = path.join(share, 'models', 'en-small', 'voices', 'rms.wav');
const FRAMES = 60;
const SAMPLES_PER_FRAME = 320;

function doublesToml(extra = '', sampling = 'temperature = 0.8') {
  return '[pipeline]\nname = "doubles"\nseed = 11\nmax_audio_seconds = 2.0\n' +
    `[frontend]\nplugin = "frontend.chars"\nvocabulary = "${vocabulary}"\n` +
    '[codec]\nplugin = "test.tone_codec"\n' +
    `[backbone]\nplugin = "test.markov_backbone"\nend_after = ${FRAMES}\n` +
    `[sampling]\n${sampling}\n${extra}`;
}

function doublesPipeline(extra = '') {
  const { Pipeline } = require('cadenza');
  return Pipeline.fromString(doublesToml(extra), { pluginPaths: [doubles] });
}

function bytesOf(floats) {
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);
}

module.exports = {
  prefix, doubles, cli, share, vocabulary, defaultPipeline, voice, FRAMES, SAMPLES_PER_FRAME,
  doublesToml, doublesPipeline, bytesOf,
};
