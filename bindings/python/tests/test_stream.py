"""Streaming on the test doubles: the same audio in chunks, and cancelling by leaving the loop."""
import unittest

import numpy as np

import cadenza

from support import FRAMES, SAMPLES_PER_FRAME, InstalledTestCase, doubles_pipeline


class Streaming(InstalledTestCase):
    def setUp(self):
        self.pipeline = doubles_pipeline()
        self.addCleanup(self.pipeline.close)

    def test_chunks_are_the_whole_synthesis(self):
        whole = self.pipeline.synthesize("Streaming.", seed=8)
        stream = self.pipeline.stream("Streaming.", seed=8)
        chunks = list(stream)
        self.assertEqual(len(chunks), 6)  # 60 frames in chunks of 10
        self.assertTrue(all(chunk.dtype == np.float32 for chunk in chunks))
        self.assertEqual(np.concatenate(chunks).tobytes(), whole.audio.tobytes())
        self.assertFalse(stream.cancelled)
        self.assertEqual(stream.sample_rate, 16000)
        self.assertEqual(stream.stats["tokens_generated"], FRAMES + 1)

    def test_leaving_the_loop_cancels_the_synthesis(self):
        chunks = []
        with self.pipeline.stream("Cancel me.", seed=8) as stream:
            for chunk in stream:
                chunks.append(chunk)
                if len(chunks) == 2:
                    break
        self.assertTrue(stream.cancelled)
        self.assertEqual(len(chunks), 2)
        # The engine stopped within a chunk or two of the reader: not all 60 frames.
        self.assertLess(stream.stats["tokens_generated"], FRAMES)
        self.assertEqual(len(self.pipeline.synthesize("Still works.", seed=1).audio), FRAMES * SAMPLES_PER_FRAME)

    def test_an_abandoned_loop_cancels_too(self):
        for count, _ in enumerate(self.pipeline.stream("Abandoned.", seed=8)):
            if count == 1:
                break
        # The iterator is gone: the synthesis was cancelled and the pipeline is free.
        self.assertLess(self.pipeline.stats()["tokens_generated"], FRAMES)

    def test_another_synthesis_cancels_a_suspended_stream(self):
        stream = self.pipeline.stream("Suspended.", seed=8)
        first = next(stream)
        self.assertEqual(first.dtype, np.float32)
        with self.assertRaises(cadenza.CadenzaError) as raised:
            self.pipeline.stats()
        self.assertIn("a stream is running", raised.exception.message)
        speech = self.pipeline.synthesize("Another.", seed=1)
        self.assertEqual(len(speech.audio), FRAMES * SAMPLES_PER_FRAME)
        self.assertTrue(stream.cancelled)
        self.assertEqual(list(stream), [])

    def test_closing_the_pipeline_cancels_its_stream(self):
        stream = self.pipeline.stream("Closed under me.", seed=8)
        next(stream)
        self.pipeline.close()
        self.assertTrue(stream.cancelled)
        with self.assertRaises(cadenza.CadenzaError):
            self.pipeline.stream("Closed.", seed=8)


if __name__ == "__main__":
    unittest.main()
