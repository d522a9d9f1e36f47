"""Metrics: pure functions over arrays (see :mod:`evaluator.metrics.ranking`)."""

from evaluator.metrics.ranking import (
    NOT_RANKED,
    hit_rate_at_k,
    hits_at_k,
    mrr,
    per_dialog_accuracy,
    rank_distribution,
    recall_at_k_in_n,
    reciprocal_ranks,
)

__all__ = [
    "NOT_RANKED",
    "hit_rate_at_k",
    "hits_at_k",
    "mrr",
    "per_dialog_accuracy",
    "rank_distribution",
    "recall_at_k_in_n",
    "reciprocal_ranks",
]
