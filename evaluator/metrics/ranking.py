"""Ranking metrics as small pure functions over the rank-of-gold array.

Every function takes ``gold_rank``: a 1-D integer array with the 1-based rank of the gold candidate per
prediction, and ``0`` (:data:`NOT_RANKED`) where the submission did not rank the gold (a partial top-k
ranking without it, or a missing item). An unranked gold is a miss at every k and contributes 0 to MRR.
"""

from __future__ import annotations

import numpy as np

NOT_RANKED = 0
"""Value of ``gold_rank`` for a gold candidate that the submission did not rank."""


def _as_ranks(gold_rank) -> np.ndarray:
    r = np.asarray(gold_rank)
    if r.ndim != 1:
        raise ValueError("gold_rank must be one-dimensional")
    return r


def hits_at_k(gold_rank, k: int) -> np.ndarray:
    """Per-prediction hit indicator: ``1[1 <= gold_rank <= k]`` (float array of 0/1)."""
    r = _as_ranks(gold_rank)
    return ((r >= 1) & (r <= k)).astype(np.float64)


def hit_rate_at_k(gold_rank, k: int) -> float:
    """Mean hit@k = |{i : 1 <= rank_i <= k}| / N.

    The DSTC6 "Precision@k" (P@1, P@2, P@5), ParlAI's hits@k and bAbI's per-response accuracy (k = 1)
    are all this number; it is a hit rate, not IR precision. N counts every answer-key item.
    """
    r = _as_ranks(gold_rank)
    if r.size == 0:
        return float("nan")
    return float(hits_at_k(r, k).mean())


def reciprocal_ranks(gold_rank) -> np.ndarray:
    """Per-prediction reciprocal rank ``1 / gold_rank`` (0 where the gold is unranked)."""
    r = _as_ranks(gold_rank).astype(np.float64)
    out = np.zeros_like(r)
    np.divide(1.0, r, out=out, where=r >= 1)
    return out


def mrr(gold_rank) -> float:
    """Mean reciprocal rank: MRR = (1/N) * sum_i 1/rank_i, with 1/rank_i = 0 for an unranked gold."""
    r = _as_ranks(gold_rank)
    if r.size == 0:
        return float("nan")
    return float(reciprocal_ranks(r).mean())


def per_dialog_accuracy(gold_rank, conversation_id) -> float:
    """Share of conversations whose every turn is a hit@1 (Bordes & Weston's per-dialog accuracy).

    accuracy = |{c : for all i in c, rank_i = 1}| / |conversations|. ``conversation_id`` gives, per
    prediction, the conversation it belongs to (any hashable labels; order does not matter).
    """
    r = _as_ranks(gold_rank)
    conv = np.asarray(conversation_id)
    if r.size == 0:
        return float("nan")
    _, inverse = np.unique(conv, return_inverse=True)
    misses = np.bincount(inverse.ravel(), weights=(r != 1).astype(np.float64))
    return float((misses == 0).mean())


def recall_at_k_in_n(gold_rank_among_n, k: int) -> float:
    """Ubuntu's R_N@k: mean over contexts of 1[rank of the ground truth among the first N candidates <= k].

    The caller computes ranks among the first N candidates (ground truth + the first N-1 distractors).
    """
    return hit_rate_at_k(gold_rank_among_n, k)


def rank_distribution(gold_rank, max_rank: int | None = None) -> dict[str, int]:
    """Counts of each gold rank: ``{"1": n1, "2": n2, ..., "unranked": n0}`` (keys are strings for JSON)."""
    r = _as_ranks(gold_rank).astype(np.int64)
    top = int(r.max()) if r.size and max_rank is None else (max_rank or 0)
    counts = np.bincount(np.clip(r, 0, None), minlength=top + 1)
    out = {str(i): int(counts[i]) for i in range(1, len(counts)) if counts[i]}
    out["unranked"] = int(counts[0]) if counts.size else 0
    return out
