"""Synthesis on the test doubles: seeds, statistics, WAV files, voices, describe."""
import tempfile
import unittest
from pathlib import Path

import numpy as np

import cadenza

from support import FRAMES, SAMPLES_PER_FRAME, VOICE, InstalledTestCase, doubles_pipeline


class Synthesis(InstalledTestCase):
    def setUp(self):
        self.pipeline = doubles_pipeline()
        self.addCleanup(self.pipeline.close)

    def test_a_seed_repeats_bit_for_bit(self):
        first = self.pipeline.synthesize("Hello, world.", seed=3)
        again = self.pipeline.synthesize("Hello, world.", seed=3)
        other = self.pipeline.synthesize("Hello, world.", seed=4)
        self.assertEqual(first.audio.dtype, np.float32)
        self.assertEqual(first.audio.shape, (FRAMES * SAMPLES_PER_FRAME,))
        self.assertEqual(first.sample_rate, 16000)
        self.assertEqual(first.audio.tobytes(), again.audio.tobytes())
        self.assertNotEqual(first.audio.tobytes(), other.audio.tobytes())

    def test_stats_hold_every_figure_with_its_unit(self):
        speech = self.pipeline.synthesize("Statistics.", seed=1)
        stats = speech.stats
        self.assertEqual(set(stats), {
            "tokens_generated", "steps", "target_passes", "draft_passes", "mean_accepted_tokens_per_step",
            "tokens_per_second", "seconds_per_token", "audio_seconds", "wall_seconds", "draft_seconds",
            "verify_seconds", "accept_seconds", "other_seconds", "loop_seconds", "loop_overhead_seconds",
            "codec_seconds", "acceptance_rate_by_depth"})
        self.assertEqual(stats["tokens_generated"], FRAMES + 1)  # the audio tokens and the end
        self.assertEqual(stats["target_passes"], FRAMES + 2)     # the prefill and one per token
        self.assertEqual(stats["mean_accepted_tokens_per_step"], 1.0)
        self.assertAlmostEqual(stats["audio_seconds"], FRAMES * SAMPLES_PER_FRAME / 16000)
        self.assertGreater(stats["tokens_per_second"], 0)
        self.assertEqual(self.pipeline.stats(), stats)

    def test_speculative_stats_have_acceptance_by_depth(self):
        with doubles_pipeline('[draft]\nplugin = "test.markov_drafter"\nend_after = 60\ndepth = 4\n'
                              '[acceptor]\nplugin = "acceptor.exact"\n') as pipeline:
            stats = pipeline.synthesize("Speculate.", seed=1).stats
        self.assertEqual(len(stats["acceptance_rate_by_depth"]), 4)
        self.assertGreater(stats["draft_passes"], 0)

    def test_max_seconds_stops_early(self):
        speech = self.pipeline.synthesize("Short.", seed=1, max_seconds=0.5)
        self.assertLessEqual(len(speech.audio), 8000 + 10 * SAMPLES_PER_FRAME)
        self.assertLess(len(speech.audio), FRAMES * SAMPLES_PER_FRAME)

    def test_save_writes_a_16_bit_wav_that_reads_back(self):
        speech = self.pipeline.synthesize("Save me.", seed=5)
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "speech.wav"
            speech.save(path)
            from cadenza.audio_file import read_mono
            samples, rate = read_mono(path)
            self.assertFalse((Path(scratch) / "speech.wav.partial").exists())
        self.assertEqual(rate, 16000)
        self.assertEqual(len(samples), len(speech.audio))
        self.assertLessEqual(float(np.max(np.abs(samples - np.clip(speech.audio, -1, 1)))), 1.0 / 32767)

    def test_a_voice_from_a_file_or_from_samples_is_the_same_voice(self):
        from cadenza.audio_file import read_mono
        samples, rate = read_mono(VOICE)
        from_file = self.pipeline.synthesize("Voice.", seed=2, voice=VOICE)
        from_samples = self.pipeline.synthesize("Voice.", seed=2, voice=(samples, rate))
        self.assertEqual(from_file.audio.tobytes(), from_samples.audio.tobytes())

    def test_describe_gives_the_resolved_pipeline(self):
        text = self.pipeline.describe()
        self.assertIn('plugin = "test.markov_backbone"', text)
        self.assertIn("end_after = 60\n", text)
        self.assertIn("audio_tokens = 32  # default", text)

    def test_a_pipeline_file_with_relative_paths_loads_from_its_directory(self):
        from support import DOUBLES, doubles_toml
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "doubles.toml"
            path.write_text(doubles_toml())
            with cadenza.Pipeline(path, plugin_paths=[DOUBLES]) as pipeline:
                self.assertEqual(pipeline.synthesize("File.", seed=3).audio.tobytes(),
                                 self.pipeline.synthesize("File.", seed=3).audio.tobytes())
            self.assertTrue(pipeline.closed)


if __name__ == "__main__":
    unittest.main()
