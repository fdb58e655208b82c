"""cadenza: fast autoregressive speech synthesis, from Python.

    import cadenza
    with cadenza.Pipeline("pipelines/default.toml") as pipeline:
        speech = pipeline.synthesize("Hello there.", seed=42)
        speech.save("hello.wav")

A thin layer over libcadenza's C API (cadenza/cadenza.h) through ctypes.
"""
from .catalog import PluginInfo, Version, plugin_problems, plugins, version
from .errors import CadenzaError, StatusCode
from .pipeline import Pipeline
from .stream import Stream
from .synthesis import Synthesis

__all__ = ["CadenzaError", "Pipeline", "PluginInfo", "StatusCode", "Stream", "Synthesis", "Version",
           "plugin_problems", "plugins", "version"]
