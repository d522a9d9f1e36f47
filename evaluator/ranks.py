"""GoldRanks: the one internal representation every metric is computed from.

One row per prediction (an answer-key item): which split, task and conversation it belongs to, how many
candidates it had, and the rank the submission gave its gold (0 = not ranked). Readers and validators
produce it; metrics, statistics and reports only read it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class GoldRanks:
    dialog_id: np.ndarray  # object (str)
    split: np.ndarray  # object (str)
    task: np.ndarray  # int16
    conversation_id: np.ndarray  # object (str)
    n_candidates: np.ndarray  # int32
    gold_rank: np.ndarray  # int32, 0 = unranked

    def __len__(self) -> int:
        return int(self.gold_rank.shape[0])

    @classmethod
    def build(cls, split: str, task: int, dialog_ids, conversation_ids, n_candidates, gold_ranks) -> GoldRanks:
        n = len(dialog_ids)
        return cls(
            dialog_id=np.asarray(dialog_ids, dtype=object),
            split=np.full(n, split, dtype=object),
            task=np.full(n, task, dtype=np.int16),
            conversation_id=np.asarray(conversation_ids, dtype=object),
            n_candidates=np.asarray(n_candidates, dtype=np.int32),
            gold_rank=np.asarray(gold_ranks, dtype=np.int32),
        )

    @classmethod
    def concat(cls, parts: list[GoldRanks]) -> GoldRanks:
        if not parts:
            e = np.empty(0, dtype=object)
            return cls(e, e.copy(), np.empty(0, np.int16), e.copy(), np.empty(0, np.int32), np.empty(0, np.int32))
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls.__dataclass_fields__))

    def select(self, mask: np.ndarray) -> GoldRanks:
        return GoldRanks(*(getattr(self, f)[mask] for f in self.__dataclass_fields__))

    def has_conversations(self) -> bool:
        """True when some conversation groups several predictions (per-dialog accuracy is then informative)."""
        return bool(len(self)) and len(set(self.conversation_id.tolist())) < len(self)

    def to_dataframe(self):
        import pandas as pd

        return pd.DataFrame({f: getattr(self, f) for f in self.__dataclass_fields__})
