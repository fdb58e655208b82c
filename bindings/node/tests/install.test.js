'use strict';
// The package as installed: it comes from the prefix, finds libcadenza and
// cadenza's own plugins there, and honours CADENZA_LIBRARY and CADENZA_PLUGIN_PATH.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const cadenza = require('cadenza');
const { prefix, doubles } = require('./support');

const realPrefix = fs.realpathSync(prefix);

function runNode(code, env = {}) {
  const environment = { ...process.env, ...env };
  if (!('CADENZA_PLUGIN_PATH' in env)) delete environment.CADENZA_PLUGIN_PATH;
  return execFileSync(process.execPath, ['-e', code], { env: environment, encoding: 'utf8' }).trim();
}

test('the package and the library come from the prefix', () => {
  assert.ok(fs.realpathSync(require.resolve('cadenza')).startsWith(realPrefix), require.resolve('cadenza'));
  const version = cadenza.version();
  assert.ok(fs.realpathSync(version.path).startsWith(realPrefix), version.path);
  assert.deepEqual(version.abi, [0, 5]);
  assert.match(version.library, /^\d+\.\d+\.\d+$/);
});

test("cadenza's own plugins are found in the prefix", () => {
  const found = new Map(cadenza.plugins().map((plugin) => [plugin.name, plugin]));
  for (const name of ['frontend.chars', 'frontend.flite', 'codec.mel_fsq', 'backbone.llama', 'acceptor.bias']) {
    assert.ok(found.has(name), name);
  }
  const chars = found.get('frontend.chars');
  assert.equal(chars.kind, 'frontend');
  assert.equal(chars.origin, "cadenza's own plugins");
  assert.ok(fs.realpathSync(chars.library).startsWith(realPrefix), chars.library);
  assert.deepEqual(cadenza.pluginProblems(), []);
});

test('plugin paths come first; a missing one is a problem', () => {
  const found = cadenza.plugins([doubles]).filter((plugin) => plugin.name === 'test.markov_backbone');
  assert.equal(found.length, 1);
  assert.equal(found[0].origin, 'cdz_pipeline_params');
  assert.ok(cadenza.pluginProblems(['/no/such/plugins']).some((problem) => problem.includes('/no/such/plugins')));
});

test('CADENZA_PLUGIN_PATH is honoured', () => {
  const code = "console.log(JSON.stringify(require('cadenza').plugins().filter((p) => p.name === 'test.tone_codec').map((p) => p.origin)))";
  assert.equal(runNode(code), '[]');
  assert.equal(runNode(code, { CADENZA_PLUGIN_PATH: doubles }), '["$CADENZA_PLUGIN_PATH"]');
});

test('CADENZA_LIBRARY is honoured', () => {
  const library = path.join(prefix, 'lib', 'libcadenza.so.0');
  assert.equal(runNode("console.log(require('cadenza').version().path)", { CADENZA_LIBRARY: library }), library);
  const missing = runNode("try { require('cadenza').version() } catch (e) { console.log(e.name, e.status, e.message) }",
    { CADENZA_LIBRARY: '/no/such/libcadenza.so' });
  assert.match(missing, /^CadenzaError NOT_FOUND cannot load libcadenza \(\/no\/such\/libcadenza\.so/);
});

test("koffi's call stacks are an ordinary thread's, as LibTorch needs", () => {
  cadenza.version();
  const config = require('koffi').config();
  assert.ok(config.sync_stack_size >= 8 << 20, `${config.sync_stack_size}`);
  assert.ok(config.async_stack_size >= 8 << 20, `${config.async_stack_size}`);
});
