'use strict';
// Streaming on the test doubles: the same audio in chunks as they are
// decoded, and leaving the loop cancels the synthesis.
const test = require('node:test');
const assert = require('node:assert/strict');
const { CadenzaError } = require('cadenza');
const { FRAMES, SAMPLES_PER_FRAME, doublesPipeline, bytesOf } = require('./support');

function concatenate(chunks) {
  const all = new Float32Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}

test('chunks are the whole synthesis', async () => {
  const pipeline = doublesPipeline();
  try {
    const whole = pipeline.synthesize('Streaming.', { seed: 8 });
    const stream = pipeline.stream('Streaming.', { seed: 8 });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    assert.equal(chunks.length, 6);  // 60 frames in chunks of 10
    assert.ok(chunks.every((chunk) => chunk instanceof Float32Array));
    assert.ok(bytesOf(concatenate(chunks)).equals(bytesOf(whole.audio)));
    assert.equal(stream.cancelled, false);
    assert.equal(stream.sampleRate, 16000);
    assert.equal(stream.stats.tokensGenerated, FRAMES + 1);
  } finally {
    pipeline.close();
  }
});

test('leaving the loop cancels the synthesis, and the pipeline goes on', async () => {
  const pipeline = doublesPipeline();
  try {
    const stream = pipeline.stream('Cancel me.', { seed: 8 });
    let count = 0;
    for await (const chunk of stream) {
      assert.ok(chunk.length > 0);
      if (++count === 1) break;
    }
    assert.equal(stream.cancelled, true);
    assert.ok(stream.stats.tokensGenerated < FRAMES + 1, `${stream.stats.tokensGenerated} tokens`);
    assert.equal(pipeline.synthesize('Still works.', { seed: 1 }).audio.length, FRAMES * SAMPLES_PER_FRAME);
  } finally {
    pipeline.close();
  }
});

test('the pipeline refuses other calls while a stream runs; close cancels it', async () => {
  const pipeline = doublesPipeline();
  const stream = pipeline.stream('Busy.', { seed: 8 });
  assert.throws(() => pipeline.synthesize('x'), (error) => error instanceof CadenzaError && /a stream is running/.test(error.message));
  pipeline.close();
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(stream.cancelled, true);
  assert.throws(() => pipeline.stream('x'), /the pipeline is closed/);
});

test('an error in a streamed synthesis rejects the loop', async () => {
  const { Pipeline } = require('cadenza');
  const { doublesToml } = require('./support');
  const pipeline = Pipeline.fromString(doublesToml().split('[codec]')[0]);
  try {
    await assert.rejects(async () => { for await (const chunk of pipeline.stream('x')) void chunk; },
      (error) => error instanceof CadenzaError && error.status === 'INVALID_CONFIG' && /missing \[backbone\], \[codec\]/.test(error.message));
  } finally {
    pipeline.close();
  }
});
