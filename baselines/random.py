"""The random baseline: a seeded uniform shuffle of each item's candidates.

Expected hit@k with n candidates is min(k, n) / n (bAbI: 1 / 4,212 ≈ 0.02 % per response; DSTC6 with 7-10
candidates: P@1 ≈ 0.14). Each item's permutation is drawn from ``numpy.random.default_rng([seed, crc32(dialog_id)])``,
so the ranking of an item depends only on the seed and its id — not on file order, batching or other items.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dialeval.baselines.base import Baseline
from dialeval.baselines.data import ScoringMixin
from dialeval.formats.dstc6 import Candidate, DialogItem


@dataclass
class RandomBaseline(ScoringMixin, Baseline):
    """Uniformly random ranking; needs no training."""

    name: str = "random"
    seed: int = 0
    needs_training = False

    def score_group(self, candidates: list[Candidate], items: Sequence[DialogItem]) -> np.ndarray:
        """Scores = a uniform random permutation of 0..n-1 per item (distinct, so no ties)."""
        n = len(candidates)
        out = np.empty((len(items), n), dtype=np.float64)
        for row, it in enumerate(items):
            rng = np.random.default_rng([self.seed, zlib.crc32(it.dialog_id.encode("utf-8"))])
            out[row] = rng.permutation(n)
        return out

    def describe(self) -> dict:
        return {"name": self.name, "seed": self.seed, "method": "uniform permutation per item"}
