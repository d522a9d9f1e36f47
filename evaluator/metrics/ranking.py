"""Ranking metrics as small pure functions over the rank-of-gold array.

Every function takes ``gold_rank``: a 1-D integer array with the 1-based rank of the gold candidate per
prediction, and ``0`` (:data:`NOT_RANKED`) where the submission did not rank the gold (a partial top-k
ranking without it, or a missing item). An unranked gold is a miss at every k and contributes 0 to MRR.
"""

from __future__ import annotations

import numpy as np

from dialeval.core.ranks import NOT_RANKED  # noqa: F401 (re-exported: the one definition is the rank table's)


def _as_ties(ties, r: np.ndarray) -> np.ndarray | None:
    """``None`` when no item has ties (then the integer formulas apply exactly)."""
    if ties is None:
        return None
    t = np.asarray(ties)
    if t.shape != r.shape:
        raise ValueError("ties must have the shape of gold_rank")
    return t if t.any() else None


def _as_ranks(gold_rank) -> np.ndarray:
    r = np.asarray(gold_rank)
    if r.ndim != 1:
        raise ValueError("gold_rank must be one-dimensional")
    return r


def hits_at_k(gold_rank, k: int, ties=None) -> np.ndarray:
    """Per-prediction hit indicator: ``1[1 <= gold_rank <= k]`` (float array of 0/1); ParlAI's ``hits@k`` of one
    example, ranx's ``hits@k`` > 0 with one relevant item, DSTC6's "Precision@k" and DSTC7's "Recall@k" per item.

    With ``ties`` (the expected tie policy: ``gold_rank`` = s + 1 with s candidates strictly above the
    gold, t = ``ties`` candidates tied with it), the probability that the gold lands in the top k when
    the tied block is ordered at random: ``clip((k - s) / (t + 1), 0, 1)``.
    """
    r = _as_ranks(gold_rank)
    t = _as_ties(ties, r)
    hit = ((r >= 1) & (r <= k)).astype(np.float64)
    if t is None:
        return hit
    # only rows with ties need the fraction: with t = 0 it is exactly the 0/1 hit (k - s is an integer)
    tied = np.flatnonzero(t)
    rt = r[tied]
    above = rt.astype(np.float64) - 1.0
    p = np.clip((k - above) / (t[tied].astype(np.float64) + 1.0), 0.0, 1.0)
    hit[tied] = np.where(rt >= 1, p, 0.0)
    return hit


def hit_rate_at_k(gold_rank, k: int, ties=None) -> float:
    """Mean hit@k = |{i : 1 <= rank_i <= k}| / N.

    The DSTC6 "Precision@k" (P@1, P@2, P@5), ParlAI's hits@k and bAbI's per-response accuracy (k = 1)
    are all this number; it is a hit rate, not IR precision. N counts every answer-key item.
    """
    r = _as_ranks(gold_rank)
    if r.size == 0:
        return float("nan")
    return float(hits_at_k(r, k, ties).mean())


def reciprocal_ranks(gold_rank, ties=None) -> np.ndarray:
    """Per-prediction reciprocal rank ``1 / gold_rank`` (0 where the gold is unranked): trec_eval's and ranx's
    ``recip_rank`` of one query.

    With ``ties`` (expected policy), the mean of 1/r over the t + 1 equally likely ranks
    r = s + 1 ... s + t + 1, i.e. ``(H(s + t + 1) - H(s)) / (t + 1)`` with H the harmonic numbers.
    """
    r = _as_ranks(gold_rank).astype(np.float64)
    t = _as_ties(ties, _as_ranks(gold_rank))
    out = np.zeros_like(r)
    if t is None:
        np.divide(1.0, r, out=out, where=r >= 1)
        return out
    from scipy.special import digamma  # H(n) = digamma(n + 1) + Euler's gamma; the constants cancel

    tf = t.astype(np.float64)
    ok = r >= 1
    s = np.where(ok, r - 1.0, 0.0)
    out[ok] = ((digamma(s + tf + 2.0) - digamma(s + 1.0)) / (tf + 1.0))[ok]
    return out


def mrr(gold_rank, ties=None) -> float:
    """Mean reciprocal rank: MRR = (1/N) * sum_i 1/rank_i, with 1/rank_i = 0 for an unranked gold.

    The same number as ranx's and trec_eval's ``recip_rank`` averaged over queries with one relevant item.
    """
    r = _as_ranks(gold_rank)
    if r.size == 0:
        return float("nan")
    return float(reciprocal_ranks(r, ties).mean())


def per_dialog_accuracy(gold_rank, conversation_id, ties=None) -> float:
    """Share of conversations whose every turn is a hit@1 (Bordes & Weston's per-dialog accuracy).

    accuracy = |{c : for all i in c, rank_i = 1}| / |conversations|. ``conversation_id`` gives, per
    prediction, the conversation it belongs to (any hashable labels; order does not matter). With ties
    (expected policy) a conversation counts with the probability that all its turns are hits.
    """
    r = _as_ranks(gold_rank)
    if r.size == 0:
        return float("nan")
    return float(per_conversation_all_hit(r, conversation_id, ties)[1].mean())


def per_conversation_all_hit(gold_rank, conversation_id, ties=None) -> tuple[np.ndarray, np.ndarray]:
    """``(conversation labels, P(every turn is a hit@1))`` per conversation, labels sorted: the per-conversation
    values of Bordes & Weston's per-dialog accuracy, 1[for all turns i of c: rank_i = 1] (under ``ties``, the
    product over the turns of P(hit@1))."""
    r = _as_ranks(gold_rank)
    labels, inverse = np.unique(np.asarray(conversation_id), return_inverse=True)
    inverse = inverse.ravel()
    t = _as_ties(ties, r)
    if t is None:
        misses = np.bincount(inverse, weights=(r != 1).astype(np.float64), minlength=len(labels))
        return labels, (misses == 0).astype(np.float64)
    p = hits_at_k(r, 1, t)
    order = np.argsort(inverse, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0])
    return labels, np.multiply.reduceat(p[order], starts)


def recall_at_k_in_n(gold_rank_among_n, k: int, ties=None) -> float:
    """Ubuntu's R_N@k: mean over contexts of 1[rank of the ground truth among the first N candidates <= k].

    The caller computes ranks among the first N candidates (ground truth + the first N-1 distractors).
    """
    return hit_rate_at_k(gold_rank_among_n, k, ties)


def average_precision(positions, n_correct: int) -> float:
    """Average precision of one ranked list (textbook; trec_eval's ``map`` per query):
    AP = (1/n_correct) * sum_j j / p_j, with p_1 < p_2 < ... the 1-based positions of the correct ids that were
    ranked (one found at position p_j is the j-th correct id from the top). A correct id not ranked adds 0."""
    found = sorted(positions)
    return sum((j + 1) / p for j, p in enumerate(found)) / n_correct if n_correct else 0.0


def dstc7_official_ap(positions, n_correct: int) -> float:
    """DSTC7's ``evaluations/metrics.py`` "average precision" of one example (not textbook AP):
    (1/n_correct) * sum_i (i + 1) / (q_i + 1), over the correct ids in the ground truth's order, i = 0, 1, ...
    their index there and q_i the 0-based position of that id in the submission; ``positions`` lists q_i, None
    for an id not submitted (adds 0). The ids are not sorted by rank, so a value can exceed 1."""
    return sum((i + 1) / (q + 1) for i, q in enumerate(positions) if q is not None) / n_correct if n_correct else 0.0


def rank_distribution(gold_rank, max_rank: int | None = None) -> dict[str, int]:
    """Counts of each gold rank: ``{"1": n1, "2": n2, ..., "unranked": n0}`` (keys are strings for JSON)."""
    r = _as_ranks(gold_rank).astype(np.int64)
    top = int(r.max()) if r.size and max_rank is None else (max_rank or 0)
    counts = np.bincount(np.clip(r, 0, None), minlength=top + 1)
    out = {str(i): int(counts[i]) for i in range(1, len(counts)) if counts[i]}
    out["unranked"] = int(counts[0]) if counts.size else 0
    return out
