'use strict';
// A loaded pipeline: synthesis, streaming, description, statistics.

const path = require('node:path');
const {
  koffi, lib, check, cString, describeType, pipelineParams, Audio, Stats, SynthesisParams, AudioCallback,
} = require('./library');
const { CadenzaError, StatusCode, invalidArgument } = require('./errors');
const audioFile = require('./audio_file');

// Every figure of cdz_stats, with its unit in its name.
function statsObject(raw) {
  const count = Math.max(0, Math.min(raw.position_count, raw.acceptance_rate.length));
  return {
    tokensGenerated: Number(raw.tokens_generated),
    steps: Number(raw.steps),
    targetPasses: Number(raw.target_passes),
    draftPasses: Number(raw.draft_passes),
    meanAcceptedTokensPerStep: raw.mean_accepted_length,
    tokensPerSecond: raw.tokens_per_second,
    secondsPerToken: raw.seconds_per_token,
    audioSeconds: raw.audio_seconds,
    wallSeconds: raw.wall_seconds,
    draftSeconds: raw.draft_seconds,
    verifySeconds: raw.verify_seconds,
    acceptSeconds: raw.accept_seconds,
    otherSeconds: raw.other_seconds,
    loopSeconds: raw.loop_seconds,
    loopOverheadSeconds: raw.loop_overhead_seconds,
    codecSeconds: raw.codec_seconds,
    acceptanceRateByDepth: Array.from(raw.acceptance_rate).slice(0, count),
  };
}

function readStats(handle) {
  const raw = { struct_size: koffi.sizeof(Stats) };
  check(lib().cdz_pipeline_get_stats(handle, raw));
  return statsObject(raw);
}

function voiceSamples(voice) {
  if (typeof voice === 'string') return audioFile.readMono(voice);
  if (voice && typeof voice === 'object' && !Array.isArray(voice)) {
    const { samples, sampleRate } = voice;
    if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw invalidArgument("a voice's sampleRate must be a positive integer");
    if (!(samples instanceof Float32Array) || samples.length === 0) throw invalidArgument("a voice's samples must be a non-empty Float32Array");
    return { samples, sampleRate };
  }
  throw invalidArgument(`voice must be a path to an audio file or {samples, sampleRate}, not ${describeType(voice)}`);
}

// cdz_synthesis_params from {seed, voice, maxSeconds}; `release` frees the voice copy.
function synthesisParams(options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) throw invalidArgument('options must be an object');
  for (const key of Object.keys(options)) {
    if (!['seed', 'voice', 'maxSeconds'].includes(key)) throw invalidArgument(`unknown option '${key}' (seed, voice, maxSeconds)`);
  }
  const params = {
    struct_size: koffi.sizeof(SynthesisParams), use_seed: 0, seed: 0, max_audio_seconds: 0,
    voice_prompt_samples: null, voice_prompt_sample_count: 0, voice_prompt_sample_rate: 0,
  };
  const { seed, voice, maxSeconds } = options;
  if (seed !== undefined && seed !== null) {
    const valid = (typeof seed === 'number' && Number.isSafeInteger(seed) && seed >= 0) ||
                  (typeof seed === 'bigint' && seed >= 0n && seed < 2n ** 64n);
    if (!valid) throw invalidArgument(`seed must be an integer in [0, 2**64), not ${String(seed)}`);
    params.use_seed = 1;
    params.seed = seed;
  }
  if (maxSeconds !== undefined && maxSeconds !== null) {
    if (typeof maxSeconds !== 'number' || !(maxSeconds >= 0)) throw invalidArgument(`maxSeconds must be a number >= 0, not ${String(maxSeconds)}`);
    params.max_audio_seconds = maxSeconds;
  }
  let memory = null;
  if (voice !== undefined && voice !== null) {
    const { samples, sampleRate } = voiceSamples(voice);
    // Memory that stays put while a worker thread runs the synthesis.
    memory = koffi.alloc('float', samples.length);
    koffi.encode(memory, 'float', samples, samples.length);
    params.voice_prompt_samples = memory;
    params.voice_prompt_sample_count = samples.length;
    params.voice_prompt_sample_rate = sampleRate;
  }
  return { params, release: () => { if (memory) koffi.free(memory); memory = null; } };
}

class Synthesis {
  constructor(audio, sampleRate, stats) {
    this.audio = audio;            // Float32Array, mono, in [-1, 1]
    this.sampleRate = sampleRate;  // Hz
    this.stats = stats;
  }

  get seconds() { return this.sampleRate ? this.audio.length / this.sampleRate : 0; }

  // Writes a 16-bit WAV file, the same bytes `cadenza synth` writes.
  save(file) { audioFile.writeWav(file, this.audio, this.sampleRate); }
}

class Pipeline {
  #handle = null;
  #stream = null;  // the running stream's state, if any

  // new Pipeline(path, {pluginPaths})
  constructor(file, options = {}, handle = undefined) {
    if (handle !== undefined) {
      this.#handle = handle;
      return;
    }
    const params = pipelineParams(options && options.pluginPaths);
    const out = [null];
    check(lib().cdz_pipeline_load_file(cString(file, 'path'), params, out));
    this.#handle = out[0];
  }

  // A pipeline from TOML text; relative paths in it are relative to baseDir
  // (default: the working directory); messages call it `name`.
  static fromString(toml, { baseDir, pluginPaths, name = '<string>' } = {}) {
    let source = null;
    if (baseDir !== undefined && baseDir !== null) source = path.join(path.resolve(cString(baseDir, 'baseDir')), name);
    else if (name !== '<string>') source = path.resolve(name);
    const params = pipelineParams(pluginPaths);
    const out = [null];
    check(lib().cdz_pipeline_load_string(cString(toml, 'toml'), source, params, out));
    return new Pipeline(undefined, undefined, out[0]);
  }

  get closed() { return this.#handle === null; }

  // Frees the pipeline; a running stream is cancelled and the pipeline freed
  // when it has stopped. Idempotent.
  close() {
    if (this.#handle === null) return;
    if (this.#stream) {
      this.#stream.cancel = true;
      this.#stream.freeWhenDone = true;
    } else {
      lib().cdz_pipeline_free(this.#handle);
    }
    this.#handle = null;
  }

  #live(allowStreaming = false) {
    if (this.#handle === null) throw invalidArgument('the pipeline is closed');
    if (this.#stream && !allowStreaming) {
      throw invalidArgument('a stream is running on this pipeline: read it to the end or leave its loop first');
    }
    return this.#handle;
  }

  // The pipeline as resolved, defaults filled in, as TOML text.
  describe() {
    const out = [null];
    check(lib().cdz_pipeline_describe(this.#live(), out));
    try {
      return koffi.decode(out[0], 'char', -1);
    } finally {
      lib().cdz_string_free(out[0]);
    }
  }

  // The statistics of the last synthesis on this pipeline.
  stats() { return readStats(this.#live()); }

  // Speaks `text` (blocking); with a seed, the same call repeats bit for bit.
  synthesize(text, options = {}) {
    const handle = this.#live();
    cString(text, 'text');
    const { params, release } = synthesisParams(options);
    const out = [null];
    try {
      check(lib().cdz_pipeline_synthesize(handle, text, params, out));
    } finally {
      release();
    }
    const result = koffi.decode(out[0], Audio);
    let audio;
    try {
      audio = result.sample_count > 0 ? Float32Array.from(koffi.decode(result.samples, 'float', Number(result.sample_count)))
                                      : new Float32Array(0);
    } finally {
      lib().cdz_audio_free(out[0]);
    }
    return new Synthesis(audio, result.sample_rate, readStats(handle));
  }

  // An async iterable of Float32Array chunks as the engine decodes them, on a
  // worker thread. Leaving the loop early cancels the synthesis: the next
  // callback returns non-zero. After the loop, `.stats` and `.cancelled`.
  stream(text, options = {}) {
    const handle = this.#live();
    cString(text, 'text');
    const { params, release } = synthesisParams(options);
    const state = {
      chunks: [], wake: null, done: false, error: null, cancel: false, cancelled: false,
      freeWhenDone: false, stats: null, sampleRate: null,
    };
    const wake = () => { if (state.wake) { const resolve = state.wake; state.wake = null; resolve(); } };
    const callback = koffi.register((samples, count, rate) => {
      if (state.cancel) return 1;
      state.sampleRate = rate;
      const n = Number(count);
      state.chunks.push(n > 0 ? Float32Array.from(koffi.decode(samples, 'float', n)) : new Float32Array(0));
      wake();
      return 0;
    }, koffi.pointer(AudioCallback));
    this.#stream = state;
    lib().cdz_pipeline_synthesize_stream.async(handle, text, params, callback, null, (failure, status) => {
      koffi.unregister(callback);
      release();
      try {
        if (failure) throw failure;
        check(status);
      } catch (error) {
        if (error instanceof CadenzaError && error.code === StatusCode.CANCELLED && state.cancel) state.cancelled = true;
        else state.error = error;
      }
      try {
        state.stats = readStats(handle);
      } catch (error) {
        state.error = state.error || error;
      }
      this.#stream = null;
      if (state.freeWhenDone) lib().cdz_pipeline_free(handle);
      state.done = true;
      wake();
    });
    return new Stream(state);
  }
}

class Stream {
  #state;

  constructor(state) { this.#state = state; }

  get cancelled() { return this.#state.cancelled; }
  get sampleRate() { return this.#state.sampleRate; }
  // The run's statistics once it has ended.
  get stats() { return this.#state.done ? this.#state.stats : null; }

  [Symbol.asyncIterator]() { return this; }

  async next() {
    const state = this.#state;
    for (;;) {
      if (state.chunks.length > 0) return { value: state.chunks.shift(), done: false };
      if (state.done) {
        if (state.error) {
          const error = state.error;
          state.error = null;
          throw error;
        }
        return { value: undefined, done: true };
      }
      await new Promise((resolve) => { state.wake = resolve; });
    }
  }

  // Called when a loop is left early: cancels and waits for the engine to stop.
  async return() {
    const state = this.#state;
    state.cancel = true;
    state.chunks.length = 0;
    while (!state.done) await new Promise((resolve) => { state.wake = resolve; });
    state.error = null;
    return { value: undefined, done: true };
  }
}

module.exports = { Pipeline, Stream, Synthesis };
