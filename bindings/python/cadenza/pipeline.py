"""A loaded pipeline: synthesis, streaming, description, statistics."""
from __future__ import annotations

import ctypes
import os
import threading
from ctypes import POINTER, byref, c_char_p, c_float, c_void_p
from typing import Any, Iterable

import numpy as np

from . import audio_file
from .closing import Closing
from ._library import Audio, PipelineParams, Stats, SynthesisParams, check, lib, utf8
from .errors import CadenzaError, StatusCode, invalid_argument
from .synthesis import Synthesis, stats_dict

Voice = Any  # a path to an audio file, or (samples, sample_rate)


def pipeline_params(plugin_paths: Iterable[str | os.PathLike[str]] | None) -> tuple[PipelineParams, Any]:
    """cdz_pipeline_params and the objects it points into (keep both alive)."""
    params = lib().cdz_pipeline_default_params()
    if plugin_paths is None:
        return params, None
    if isinstance(plugin_paths, (str, bytes, os.PathLike)):
        raise invalid_argument("plugin_paths must be a list of paths, not one path")
    encoded = [utf8(path, "a plugin path") for path in plugin_paths]
    array = (c_char_p * max(1, len(encoded)))(*encoded)
    params.plugin_paths = ctypes.cast(array, POINTER(c_char_p))
    params.plugin_path_count = len(encoded)
    return params, (array, encoded)


def _voice_samples(voice: Voice) -> tuple[np.ndarray, int]:
    if isinstance(voice, (str, bytes, os.PathLike)):
        return audio_file.read_mono(voice)
    if isinstance(voice, tuple) and len(voice) == 2:
        samples, rate = voice
        if not isinstance(rate, (int, np.integer)) or isinstance(rate, bool) or rate <= 0:
            raise invalid_argument("a voice's sample rate must be a positive int")
        array = np.asarray(samples)
        if array.ndim != 1 or array.size == 0 or not np.issubdtype(array.dtype, np.number):
            raise invalid_argument("a voice's samples must be a non-empty one-dimensional array of numbers")
        return np.ascontiguousarray(array, dtype=np.float32), int(rate)
    raise invalid_argument(f"voice must be a path to an audio file or (samples, sample_rate), "
                           f"not {type(voice).__name__}")


def synthesis_params(voice: Voice | None, seed: int | None, max_seconds: float | None) -> tuple[SynthesisParams, Any]:
    """cdz_synthesis_params and the voice samples it points to (keep both alive)."""
    params = lib().cdz_synthesis_default_params()
    if seed is not None:
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= seed < 2**64:
            raise invalid_argument(f"seed must be an int in [0, 2**64), not {seed!r}")
        params.use_seed = 1
        params.seed = int(seed)
    if max_seconds is not None:
        if not isinstance(max_seconds, (int, float, np.number)) or isinstance(max_seconds, bool) \
                or not max_seconds >= 0:
            raise invalid_argument(f"max_seconds must be a number >= 0, not {max_seconds!r}")
        params.max_audio_seconds = float(max_seconds)
    samples = None
    if voice is not None:
        samples, rate = _voice_samples(voice)
        params.voice_prompt_samples = samples.ctypes.data_as(POINTER(c_float))
        params.voice_prompt_sample_count = len(samples)
        params.voice_prompt_sample_rate = rate
    return params, samples


class Pipeline(Closing):
    """A pipeline file loaded, validated and instantiated by libcadenza.

    One synthesis runs at a time; close() (or leaving a `with` block) frees it.
    """

    def __init__(self, path: str | os.PathLike[str], plugin_paths: Iterable[str | os.PathLike[str]] | None = None):
        self._handle: int | None = None
        self._lock = threading.RLock()
        self._stream = None  # the Stream running on this pipeline, if any
        params, keep = pipeline_params(plugin_paths)
        handle = c_void_p()
        check(lib().cdz_pipeline_load_file(utf8(path, "path"), byref(params), byref(handle)))
        del keep
        self._handle = handle.value

    @classmethod
    def from_string(cls, toml: str, base_dir: str | os.PathLike[str] | None = None,
                    plugin_paths: Iterable[str | os.PathLike[str]] | None = None,
                    name: str = "<string>") -> "Pipeline":
        """A pipeline from TOML text; relative paths in it are relative to
        base_dir (default: the working directory); messages call it `name`."""
        self = cls.__new__(cls)
        self._handle = None
        self._lock = threading.RLock()
        self._stream = None
        source = None
        if base_dir is not None:
            source = os.path.join(os.path.abspath(os.fsdecode(base_dir)), name)
        elif name != "<string>":
            source = os.path.abspath(name)
        params, keep = pipeline_params(plugin_paths)
        handle = c_void_p()
        check(lib().cdz_pipeline_load_string(utf8(toml, "toml"), None if source is None else utf8(source, "name"),
                                             byref(params), byref(handle)))
        del keep
        self._handle = handle.value
        return self

    # -- lifetime ------------------------------------------------------------

    def close(self) -> None:
        """Cancels a running stream and frees the pipeline; idempotent."""
        self._end_stream()
        with self._lock:
            if self._handle is not None:
                lib().cdz_pipeline_free(self._handle)
                self._handle = None

    @property
    def closed(self) -> bool:
        return self._handle is None

    def _live_handle(self) -> int:
        if self._handle is None:
            raise CadenzaError(StatusCode.INVALID_ARGUMENT, "the pipeline is closed")
        return self._handle

    def _end_stream(self) -> None:
        producer = self._stream
        if producer is not None:
            producer.stop()

    def _require_no_stream(self) -> None:
        producer = self._stream
        if producer is not None and producer.running:
            raise CadenzaError(StatusCode.INVALID_ARGUMENT,
                               "a stream is running on this pipeline: read it to the end or close it first")

    # -- the API -------------------------------------------------------------

    def describe(self) -> str:
        """The pipeline as resolved, defaults filled in, as TOML text."""
        self._require_no_stream()
        with self._lock:
            text = c_void_p()
            check(lib().cdz_pipeline_describe(self._live_handle(), byref(text)))
            try:
                return ctypes.string_at(text.value).decode("utf-8")
            finally:
                lib().cdz_string_free(text.value)

    def stats(self) -> dict[str, Any]:
        """The statistics of the last synthesis on this pipeline."""
        self._require_no_stream()
        with self._lock:
            stats = Stats(struct_size=ctypes.sizeof(Stats))
            check(lib().cdz_pipeline_get_stats(self._live_handle(), byref(stats)))
            return stats_dict(stats)

    def synthesize(self, text: str, *, voice: Voice | None = None, seed: int | None = None,
                   max_seconds: float | None = None) -> Synthesis:
        """Speaks `text`; with a seed, the same call repeats bit for bit."""
        encoded = utf8(text, "text")
        params, keep = synthesis_params(voice, seed, max_seconds)
        self._end_stream()
        with self._lock:
            audio = POINTER(Audio)()
            check(lib().cdz_pipeline_synthesize(self._live_handle(), encoded, byref(params), byref(audio)))
            try:
                result = audio.contents
                count = result.sample_count
                samples = np.ctypeslib.as_array(result.samples, shape=(count,)).copy() if count \
                    else np.zeros(0, dtype=np.float32)
                rate = result.sample_rate
            finally:
                lib().cdz_audio_free(audio)
            del keep
            stats = Stats(struct_size=ctypes.sizeof(Stats))
            check(lib().cdz_pipeline_get_stats(self._handle, byref(stats)))
            return Synthesis(samples, rate, stats_dict(stats))

    def stream(self, text: str, *, voice: Voice | None = None, seed: int | None = None,
               max_seconds: float | None = None) -> "Stream":
        """Audio chunks (float32 arrays) as the engine decodes them.

        Leaving the loop early cancels the synthesis; so do close() and
        starting another synthesis on this pipeline."""
        from .stream import Producer, Stream  # a module of its own: the threading

        encoded = utf8(text, "text")
        params, keep = synthesis_params(voice, seed, max_seconds)
        self._end_stream()
        self._live_handle()
        producer = Producer(self, encoded, params, keep)
        self._stream = producer
        return Stream(producer)
