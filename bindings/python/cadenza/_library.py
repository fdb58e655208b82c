"""Finds and loads libcadenza and declares the functions of cadenza/cadenza.h.

Search order: $CADENZA_LIBRARY (a file), the install tree this package sits
in (the relative path _installed.py records at `cmake --install`), then the
system loader ("libcadenza.so.0").
"""
from __future__ import annotations

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p)
from pathlib import Path

from .errors import CadenzaError, StatusCode

SONAME = "libcadenza.so.0"
STATS_MAX_POSITIONS = 64


class Version(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_major", c_uint32), ("abi_minor", c_uint32),
                ("plugin_abi_major", c_uint32), ("plugin_abi_minor", c_uint32), ("library_version", c_char_p)]


class PipelineParams(Structure):
    _fields_ = [("struct_size", c_uint32), ("plugin_paths", POINTER(c_char_p)), ("plugin_path_count", c_size_t)]


class SynthesisParams(Structure):
    _fields_ = [("struct_size", c_uint32), ("use_seed", c_int), ("seed", c_uint64), ("max_audio_seconds", c_double),
                ("voice_prompt_samples", POINTER(c_float)), ("voice_prompt_sample_count", c_size_t),
                ("voice_prompt_sample_rate", c_uint32)]


class Audio(Structure):
    _fields_ = [("struct_size", c_uint32), ("samples", POINTER(c_float)), ("sample_count", c_size_t),
                ("sample_rate", c_uint32)]


class Stats(Structure):
    _fields_ = [("struct_size", c_uint32), ("tokens_generated", c_int64), ("steps", c_int64),
                ("target_passes", c_int64), ("draft_passes", c_int64), ("mean_accepted_length", c_double),
                ("tokens_per_second", c_double), ("seconds_per_token", c_double), ("audio_seconds", c_double),
                ("wall_seconds", c_double), ("draft_seconds", c_double), ("verify_seconds", c_double),
                ("accept_seconds", c_double), ("other_seconds", c_double), ("position_count", c_int32),
                ("acceptance_rate", c_double * STATS_MAX_POSITIONS),
                ("loop_seconds", c_double), ("loop_overhead_seconds", c_double), ("codec_seconds", c_double)]


class CatalogEntry(Structure):
    _fields_ = [("struct_size", c_uint32), ("name", c_char_p), ("kind", c_char_p), ("version", c_char_p),
                ("summary", c_char_p), ("library", c_char_p), ("origin", c_char_p), ("shadowed", c_int)]


AudioCallback = CFUNCTYPE(c_int, POINTER(c_float), c_size_t, c_uint32, c_void_p)

# name: (restype, argtypes). Functions returning cdz_status* return c_void_p:
# None on success, the status's address otherwise.
_PROTOTYPES = {
    "cdz_version_get": (None, [POINTER(Version)]),
    "cdz_library_version": (c_char_p, []),
    "cdz_status_get_code": (c_int, [c_void_p]),
    "cdz_status_get_message": (c_char_p, [c_void_p]),
    "cdz_status_free": (None, [c_void_p]),
    "cdz_pipeline_default_params": (PipelineParams, []),
    "cdz_pipeline_load_file": (c_void_p, [c_char_p, POINTER(PipelineParams), POINTER(c_void_p)]),
    "cdz_pipeline_load_string": (c_void_p, [c_char_p, c_char_p, POINTER(PipelineParams), POINTER(c_void_p)]),
    "cdz_pipeline_free": (None, [c_void_p]),
    "cdz_pipeline_describe": (c_void_p, [c_void_p, POINTER(c_void_p)]),
    "cdz_string_free": (None, [c_void_p]),
    "cdz_synthesis_default_params": (SynthesisParams, []),
    "cdz_pipeline_synthesize": (c_void_p, [c_void_p, c_char_p, POINTER(SynthesisParams), POINTER(POINTER(Audio))]),
    "cdz_audio_free": (None, [POINTER(Audio)]),
    "cdz_pipeline_synthesize_stream": (c_void_p, [c_void_p, c_char_p, POINTER(SynthesisParams), AudioCallback,
                                                  c_void_p]),
    "cdz_pipeline_get_stats": (c_void_p, [c_void_p, POINTER(Stats)]),
    "cdz_catalog_scan": (c_void_p, [POINTER(PipelineParams), POINTER(c_void_p)]),
    "cdz_catalog_count": (c_size_t, [c_void_p]),
    "cdz_catalog_get": (c_void_p, [c_void_p, c_size_t, POINTER(CatalogEntry)]),
    "cdz_catalog_problem_count": (c_size_t, [c_void_p]),
    "cdz_catalog_problem": (c_char_p, [c_void_p, c_size_t]),
    "cdz_catalog_free": (None, [c_void_p]),
}


def _candidates() -> list[str]:
    explicit = os.environ.get("CADENZA_LIBRARY")
    if explicit:  # asked for: no silent fallback to another copy
        return [os.path.abspath(explicit) if os.sep in explicit else explicit]
    found = []
    try:
        from . import _installed  # written by `cmake --install`
        found.append(str((Path(__file__).resolve().parent / _installed.LIBRARY).resolve()))
    except ImportError:
        pass
    found.append(SONAME)
    return found


def _load() -> ctypes.CDLL:
    failures = []
    for candidate in _candidates():
        try:
            library = ctypes.CDLL(candidate)
            break
        except OSError as error:
            failures.append(f"{candidate}: {error}")
    else:
        raise CadenzaError(StatusCode.NOT_FOUND, "cannot load libcadenza (" + "; ".join(failures) +
                           "); set CADENZA_LIBRARY to the path of libcadenza.so")
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            function = getattr(library, name)
        except AttributeError:
            raise CadenzaError(StatusCode.ABI_MISMATCH,
                               f"{library._name} has no {name}: it is older than these bindings") from None
        function.restype = restype
        function.argtypes = argtypes
    return library


_library: ctypes.CDLL | None = None


def lib() -> ctypes.CDLL:
    """libcadenza, loaded on first use."""
    global _library
    if _library is None:
        _library = _load()
    return _library


def library_path() -> str:
    """The file libcadenza was loaded from."""
    return lib()._name


def check(status: int | None) -> None:
    """Raises CadenzaError for a non-NULL status, which it frees."""
    if not status:
        return
    library = lib()
    code = library.cdz_status_get_code(status)
    message = library.cdz_status_get_message(status).decode("utf-8", "replace")
    library.cdz_status_free(status)
    raise CadenzaError(code, message)


def utf8(text: object, what: str) -> bytes:
    """text as NUL-free UTF-8 for a const char* argument."""
    if isinstance(text, os.PathLike):
        text = os.fspath(text)
    if isinstance(text, bytes):
        encoded = text
    elif isinstance(text, str):
        encoded = text.encode("utf-8")
    else:
        raise CadenzaError(StatusCode.INVALID_ARGUMENT, f"{what} must be a str, not {type(text).__name__}")
    if b"\0" in encoded:
        raise CadenzaError(StatusCode.INVALID_ARGUMENT, f"{what} contains a NUL character")
    return encoded
