'use strict';
// Audio files through libsndfile, as the cadenza CLI reads and writes them:
// voice prompts mixed to mono float32, WAV output as 16-bit PCM with clipping
// (the same bytes `cadenza synth` writes).

const fs = require('node:fs');
const koffi = require('koffi');
const { CadenzaError, StatusCode, invalidArgument } = require('./errors');
const { ensureStacks } = require('./stacks');

const SFM_READ = 0x10;
const SFM_WRITE = 0x20;
const SF_FORMAT_WAV = 0x010000;
const SF_FORMAT_PCM_16 = 0x0002;
const SFC_SET_CLIPPING = 0x10c0;

const Info = koffi.struct('cadenza_sf_info', {
  frames: 'int64_t', samplerate: 'int', channels: 'int', format: 'int', sections: 'int', seekable: 'int',
});

let sndfile = null;

function lib() {
  if (sndfile) return sndfile;
  ensureStacks();
  let library;
  try {
    library = koffi.load('libsndfile.so.1');
  } catch (error) {
    throw new CadenzaError(StatusCode.NOT_FOUND, `cannot load libsndfile: ${error.message}`);
  }
  sndfile = {
    open: library.func('void *sf_open(const char *path, int mode, _Inout_ cadenza_sf_info *info)'),
    strerror: library.func('const char *sf_strerror(void *file)'),
    readFloat: library.func('int64_t sf_readf_float(void *file, _Out_ float *data, int64_t frames)'),
    writeFloat: library.func('int64_t sf_writef_float(void *file, const float *data, int64_t frames)'),
    command: library.func('int sf_command(void *file, int command, void *data, int size)'),
    close: library.func('int sf_close(void *file)'),
  };
  return sndfile;
}

function checkPath(path) {
  if (typeof path !== 'string' || path.includes('\0')) throw invalidArgument('an audio file path must be a string');
}

// { samples: Float32Array (mono), sampleRate } of any file libsndfile reads.
function readMono(path) {
  checkPath(path);
  const sf = lib();
  const info = { frames: 0, samplerate: 0, channels: 0, format: 0, sections: 0, seekable: 0 };
  const file = sf.open(path, SFM_READ, info);
  if (!file) {
    const code = fs.existsSync(path) ? StatusCode.INVALID_ARGUMENT : StatusCode.NOT_FOUND;
    throw new CadenzaError(code, `${path}: cannot read audio: ${sf.strerror(null)}`);
  }
  try {
    if (info.channels < 1 || info.samplerate <= 0) {
      throw invalidArgument(`${path}: audio file has no channels or no sample rate`);
    }
    const frames = Number(info.frames);
    const interleaved = new Float32Array(frames * info.channels);
    const read = Number(sf.readFloat(file, interleaved, frames));
    if (read !== frames) throw new CadenzaError(StatusCode.IO_ERROR, `${path}: audio file is truncated (${read} of ${frames} frames)`);
    // The CLI's arithmetic: a float32 sum over channels, then a division.
    const mono = new Float32Array(frames);
    for (let frame = 0; frame < frames; ++frame) {
      let sum = 0;
      for (let channel = 0; channel < info.channels; ++channel) {
        sum = Math.fround(sum + interleaved[frame * info.channels + channel]);
      }
      mono[frame] = Math.fround(sum / info.channels);
    }
    return { samples: mono, sampleRate: info.samplerate };
  } finally {
    sf.close(file);
  }
}

// A 16-bit PCM WAV file, clipped, written beside and renamed into place.
function writeWav(path, samples, sampleRate) {
  checkPath(path);
  if (!(samples instanceof Float32Array)) throw invalidArgument('audio to save must be a Float32Array');
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw invalidArgument(`${path}: cannot write audio without a sample rate`);
  const sf = lib();
  const temporary = `${path}.partial`;
  const info = { frames: 0, samplerate: sampleRate, channels: 1, format: SF_FORMAT_WAV | SF_FORMAT_PCM_16, sections: 0, seekable: 0 };
  const file = sf.open(temporary, SFM_WRITE, info);
  if (!file) throw new CadenzaError(StatusCode.IO_ERROR, `${path}: cannot write audio: ${sf.strerror(null)}`);
  let written;
  let closed;
  try {
    sf.command(file, SFC_SET_CLIPPING, null, 1);
    written = Number(sf.writeFloat(file, samples, samples.length));
  } finally {
    closed = sf.close(file);
  }
  if (written !== samples.length || closed !== 0) {
    fs.rmSync(temporary, { force: true });
    throw new CadenzaError(StatusCode.IO_ERROR, `${path}: cannot write audio (wrote ${written} of ${samples.length} frames)`);
  }
  fs.renameSync(temporary, path);
}

module.exports = { readMono, writeWav };
