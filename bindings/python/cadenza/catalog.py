"""What libcadenza is and which plugins it finds."""
from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_void_p
from dataclasses import dataclass
from typing import Iterable

from ._library import CatalogEntry, Version as _Version, check, lib, library_path
from .pipeline import pipeline_params


@dataclass(frozen=True)
class Version:
    library: str                 # "0.1.0"
    abi: tuple[int, int]         # of the embedding API, cadenza.h
    plugin_abi: tuple[int, int]  # of the plugin ABI the library hosts
    path: str                    # the libcadenza file in use

    def __str__(self) -> str:
        return self.library


@dataclass(frozen=True)
class PluginInfo:
    name: str
    kind: str
    version: str
    summary: str
    library: str
    origin: str
    shadowed: bool


def version() -> Version:
    raw = _Version(struct_size=ctypes.sizeof(_Version))
    lib().cdz_version_get(byref(raw))
    return Version(raw.library_version.decode(), (raw.abi_major, raw.abi_minor),
                   (raw.plugin_abi_major, raw.plugin_abi_minor), library_path())


def _scan(plugin_paths: Iterable[str | os.PathLike[str]] | None) -> tuple[list[PluginInfo], list[str]]:
    params, keep = pipeline_params(plugin_paths)
    handle = c_void_p()
    check(lib().cdz_catalog_scan(byref(params), byref(handle)))
    del keep
    try:
        plugins = []
        for index in range(lib().cdz_catalog_count(handle)):
            entry = CatalogEntry(struct_size=ctypes.sizeof(CatalogEntry))
            check(lib().cdz_catalog_get(handle, index, byref(entry)))
            plugins.append(PluginInfo(entry.name.decode(), entry.kind.decode(), entry.version.decode(),
                                      entry.summary.decode(), os.fsdecode(entry.library), entry.origin.decode(),
                                      bool(entry.shadowed)))
        problems = [lib().cdz_catalog_problem(handle, i).decode("utf-8", "replace")
                    for i in range(lib().cdz_catalog_problem_count(handle))]
        return plugins, problems
    finally:
        lib().cdz_catalog_free(handle)


def plugins(plugin_paths: Iterable[str | os.PathLike[str]] | None = None) -> list[PluginInfo]:
    """Every plugin found: plugin_paths first, then $CADENZA_PLUGIN_PATH, then
    cadenza's own; a shadowed entry has an earlier one of the same name."""
    return _scan(plugin_paths)[0]


def plugin_problems(plugin_paths: Iterable[str | os.PathLike[str]] | None = None) -> list[str]:
    """Libraries that failed to load, missing explicit paths, ambiguous names."""
    return _scan(plugin_paths)[1]
