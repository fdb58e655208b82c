"""Audio files through libsndfile, as the cadenza CLI reads and writes them:
voice prompts are mixed to mono float32, and WAV output is 16-bit PCM with
clipping, so a file saved here equals the CLI's byte for byte."""
from __future__ import annotations

import ctypes
import os
from ctypes import POINTER, Structure, byref, c_char_p, c_float, c_int, c_int64, c_void_p

import numpy as np

from .errors import CadenzaError, StatusCode

_SFM_READ = 0x10
_SFM_WRITE = 0x20
_SF_FORMAT_WAV = 0x010000
_SF_FORMAT_PCM_16 = 0x0002
_SFC_SET_CLIPPING = 0x10C0
_SF_TRUE = 1


class _Info(Structure):
    _fields_ = [("frames", c_int64), ("samplerate", c_int), ("channels", c_int), ("format", c_int),
                ("sections", c_int), ("seekable", c_int)]


_sndfile: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _sndfile
    if _sndfile is None:
        try:
            library = ctypes.CDLL("libsndfile.so.1")
        except OSError as error:
            raise CadenzaError(StatusCode.NOT_FOUND, f"cannot load libsndfile: {error}") from None
        library.sf_open.restype = c_void_p
        library.sf_open.argtypes = [c_char_p, c_int, POINTER(_Info)]
        library.sf_strerror.restype = c_char_p
        library.sf_strerror.argtypes = [c_void_p]
        library.sf_readf_float.restype = c_int64
        library.sf_readf_float.argtypes = [c_void_p, POINTER(c_float), c_int64]
        library.sf_writef_float.restype = c_int64
        library.sf_writef_float.argtypes = [c_void_p, POINTER(c_float), c_int64]
        library.sf_command.restype = c_int
        library.sf_command.argtypes = [c_void_p, c_int, c_void_p, c_int]
        library.sf_close.restype = c_int
        library.sf_close.argtypes = [c_void_p]
        _sndfile = library
    return _sndfile


def _path(path: object) -> str:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise CadenzaError(StatusCode.INVALID_ARGUMENT, f"an audio file path must be a str or a path, "
                                                       f"not {type(path).__name__}")
    return os.fsdecode(path)


def read_mono(path: object) -> tuple[np.ndarray, int]:
    """(float32 mono samples, sample rate) of any file libsndfile reads."""
    name = _path(path)
    library = _lib()
    info = _Info()
    handle = library.sf_open(os.fsencode(name), _SFM_READ, byref(info))
    if not handle:
        reason = library.sf_strerror(None).decode("utf-8", "replace")
        code = StatusCode.NOT_FOUND if not os.path.exists(name) else StatusCode.INVALID_ARGUMENT
        raise CadenzaError(code, f"{name}: cannot read audio: {reason}")
    try:
        if info.channels < 1 or info.samplerate <= 0:
            raise CadenzaError(StatusCode.INVALID_ARGUMENT, f"{name}: audio file has no channels or no sample rate")
        interleaved = np.zeros(info.frames * info.channels, dtype=np.float32)
        read = library.sf_readf_float(handle, interleaved.ctypes.data_as(POINTER(c_float)), info.frames)
        if read != info.frames:
            raise CadenzaError(StatusCode.IO_ERROR, f"{name}: audio file is truncated ({read} of {info.frames} frames)")
    finally:
        library.sf_close(handle)
    frames = interleaved.reshape(info.frames, info.channels)
    # The CLI's order of operations: a float sum over channels, then a division.
    mono = frames[:, 0].copy()
    for channel in range(1, info.channels):
        mono += frames[:, channel]
    mono /= np.float32(info.channels)
    return mono, info.samplerate


def write_wav(path: object, samples: np.ndarray, sample_rate: int) -> None:
    """A 16-bit PCM WAV file, clipped, written beside and renamed into place."""
    name = _path(path)
    data = np.ascontiguousarray(samples, dtype=np.float32)
    if data.ndim != 1:
        raise CadenzaError(StatusCode.INVALID_ARGUMENT, "audio to save must be one-dimensional (mono)")
    if sample_rate <= 0:
        raise CadenzaError(StatusCode.INVALID_ARGUMENT, f"{name}: cannot write audio without a sample rate")
    library = _lib()
    temporary = name + ".partial"
    info = _Info(samplerate=int(sample_rate), channels=1, format=_SF_FORMAT_WAV | _SF_FORMAT_PCM_16)
    handle = library.sf_open(os.fsencode(temporary), _SFM_WRITE, byref(info))
    if not handle:
        reason = library.sf_strerror(None).decode("utf-8", "replace")
        raise CadenzaError(StatusCode.IO_ERROR, f"{name}: cannot write audio: {reason}")
    try:
        library.sf_command(handle, _SFC_SET_CLIPPING, None, _SF_TRUE)
        written = library.sf_writef_float(handle, data.ctypes.data_as(POINTER(c_float)), len(data))
    finally:
        closed = library.sf_close(handle)
    if written != len(data) or closed != 0:
        os.unlink(temporary)
        raise CadenzaError(StatusCode.IO_ERROR, f"{name}: cannot write audio (wrote {written} of {len(data)} frames)")
    os.replace(temporary, name)
