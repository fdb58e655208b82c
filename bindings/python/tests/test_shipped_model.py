"""The shipped English model through the installed pipelines: the bindings
write the same WAV bytes as the CLI for the same seed, whole and streamed."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import cadenza

from support import CLI, DEFAULT_PIPELINE, InstalledTestCase

TEXT = "hello there"
SEED = 7


def synth(command: list, output: Path, *extra: str) -> None:
    result = subprocess.run(command + ["synth", "-p", str(DEFAULT_PIPELINE), "-t", TEXT, "-o", str(output),
                                       "--seed", str(SEED), *extra], capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(f"{command} failed ({result.returncode}): {result.stderr}")


class ShippedModel(InstalledTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if not DEFAULT_PIPELINE.is_file():
            raise unittest.SkipTest(f"{DEFAULT_PIPELINE} is not installed")
        cls.scratch = tempfile.TemporaryDirectory()
        cls.directory = Path(cls.scratch.name)
        cls.cli_whole = cls.directory / "cli.wav"
        synth([CLI], cls.cli_whole)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def test_the_api_writes_the_clis_bytes(self):
        with cadenza.Pipeline(DEFAULT_PIPELINE) as pipeline:
            speech = pipeline.synthesize(TEXT, seed=SEED)
        self.assertGreater(speech.seconds, 0.3)
        self.assertEqual(speech.sample_rate, 16000)
        output = self.directory / "api.wav"
        speech.save(output)
        self.assertEqual(output.read_bytes(), self.cli_whole.read_bytes())

    def test_the_module_command_writes_the_clis_bytes_whole_and_streamed(self):
        module = self.directory / "module.wav"
        synth([sys.executable, "-m", "cadenza"], module)
        self.assertEqual(module.read_bytes(), self.cli_whole.read_bytes())
        cli_streamed, module_streamed = self.directory / "cli-stream.wav", self.directory / "module-stream.wav"
        synth([CLI], cli_streamed, "--stream")
        synth([sys.executable, "-m", "cadenza"], module_streamed, "--stream")
        self.assertEqual(module_streamed.read_bytes(), cli_streamed.read_bytes())


if __name__ == "__main__":
    unittest.main()
