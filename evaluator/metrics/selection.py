"""Per-context ranking metrics for response selection with several positives (Douban, E-commerce, Ubuntu v1).

Every function takes a context's candidates already ordered best first, as a 0/1 matrix ``ordered``
(contexts x candidates, 1 = a positive), except :func:`expected_context_metrics`, which takes the scores and
averages over every order of the tied candidates. A context without a positive scores 0 everywhere. These are
the definitions of the SMN/DAM/MSN scorers (``douban_evaluation.py``, ``Metrics.py``); dialeval's registry
calls them ``map``, ``mrr``, ``p@1`` and ``rN@k`` (the last three override the single-gold formulas of
:mod:`dialeval.metrics.ranking` when a benchmark stores them in ``RankTable.values``).
"""

from __future__ import annotations

import math

import numpy as np


def _positives(ordered: np.ndarray) -> np.ndarray:
    return ordered.sum(axis=1)


def _safe_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(np.shape(a), np.float64)
    np.divide(a, b, out=out, where=b > 0)
    return out


def average_precision(ordered: np.ndarray) -> np.ndarray:
    """AP = (1/R) * sum over positives at rank i of (positives in the top i) / i; R = positives (MAP: the mean;
    trec_eval ``map``, DAM/SMN ``MAP``)."""
    cum = ordered.cumsum(axis=1)
    ranks = np.arange(1, ordered.shape[1] + 1)
    return _safe_div((ordered * cum / ranks).sum(axis=1), _positives(ordered))


def reciprocal_rank(ordered: np.ndarray) -> np.ndarray:
    """RR = 1 / rank of the first positive, 0 without one (MRR: the mean; trec_eval ``recip_rank``)."""
    first = ordered.argmax(axis=1) + 1.0
    return np.where(_positives(ordered) > 0, 1.0 / first, 0.0)


def precision_at_1(ordered: np.ndarray) -> np.ndarray:
    """P@1 = 1 when the top-ranked candidate is a positive (DAM/SMN ``P@1``)."""
    return ordered[:, 0].astype(np.float64)


def recall_at_k(ordered: np.ndarray, k: int) -> np.ndarray:
    """R_N@k = (positives in the top k) / (positives among the N candidates) (DAM/SMN/MSN ``R10@k``; with one
    positive, Ubuntu's recall@k in 1-of-N)."""
    return _safe_div(ordered[:, :k].sum(axis=1), _positives(ordered))


def order_labels(scores: np.ndarray, labels: np.ndarray, policy: str) -> np.ndarray:
    """The labels in ranked order (highest score first) under a deterministic tie policy: ``pessimistic``
    (tied positives after tied negatives), ``optimistic`` (before), ``input-order`` (a stable sort: the file's
    order, as DAM's scorer does)."""
    tiebreak = {"pessimistic": labels, "optimistic": -labels.astype(np.int8)}.get(policy)
    if tiebreak is None:
        tiebreak = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    order = np.lexsort((tiebreak, -scores), axis=-1)
    return np.take_along_axis(labels, order, axis=1)


def context_metrics(scores: np.ndarray, labels: np.ndarray, policy: str, ks=(1, 2, 5)) -> dict[str, np.ndarray]:
    """``{"map", "mrr", "p@1", "rN@k"...}`` per context (N = candidates per context) under a tie policy."""
    if policy == "expected":
        return expected_context_metrics(scores, labels, ks)
    ordered = order_labels(scores, labels, policy)
    n = scores.shape[1]
    out = {"map": average_precision(ordered), "mrr": reciprocal_rank(ordered), "p@1": precision_at_1(ordered)}
    out.update({f"r{n}@{k}": recall_at_k(ordered, k) for k in ks})
    return out


def expected_context_metrics(scores: np.ndarray, labels: np.ndarray, ks=(1, 2, 5)) -> dict[str, np.ndarray]:
    """The metrics' expectations when each block of tied candidates is put in a uniformly random order.

    For candidate i: s = candidates scoring above it, b = its tied block's size, m = positives in the block,
    c = positives above the block; its position is s + j with j uniform on 1..b.

    * R@k and P@1: sum over positives of P(s + j <= k) = clip((k - s) / b, 0, 1), over R (P@1: not over R);
    * AP: (1/R) * sum over positives of (1/b) * sum_j (c + 1 + (j - 1)(m - 1)/(b - 1)) / (s + j), the other
      positives of the block falling before position j (j - 1)(m - 1)/(b - 1) times on average;
    * RR: the best positive's block holds the first positive at j with probability C(b - j, m - 1) / C(b, m),
      so RR = sum_j C(b - j, m - 1) / C(b, m) / (s + j).
    """
    S = np.asarray(scores, np.float64)
    pos = labels.astype(bool)
    n = S.shape[1]
    above = S[:, None, :] > S[:, :, None]  # [c, i, j]: candidate j scores above candidate i
    tied = S[:, None, :] == S[:, :, None]
    s = above.sum(axis=2)
    b = tied.sum(axis=2)
    m = (tied & pos[:, None, :]).sum(axis=2)
    c = (above & pos[:, None, :]).sum(axis=2)
    R = pos.sum(axis=1)
    out: dict[str, np.ndarray] = {}
    hit1 = np.clip((1 - s) / b, 0, 1) * pos
    out["p@1"] = hit1.sum(axis=1)
    j = np.arange(1, n + 1)[None, None, :]
    within = j <= b[:, :, None]
    gain = (c[:, :, None] + 1 + (j - 1) * _safe_div(m[:, :, None] - 1.0, b[:, :, None] - 1.0)) / (s[:, :, None] + j)
    ap_i = np.where(within, gain, 0.0).sum(axis=2) / b
    out["map"] = _safe_div((ap_i * pos).sum(axis=1), R)
    best = np.where(pos, S, -np.inf).argmax(axis=1)[:, None]
    sb, bb, mb = (np.take_along_axis(x, best, axis=1) for x in (s, b, m))  # (contexts, 1)
    comb = np.array([[math.comb(x, y) for y in range(n + 1)] for x in range(n + 1)], np.float64)
    p_first = comb[np.clip(bb - j[0], 0, n), np.clip(mb - 1, 0, n)] / comb[bb, mb] * (j[0] <= bb)
    out["mrr"] = np.where(R > 0, (p_first / (sb + j[0])).sum(axis=1), 0.0)
    for k in ks:
        out[f"r{n}@{k}"] = _safe_div((np.clip((k - s) / b, 0, 1) * pos).sum(axis=1), R)
    return {k: out[k] for k in ("map", "mrr", "p@1", *(f"r{n}@{k}" for k in ks))}


def gold_ranks(scores: np.ndarray, labels: np.ndarray, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """``(rank of the first positive, ties)`` per context, as :class:`~dialeval.core.ranks.RankTable` holds them
    (0 without a positive); under ``expected``, rank = 1 + candidates above the best positive and ties = the
    negatives tied with it."""
    pos = labels.astype(bool)
    has = pos.any(axis=1)
    if policy != "expected":
        return np.where(has, order_labels(scores, labels, policy).argmax(axis=1) + 1, 0), np.zeros(len(labels), np.int32)
    best = np.where(pos, scores, -np.inf).max(axis=1)[:, None]
    above = (scores > best).sum(axis=1)
    tied = ((scores == best) & ~pos).sum(axis=1)
    return np.where(has, above + 1, 0), np.where(has, tied, 0)
