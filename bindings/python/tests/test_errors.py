"""Misuse raises CadenzaError with the status code and the library's message,
never crashes, and leaks nothing."""
import ctypes
import gc
import tempfile
import unittest
from pathlib import Path

import numpy as np

import cadenza
from cadenza import CadenzaError, StatusCode

from support import DOUBLES, InstalledTestCase, doubles_pipeline, doubles_toml


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def allocated_bytes() -> int:
    """The bytes malloc has handed out and not taken back, all arenas: resident
    memory swings by megabytes as malloc keeps or returns freed pages, this does not."""
    gc.collect()
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


class Errors(InstalledTestCase):
    def assertFails(self, code: StatusCode, *fragments: str):
        test = self

        class Check:
            def __enter__(self):
                return self

            def __exit__(self, kind, error, trace):
                test.assertIsNotNone(error, "no CadenzaError was raised")
                test.assertIsInstance(error, CadenzaError)
                test.assertEqual(error.code, code, error.message)
                for fragment in fragments:
                    test.assertIn(fragment, error.message)
                self.error = error
                return True

        return Check()

    def test_a_bad_pipeline_file_gives_every_position(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "bad.toml"
            path.write_text('[pipeline]\nnmae = "x"\n[sampling]\ntemperature = -1\n')
            with self.assertFails(StatusCode.INVALID_CONFIG, f"{path}:2:1: unknown key 'nmae'",
                                  f"{path}:4:15: 'temperature'"):
                cadenza.Pipeline(path)
        with self.assertFails(StatusCode.INVALID_CONFIG, "bad.toml:2:1: unknown key 'nmae'"):
            cadenza.Pipeline.from_string('[pipeline]\nnmae = "x"\n', base_dir=scratch, name="bad.toml")

    def test_a_missing_file_is_not_found_a_missing_plugin_a_configuration_error(self):
        with self.assertFails(StatusCode.NOT_FOUND, "/no/such/pipeline.toml"):
            cadenza.Pipeline("/no/such/pipeline.toml")
        with self.assertFails(StatusCode.INVALID_CONFIG, "no plugin named 'test.markov_backbone'"):
            cadenza.Pipeline.from_string(doubles_toml())  # without the doubles' directory

    def test_a_closed_pipeline_refuses_every_call(self):
        pipeline = doubles_pipeline()
        pipeline.close()
        pipeline.close()  # idempotent
        for call in (lambda: pipeline.synthesize("x"), lambda: pipeline.stream("x"), pipeline.describe,
                     pipeline.stats):
            with self.assertFails(StatusCode.INVALID_ARGUMENT, "the pipeline is closed"):
                call()

    def test_wrong_types_are_invalid_arguments(self):
        with doubles_pipeline() as pipeline:
            cases = [
                (lambda: pipeline.synthesize(42), "text must be a str, not int"),
                (lambda: pipeline.synthesize("a\0b"), "NUL"),
                (lambda: pipeline.synthesize("x", seed="7"), "seed must be an int"),
                (lambda: pipeline.synthesize("x", seed=-1), "seed must be an int"),
                (lambda: pipeline.synthesize("x", max_seconds=-1.0), "max_seconds must be a number >= 0"),
                (lambda: pipeline.synthesize("x", voice=3), "voice must be a path"),
                (lambda: pipeline.synthesize("x", voice=(np.zeros((2, 2)), 16000)), "one-dimensional"),
                (lambda: pipeline.synthesize("x", voice=(np.zeros(10), 0)), "sample rate"),
                (lambda: pipeline.stream(None), "text must be a str, not NoneType"),
                (lambda: cadenza.Pipeline(3.5), "path must be a str"),
                (lambda: cadenza.Pipeline.from_string(doubles_toml(), plugin_paths=DOUBLES), "a list of paths"),
                (lambda: cadenza.plugins([None]), "a plugin path must be a str"),
            ]
            for call, fragment in cases:
                with self.subTest(fragment=fragment), self.assertFails(StatusCode.INVALID_ARGUMENT, fragment):
                    call()
            self.assertEqual(len(pipeline.synthesize("after all that", seed=1).audio), 60 * 320)

    def test_a_voice_file_that_is_not_audio(self):
        with tempfile.TemporaryDirectory() as scratch, doubles_pipeline() as pipeline:
            text = Path(scratch) / "voice.wav"
            text.write_text("this is not audio\n" * 20)
            with self.assertFails(StatusCode.INVALID_ARGUMENT, f"{text}: cannot read audio"):
                pipeline.synthesize("x", voice=text)
            with self.assertFails(StatusCode.NOT_FOUND, "/no/such/voice.wav"):
                pipeline.synthesize("x", voice="/no/such/voice.wav")
            with self.assertFails(StatusCode.INVALID_ARGUMENT, "cannot read audio"):
                list(pipeline.stream("x", voice=text))

    def test_a_synthesis_without_a_backbone_says_what_is_missing(self):
        toml = doubles_toml().split("[codec]")[0]
        with cadenza.Pipeline.from_string(toml) as pipeline:
            with self.assertFails(StatusCode.INVALID_CONFIG, "missing [backbone], [codec]"):
                pipeline.synthesize("x")
            with self.assertFails(StatusCode.INVALID_CONFIG, "missing [backbone], [codec]"):
                list(pipeline.stream("x"))

    def test_misuse_in_a_loop_leaks_nothing(self):
        def round_of_misuse():
            try:
                cadenza.Pipeline.from_string('[pipeline]\nnmae = "x"\n')
            except CadenzaError:
                pass
            with doubles_pipeline() as pipeline:
                try:
                    pipeline.synthesize("x", voice=3)
                except CadenzaError:
                    pass
                pipeline.synthesize("leak check", seed=1)
                for _ in pipeline.stream("leak check", seed=1):
                    break
            try:
                pipeline.synthesize("closed")
            except CadenzaError:
                pass

        for _ in range(20):  # warm up: loaded plugins, caches
            round_of_misuse()
        before = allocated_bytes()
        for _ in range(200):
            round_of_misuse()
        grown = allocated_bytes() - before
        # A leaked audio buffer (19,200 floats, 77 kB) per round would be 15 MB.
        self.assertLess(grown, 2 * 1024 * 1024, f"malloc's bytes in use grew by {grown} over 200 rounds")


if __name__ == "__main__":
    unittest.main()
