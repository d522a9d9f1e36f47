"""The baseline protocol: fit on a training split, rank one item's candidates.

Every baseline (random, TF-IDF, nearest neighbour, rule-based, and the neural ones of later issues)
implements :class:`Baseline`. Items are :class:`dialeval.formats.dstc6.DialogItem`: a flat list of
utterances (user and bot alternate; ``<silence>`` fills a missing user turn; KB facts appear as
``"<name> r_<attr> <value>"`` lines) and the candidates for the next bot utterance. bAbI data is read
into the same shape (with the full candidate file as candidates), so a baseline never special-cases a format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dialeval.formats.dstc6 import DialogItem


@dataclass
class Baseline:
    """Base class. Subclasses set ``name`` and implement :meth:`rank` (and :meth:`fit` if they learn)."""

    name: str = "baseline"
    seed: int = 0

    def fit(self, train: Sequence[DialogItem], dev: Sequence[DialogItem] | None = None) -> Baseline:
        """Learn from training items (each with ``answer`` set); select hyperparameters on ``dev``."""
        return self

    def prepare_file(self, dataset_name: str) -> None:
        """Called before the items of one dataset file are ranked, with the file's name.

        The official names state the split's definition (``kb2``: the out-of-vocabulary KB;
        ``atmosphere_restrictions``: the extra required slot), which participants knew too.
        """

    def rank(self, item: DialogItem) -> list[str]:
        """Candidate ids of ``item``, best first (every candidate exactly once)."""
        raise NotImplementedError

    def rank_all(self, items: Sequence[DialogItem]) -> list[list[str]]:
        """Rank many items; override for a vectorised implementation."""
        return [self.rank(it) for it in items]

    def describe(self) -> dict:
        """Hyperparameters and choices that produced the rankings (stored with reference submissions)."""
        return {"name": self.name, "seed": self.seed}
