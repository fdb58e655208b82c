'use strict';
// Misuse throws CadenzaError with the status code and the library's message.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { CadenzaError, Pipeline, StatusCode, plugins } = require('cadenza');
const { doublesPipeline, doublesToml, doubles } = require('./support');

function fails(code, ...fragments) {
  return (error) => {
    assert.ok(error instanceof CadenzaError, `not a CadenzaError: ${error}`);
    assert.equal(error.code, code, error.message);
    for (const fragment of fragments) assert.ok(error.message.includes(fragment), `${error.message} lacks ${fragment}`);
    return true;
  };
}

test('a bad pipeline file gives every position', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cadenza-node-'));
  try {
    const file = path.join(scratch, 'bad.toml');
    fs.writeFileSync(file, '[pipeline]\nnmae = "x"\n[sampling]\ntemperature = -1\n');
    assert.throws(() => new Pipeline(file),
      fails(StatusCode.INVALID_CONFIG, `${file}:2:1: unknown key 'nmae'`, `${file}:4:15: 'temperature'`));
    assert.throws(() => Pipeline.fromString('[pipeline]\nnmae = "x"\n', { baseDir: scratch, name: 'bad.toml' }),
      fails(StatusCode.INVALID_CONFIG, "bad.toml:2:1: unknown key 'nmae'"));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('a missing file is not found, a missing plugin a configuration error', () => {
  assert.throws(() => new Pipeline('/no/such/pipeline.toml'), fails(StatusCode.NOT_FOUND, '/no/such/pipeline.toml'));
  assert.throws(() => Pipeline.fromString(doublesToml()), fails(StatusCode.INVALID_CONFIG, "no plugin named 'test.markov_backbone'"));
});

test('a closed pipeline refuses every call', () => {
  const pipeline = doublesPipeline();
  pipeline.close();
  pipeline.close();
  for (const call of [() => pipeline.synthesize('x'), () => pipeline.stream('x'), () => pipeline.describe(), () => pipeline.stats()]) {
    assert.throws(call, fails(StatusCode.INVALID_ARGUMENT, 'the pipeline is closed'));
  }
});

test('wrong types are invalid arguments', () => {
  const pipeline = doublesPipeline();
  try {
    const cases = [
      [() => pipeline.synthesize(42), 'text must be a string, not number'],
      [() => pipeline.synthesize('a\0b'), 'NUL'],
      [() => pipeline.synthesize('x', { seed: '7' }), 'seed must be an integer'],
      [() => pipeline.synthesize('x', { seed: -1 }), 'seed must be an integer'],
      [() => pipeline.synthesize('x', { seed: 1.5 }), 'seed must be an integer'],
      [() => pipeline.synthesize('x', { maxSeconds: -1 }), 'maxSeconds must be a number >= 0'],
      [() => pipeline.synthesize('x', { voice: 3 }), 'voice must be a path'],
      [() => pipeline.synthesize('x', { voice: { samples: [0.1], sampleRate: 16000 } }), 'Float32Array'],
      [() => pipeline.synthesize('x', { sede: 1 }), "unknown option 'sede'"],
      [() => pipeline.stream(null), 'text must be a string, not null'],
      [() => new Pipeline(3.5), 'path must be a string'],
      [() => Pipeline.fromString(doublesToml(), { pluginPaths: doubles }), 'pluginPaths must be an array'],
      [() => plugins([null]), 'a plugin path must be a string'],
    ];
    for (const [call, fragment] of cases) assert.throws(call, fails(StatusCode.INVALID_ARGUMENT, fragment));
    assert.equal(pipeline.synthesize('after all that', { seed: 1 }).audio.length, 60 * 320);
  } finally {
    pipeline.close();
  }
});

test('a voice file that is not audio', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cadenza-node-'));
  const pipeline = doublesPipeline();
  try {
    const file = path.join(scratch, 'voice.wav');
    fs.writeFileSync(file, 'this is not audio\n'.repeat(20));
    assert.throws(() => pipeline.synthesize('x', { voice: file }), fails(StatusCode.INVALID_ARGUMENT, `${file}: cannot read audio`));
    assert.throws(() => pipeline.synthesize('x', { voice: '/no/such/voice.wav' }), fails(StatusCode.NOT_FOUND, '/no/such/voice.wav'));
  } finally {
    pipeline.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('misuse in a loop leaks nothing', async () => {
  const round = async () => {
    assert.throws(() => Pipeline.fromString('[pipeline]\nnmae = "x"\n'), CadenzaError);
    const pipeline = doublesPipeline();
    assert.throws(() => pipeline.synthesize('x', { voice: 3 }), CadenzaError);
    pipeline.synthesize('leak check', { seed: 1 });
    for await (const chunk of pipeline.stream('leak check', { seed: 1 })) { void chunk; break; }
    pipeline.close();
    assert.throws(() => pipeline.synthesize('closed'), CadenzaError);
  };
  // The bytes malloc has handed out and not taken back (all arenas), after V8
  // has collected its garbage: resident memory swings by megabytes as malloc
  // keeps or returns freed pages, this does not. (cadenza loads first: koffi
  // takes its stack sizes only before its first library.)
  require('cadenza').version();
  const koffi = require('koffi');
  koffi.struct('cadenza_test_mallinfo2', {
    arena: 'size_t', ordblks: 'size_t', smblks: 'size_t', hblks: 'size_t', hblkhd: 'size_t',
    usmblks: 'size_t', fsmblks: 'size_t', uordblks: 'size_t', fordblks: 'size_t', keepcost: 'size_t',
  });
  const mallinfo2 = koffi.load('libc.so.6').func('cadenza_test_mallinfo2 mallinfo2(void)');
  require('node:v8').setFlagsFromString('--expose-gc');
  const collect = require('node:vm').runInNewContext('gc');
  // V8 frees array buffers' memory on a thread of its own after a collection:
  // the least of a few measures, a little apart, is what is really in use.
  const allocated = async () => {
    let least = Infinity;
    for (let attempt = 0; attempt < 5; ++attempt) {
      collect();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const info = mallinfo2();
      least = Math.min(least, Number(info.uordblks) + Number(info.hblkhd));
    }
    return least;
  };
  for (let i = 0; i < 20; ++i) await round();  // warm up: loaded plugins, koffi's pools, caches
  const before = await allocated();
  for (let i = 0; i < 200; ++i) await round();
  const grown = (await allocated()) - before;
  // A leaked audio buffer (19,200 floats, 77 kB) per round would be 15 MB.
  assert.ok(grown < 2 * 1024 * 1024, `malloc's bytes in use grew by ${grown} over 200 rounds`);
});
