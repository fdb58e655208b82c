'use strict';
// Synthesis on the test doubles: seeds, statistics, voices, describe; and the
// shipped model, whose WAV output equals the CLI's byte for byte.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Pipeline } = require('cadenza');
const {
  FRAMES, SAMPLES_PER_FRAME, cli, defaultPipeline, doublesPipeline, doublesToml, doubles, voice, bytesOf,
} = require('./support');

test('a seed repeats bit for bit', () => {
  const pipeline = doublesPipeline();
  try {
    const first = pipeline.synthesize('Hello, world.', { seed: 3 });
    const again = pipeline.synthesize('Hello, world.', { seed: 3 });
    const other = pipeline.synthesize('Hello, world.', { seed: 4n });
    assert.ok(first.audio instanceof Float32Array);
    assert.equal(first.audio.length, FRAMES * SAMPLES_PER_FRAME);
    assert.equal(first.sampleRate, 16000);
    assert.ok(bytesOf(first.audio).equals(bytesOf(again.audio)));
    assert.ok(!bytesOf(first.audio).equals(bytesOf(other.audio)));
  } finally {
    pipeline.close();
  }
});

test('stats hold every figure with its unit', () => {
  const pipeline = doublesPipeline('[draft]\nplugin = "test.markov_drafter"\nend_after = 60\ndepth = 4\n' +
                                   '[acceptor]\nplugin = "acceptor.exact"\n');
  try {
    const { stats } = pipeline.synthesize('Statistics.', { seed: 1 });
    assert.deepEqual(Object.keys(stats).sort(), [
      'acceptSeconds', 'acceptanceRateByDepth', 'audioSeconds', 'codecSeconds', 'draftPasses', 'draftSeconds',
      'loopOverheadSeconds', 'loopSeconds', 'meanAcceptedTokensPerStep', 'otherSeconds', 'secondsPerToken', 'steps',
      'targetPasses', 'tokensGenerated', 'tokensPerSecond', 'verifySeconds', 'wallSeconds']);
    assert.equal(stats.tokensGenerated, FRAMES + 1);
    assert.equal(stats.acceptanceRateByDepth.length, 4);
    assert.ok(stats.draftPasses > 0);
    assert.deepEqual(pipeline.stats(), stats);
  } finally {
    pipeline.close();
  }
});

test('a voice from a file or from samples is the same voice; maxSeconds stops early', () => {
  const pipeline = doublesPipeline();
  try {
    const { readMono } = require('cadenza/lib/audio_file');
    const prompt = readMono(voice);
    const fromFile = pipeline.synthesize('Voice.', { seed: 2, voice });
    const fromSamples = pipeline.synthesize('Voice.', { seed: 2, voice: prompt });
    assert.ok(bytesOf(fromFile.audio).equals(bytesOf(fromSamples.audio)));
    const short = pipeline.synthesize('Short.', { seed: 1, maxSeconds: 0.5 });
    assert.ok(short.audio.length < FRAMES * SAMPLES_PER_FRAME);
  } finally {
    pipeline.close();
  }
});

test('describe gives the resolved pipeline; a file loads relative to its directory', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cadenza-node-'));
  try {
    const file = path.join(scratch, 'doubles.toml');
    fs.writeFileSync(file, doublesToml());
    const pipeline = new Pipeline(file, { pluginPaths: [doubles] });
    const text = pipeline.describe();
    assert.match(text, /plugin = "test.markov_backbone"/);
    assert.match(text, /audio_tokens = 32 {2}# default/);
    pipeline.close();
    assert.ok(pipeline.closed);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('the shipped model: the same WAV bytes as the CLI for the same seed', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'cadenza-node-'));
  try {
    const fromCli = path.join(scratch, 'cli.wav');
    execFileSync(cli, ['synth', '-p', defaultPipeline, '-t', 'hello there', '-o', fromCli, '--seed', '7'], { stdio: 'pipe' });
    const pipeline = new Pipeline(defaultPipeline);
    const speech = pipeline.synthesize('hello there', { seed: 7 });
    pipeline.close();
    assert.ok(speech.seconds > 0.3);
    const fromNode = path.join(scratch, 'node.wav');
    speech.save(fromNode);
    assert.ok(fs.readFileSync(fromNode).equals(fs.readFileSync(fromCli)));
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

test('the shipped model streams on a worker thread, and cancels', async () => {
  // LibTorch runs on koffi's asynchronous stack here: repeated, to catch a stack too small for it.
  const pipeline = new Pipeline(defaultPipeline);
  try {
    for (let round = 0; round < 3; ++round) {
      const stream = pipeline.stream('hello there, streamed', { seed: round });
      let received = 0;
      for await (const chunk of stream) {
        received += chunk.length;
        if (received >= 8000) break;
      }
      assert.ok(received >= 8000, `${received} samples`);
      assert.equal(stream.cancelled, true);
    }
  } finally {
    pipeline.close();
  }
});
