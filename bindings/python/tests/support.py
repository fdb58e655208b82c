"""What the suite runs against, from the environment the CTest entry sets:

CADENZA_TEST_PREFIX   a fresh `cmake --install` prefix (the package under test is imported from it)
CADENZA_TEST_PLUGINS  the test doubles' plugin directory (test.markov_backbone, test.tone_codec)
CADENZA_TEST_CLI      the cadenza program to compare with (default: the prefix's bin/cadenza)
"""
from __future__ import annotations

import os
import unittest
from pathlib import Path

PREFIX = Path(os.environ.get("CADENZA_TEST_PREFIX", "/nonexistent"))
DOUBLES = os.environ.get("CADENZA_TEST_PLUGINS", "/nonexistent")
CLI = os.environ.get("CADENZA_TEST_CLI", str(PREFIX / "bin" / "cadenza"))
SHARE = PREFIX / "share" / "cadenza"
VOCABULARY = SHARE / "models" / "frontend" / "english_chars.vocab"
DEFAULT_PIPELINE = SHARE / "pipelines" / "default.toml"
VOICE = SHARE / "models" / "en-small" / "voices" / "rms.wav"

FRAMES = 60            # the doubles stop after end_after frames...
SAMPLES_PER_FRAME = 320  # ...of 320 samples at 16 kHz


def doubles_toml(extra: str = "", sampling: str = "temperature = 0.8") -> str:
    return (f'[pipeline]\nname = "doubles"\nseed = 11\nmax_audio_seconds = 2.0\n'
            f'[frontend]\nplugin = "frontend.chars"\nvocabulary = "{VOCABULARY}"\n'
            f'[codec]\nplugin = "test.tone_codec"\n'
            f'[backbone]\nplugin = "test.markov_backbone"\nend_after = {FRAMES}\n'
            f'[sampling]\n{sampling}\n{extra}')


def doubles_pipeline(extra: str = ""):
    import cadenza
    return cadenza.Pipeline.from_string(doubles_toml(extra), plugin_paths=[DOUBLES])


class InstalledTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        if not PREFIX.is_dir():
            raise unittest.SkipTest("CADENZA_TEST_PREFIX is not an install prefix")
