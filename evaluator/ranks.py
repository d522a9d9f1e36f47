"""RankTable: the one columnar table every metric, statistic and report is computed from.

One row per scored item (an answer-key entry): which benchmark, split and group (task) it belongs to, its
item id and conversation, how many candidates it had, and where the submission put its gold. Readers (one
per benchmark, :mod:`dialeval.benchmarks`) produce it; metrics, statistics and reports only read it.

Rank columns
    ``gold_rank``: 1-based rank of the best-ranked gold candidate; ``0`` (``NOT_RANKED``) where the
    submission did not rank any gold (a partial top-k ranking without it, or a missing item).
    ``ties``: number of *other* candidates whose score equals the gold's. Rank-based submissions have
    none (0). For score-based submissions the reader applies the tie policy: ``pessimistic`` and
    ``optimistic`` fold the ties into ``gold_rank`` (ties = 0); ``expected`` keeps ``gold_rank`` = s + 1
    (s = candidates strictly above the gold) and ``ties`` = t, and the metrics average over the t + 1
    equally likely positions.

``nested`` holds the same two columns computed among the first N candidates only (Ubuntu's 1-in-N),
keyed by N. ``values`` holds per-item numbers a benchmark computes itself (AirDialogue's state scores,
embedding similarities), keyed by metric name; their corpus value is the mean.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

NOT_RANKED = 0

COLUMNS = ("benchmark", "split", "group", "item_id", "conversation_id", "turn", "n_candidates", "gold_rank", "ties")


def _filled(n: int, value: object) -> np.ndarray:
    """An object column holding ``value`` n times (``fill`` is ~50x faster than ``np.full`` for objects)."""
    a = np.empty(n, dtype=object)
    a.fill(value)
    return a


@dataclass
class RankTable:
    benchmark: np.ndarray  # object (str)
    split: np.ndarray  # object (str)
    group: np.ndarray  # object (str): the task / file the item belongs to ("1" ... "5" for DSTC6 tasks)
    item_id: np.ndarray  # object (str)
    conversation_id: np.ndarray  # object (str); the item id itself when the benchmark has no conversations
    turn: np.ndarray  # int16: 1-based position of the item in its conversation, 0 = unknown
    n_candidates: np.ndarray  # int32
    gold_rank: np.ndarray  # int32, 0 = unranked
    ties: np.ndarray  # int32, other candidates tied with the gold (expected tie policy only)
    nested: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.gold_rank.shape[0])

    @classmethod
    def build(
        cls,
        *,
        benchmark: str,
        split: str,
        group: str,
        item_ids,
        gold_rank,
        n_candidates,
        conversation_ids=None,
        turns=None,
        ties=None,
        nested: dict[int, tuple] | None = None,
        values: dict[str, object] | None = None,
    ) -> RankTable:
        """A table of one (benchmark, split, group): scalars are broadcast, sequences become columns."""
        n = len(item_ids)
        ids = np.asarray(item_ids, dtype=object) if n else np.empty(0, dtype=object)
        return cls(
            benchmark=_filled(n, benchmark),
            split=_filled(n, split),
            group=_filled(n, str(group)),
            item_id=ids,
            conversation_id=ids.copy() if conversation_ids is None else np.asarray(conversation_ids, dtype=object),
            turn=np.zeros(n, np.int16) if turns is None else np.asarray(turns, dtype=np.int16),
            n_candidates=np.broadcast_to(np.asarray(n_candidates, dtype=np.int32), (n,)).copy(),
            gold_rank=np.asarray(gold_rank, dtype=np.int32).reshape(n),
            ties=np.zeros(n, np.int32) if ties is None else np.asarray(ties, dtype=np.int32).reshape(n),
            nested={int(k): (np.asarray(r, np.int32), np.asarray(t, np.int32)) for k, (r, t) in (nested or {}).items()},
            values={k: np.asarray(v, dtype=np.float64) for k, v in (values or {}).items()},
        )

    @classmethod
    def empty(cls) -> RankTable:
        e = np.empty(0, dtype=object)
        i32 = np.empty(0, np.int32)
        return cls(e, e.copy(), e.copy(), e.copy(), e.copy(), np.empty(0, np.int16), i32, i32.copy(), i32.copy())

    @classmethod
    def concat(cls, parts: list[RankTable]) -> RankTable:
        parts = [p for p in parts if len(p)] or parts[:1]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        cols = {c: np.concatenate([getattr(p, c) for p in parts]) for c in COLUMNS}
        nested_keys = set.intersection(*(set(p.nested) for p in parts))
        nested = {
            k: (np.concatenate([p.nested[k][0] for p in parts]), np.concatenate([p.nested[k][1] for p in parts]))
            for k in sorted(nested_keys)
        }
        value_keys = set.intersection(*(set(p.values) for p in parts))
        values = {k: np.concatenate([p.values[k] for p in parts]) for k in sorted(value_keys)}
        return cls(**cols, nested=nested, values=values)

    def take(self, mask_or_index) -> RankTable:
        """Rows selected by a boolean mask or an index array (nested and value columns follow)."""
        cols = {c: getattr(self, c)[mask_or_index] for c in COLUMNS}
        nested = {k: (r[mask_or_index], t[mask_or_index]) for k, (r, t) in self.nested.items()}
        values = {k: v[mask_or_index] for k, v in self.values.items()}
        return RankTable(**cols, nested=nested, values=values)

    def has_conversations(self) -> bool:
        """True when some conversation groups several items (per-dialog accuracy is then informative)."""
        return bool(len(self)) and len(set(self.conversation_id.tolist())) < len(self)

    def groups(self) -> list[str]:
        """Distinct groups in first-seen order."""
        return list(dict.fromkeys(self.group.tolist()))

    def splits(self) -> list[str]:
        return list(dict.fromkeys(self.split.tolist()))

    def to_dataframe(self):
        """One row per item (pandas). Holds gold ranks, and so reveals the answer key: organizers only."""
        import pandas as pd

        data = {c: getattr(self, c) for c in COLUMNS}
        for k, (r, t) in self.nested.items():
            data[f"gold_rank_in_{k}"] = r
            data[f"ties_in_{k}"] = t
        for k, v in self.values.items():
            data[k] = v
        return pd.DataFrame(data)
