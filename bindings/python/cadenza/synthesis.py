"""The result of one synthesis and the statistics of a run."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import audio_file
from ._library import Stats


def stats_dict(stats: Stats) -> dict[str, Any]:
    """Every figure of cdz_stats, with its unit in its name."""
    count = max(0, min(stats.position_count, len(stats.acceptance_rate)))
    return {
        "tokens_generated": stats.tokens_generated,
        "steps": stats.steps,
        "target_passes": stats.target_passes,
        "draft_passes": stats.draft_passes,
        "mean_accepted_tokens_per_step": stats.mean_accepted_length,
        "tokens_per_second": stats.tokens_per_second,
        "seconds_per_token": stats.seconds_per_token,
        "audio_seconds": stats.audio_seconds,
        "wall_seconds": stats.wall_seconds,
        "draft_seconds": stats.draft_seconds,
        "verify_seconds": stats.verify_seconds,
        "accept_seconds": stats.accept_seconds,
        "other_seconds": stats.other_seconds,
        "loop_seconds": stats.loop_seconds,
        "loop_overhead_seconds": stats.loop_overhead_seconds,
        "codec_seconds": stats.codec_seconds,
        "acceptance_rate_by_depth": [stats.acceptance_rate[i] for i in range(count)],
    }


@dataclass(frozen=True)
class Synthesis:
    """Mono float32 audio in [-1, 1], its sample rate and the run's statistics."""

    audio: np.ndarray
    sample_rate: int
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate if self.sample_rate else 0.0

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes a 16-bit WAV file, the same bytes `cadenza synth` writes."""
        audio_file.write_wav(path, self.audio, self.sample_rate)
