"""The metric registry: every number dialeval reports is a named :class:`Metric` over a RankTable.

A metric is a small pure function of the table's columns (see :mod:`dialeval.metrics.ranking` for the
formulas). Names follow the benchmarks' own conventions, and each entry says what other tools call it:

=========================  =========================================================================
name                       meaning
=========================  =========================================================================
``hits@k``                 gold among the top k (ParlAI ``hits@k``, ranx ``hits@k`` > 0, bAbI per-response at k=1)
``p@k``                    DSTC6's name for hits@k ("Precision@k" in the official scorer; not IR precision)
``r@k``                    DSTC7/DSTC8's name for hits@k ("Recall@k" in evaluations/metrics.py; success@k: any
                           correct id among the top k)
``noesis-score``           DSTC7 Track 1 / DSTC8 Track 2's ranking score: (R@10 + MRR) / 2
``mrr``                    mean reciprocal rank (ranx ``mrr``, trec_eval ``recip_rank``)
``rN@k``                   Ubuntu's recall@k in 1-of-N (gold among the top k of the first N candidates)
``per-response-accuracy``  hits@1 over every bot turn (Bordes & Weston)
``per-dialog-accuracy``    share of conversations with every turn a hit@1 (Bordes & Weston)
``f1``                     token F1 of a generated reply after ParlAI's answer normalisation (ParlAI ``f1``;
                           :mod:`dialeval.metrics.answer`); computed per item by the benchmark (ConvAI2)
``map``                    mean average precision over the positives (trec_eval ``map``; DAM/SMN ``MAP``), per item
                           from the benchmark (Douban: :mod:`~dialeval.metrics.selection`; DSTC7 rankings that list
                           a subset: :func:`dialeval.metrics.ranking.average_precision`)
=========================  =========================================================================

Where an item has several golds (Douban, DSTC7), the benchmark computes ``map``, ``mrr``, ``p@k`` and ``rN@k`` per
item itself (:mod:`dialeval.metrics.selection`: R10@k there is the share of the positives in the top k) and
stores them in ``RankTable.values`` under those names; a stored column takes precedence over the single-gold
formula.

Benchmarks that compute per-item numbers themselves (AirDialogue's state scores) register *value*
metrics: the corpus value is the mean of the table's ``values[name]`` column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialeval.core.errors import UsageError

if TYPE_CHECKING:
    import numpy as np

    from dialeval.core.ranks import RankTable


@dataclass(frozen=True)
class Metric:
    """A named metric. ``per_unit(table)`` gives one value per unit; the metric is their mean.

    ``level`` says what a unit is: ``"item"`` (one per table row, in row order) or ``"conversation"`` (one
    per distinct conversation id, sorted). Statistics (bootstrap, paired tests) resample conversations
    either way, so turns of one conversation stay together.
    """

    name: str
    per_unit: Callable[[RankTable], np.ndarray] = field(compare=False)
    description: str = ""
    level: str = "item"
    needs: str = "ranks"  # "ranks", "values" (benchmark-computed per-item numbers) or "texts"
    higher_is_better: bool = True

    def compute(self, table: RankTable) -> float:
        return self.compute_left_out(table)[0]

    def compute_left_out(self, table: RankTable) -> tuple[float, int]:
        """``(value, units left out)``. A NaN unit value means the metric left that unit out (an embedding
        metric under ``empty:skip``: no word with a vector on one side): the value is the mean of the other
        units (NaN when none is left)."""
        v = self.per_unit(table)
        if not len(v):
            return float("nan"), 0
        if v.dtype.kind == "f":
            import numpy as np

            left = np.isnan(v)
            if left.any():
                kept = v[~left]
                return (float(kept.mean()) if len(kept) else float("nan")), int(left.sum())
        return float(v.mean()), 0


_FIXED: dict[str, Metric] = {}
TEXT_METRICS = ("embedding-average", "greedy-matching", "vector-extrema")
_ALIASES = {"per-dialog": "per-dialog-accuracy", "accuracy": "per-response-accuracy"}


def register(metric: Metric) -> Metric:
    """Add (or replace) a metric by name; returns it (usable as a one-line registration)."""
    _FIXED[metric.name] = metric
    return metric


def _hits(k: int, name: str) -> Metric:
    from dialeval.metrics.ranking import hits_at_k

    return Metric(
        name,
        lambda t: _stored(t, name, lambda: hits_at_k(t.gold_rank, k, t.ties)),
        f"gold among the top {k}: mean of 1[rank <= {k}] over the answer-key items (ParlAI hits@{k}; DSTC6 "
        f"Precision@{k}; DSTC7 Recall@{k})",
    )


def _stored(t: RankTable, name: str, formula):
    """The benchmark's own per-item column ``name`` when it stored one (several golds per item), else the formula."""
    v = t.values.get(name)
    return formula() if v is None else v


def _recall_in_n(n: int, k: int, name: str) -> Metric:
    from dialeval.metrics.ranking import hits_at_k

    def per_unit(t: RankTable):
        if name in t.values:
            return t.values[name]
        if n not in t.nested:
            raise UsageError(f"metric {name} needs ranks among the first {n} candidates, which this benchmark lacks")
        r, ties = t.nested[n]
        return hits_at_k(r, k, ties)

    return Metric(name, per_unit, f"recall@{k} in 1-of-{n}: mean of 1[rank among the first {n} candidates <= {k}] "
                  f"(Ubuntu's R{n}@{k}; DAM/SMN R{n}@{k} with one positive)")


def _mrr() -> Metric:
    from dialeval.metrics.ranking import reciprocal_ranks

    return Metric("mrr", lambda t: _stored(t, "mrr", lambda: reciprocal_ranks(t.gold_rank, t.ties)),
                  "mean reciprocal rank: mean of 1/rank, 0 for an unranked gold (ranx mrr, trec_eval recip_rank)")


def _noesis_score() -> Metric:
    from dialeval.metrics.ranking import hits_at_k, reciprocal_ranks

    return Metric("noesis-score", lambda t: (hits_at_k(t.gold_rank, 10, t.ties) + reciprocal_ranks(t.gold_rank, t.ties)) / 2,
                  "DSTC7/DSTC8 ranking score: (R@10 + MRR) / 2, per item (1[rank <= 10] + 1/rank) / 2")


def _per_dialog() -> Metric:
    from dialeval.metrics.ranking import per_conversation_all_hit

    return Metric(
        "per-dialog-accuracy",
        lambda t: per_conversation_all_hit(t.gold_rank, t.conversation_id, t.ties)[1],
        "share of conversations whose every turn is a hit@1: mean over conversations of 1[all ranks = 1] "
        "(Bordes & Weston's per-dialog accuracy)",
        level="conversation",
    )


def value_metric(name: str, description: str = "") -> Metric:
    """A metric whose per-item numbers the benchmark computed (``table.values[name]``)."""

    def per_unit(t: RankTable):
        if name not in t.values:
            raise UsageError(f"metric {name} is not computed by this benchmark")
        return t.values[name]

    return Metric(name, per_unit, description, needs="values")


register(value_metric("f1", "token F1 of the generated reply (or a ranking's top candidate) against the label, "
                          "after ParlAI's answer normalisation (lower-case, no punctuation, no a/an/the)"))

_FAMILY = re.compile(r"^(?:(?P<kind>hits|p|r)@(?P<k>\d{1,6})|r(?P<n>\d{1,6})@(?P<rk>\d{1,6}))$")


def get(name: str) -> Metric:
    """The metric called ``name`` (fixed names, aliases, and the families hits@k, p@k, rN@k)."""
    key = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if key in TEXT_METRICS and key not in _FIXED:
        import dialeval.metrics.embedding  # noqa: F401 (registers the text metrics; numpy only, gensim lazily)
    if key in _FIXED:
        return _FIXED[key]
    if key == "mrr":
        return _mrr()
    if key == "per-dialog-accuracy":
        return _per_dialog()
    if key == "noesis-score":
        return _noesis_score()
    if key == "map":
        return value_metric("map", "mean average precision: AP = (1/R) sum over positives at rank i of "
                            "(positives in the top i) / i (trec_eval map, DAM/SMN MAP; dialeval.metrics.selection)")
    if key == "per-response-accuracy":
        return _hits(1, "per-response-accuracy")
    m = _FAMILY.match(key)
    if m:
        if m.group("kind"):
            k = int(m.group("k"))
            if k < 1:
                raise UsageError(f"metric {name}: k must be at least 1")
            return _hits(k, key)
        n, k = int(m.group("n")), int(m.group("rk"))
        if not 1 <= k <= n:
            raise UsageError(f"metric {name}: needs 1 <= k <= N")
        return _recall_in_n(n, k, key)
    from dialeval.core.errors import did_you_mean

    hint = did_you_mean(key, known_names())
    raise UsageError(f"unknown metric {name!r}{hint or ' (known: ' + ', '.join(known_names()) + ')'}")


_ABBREVIATIONS = frozenset({"mrr", "map", "f1", "bleu"})


def label(name: str) -> str:
    """A metric's column header in every table: an abbreviation in capitals (P@1, HITS@10, R10@2, MRR, MAP, F1,
    BLEU), a word as registered, in lower case (per-response-accuracy, noesis-score, score, name-exact); the
    JSON, CSV and signatures keep the registered name."""
    return name.upper() if name in _ABBREVIATIONS or _FAMILY.match(name) else name


def family(name: str) -> str:
    """``p@K`` for p@1, p@10, ...; ``hits@K``, ``r@K`` and ``rN@K`` likewise; any other name is its own family."""
    m = _FAMILY.match(name)
    if m is None:
        return name
    return f"{m.group('kind')}@K" if m.group("kind") else "rN@K"


def known_names() -> list[str]:
    return ["hits@K", "p@K", "r@K", "mrr", "map", "noesis-score", "rN@K", "per-response-accuracy", "per-dialog-accuracy",
            *sorted(set(_FIXED) | set(TEXT_METRICS))]


def resolve(names) -> list[Metric]:
    """Metrics for a comma-separated string or a list of names, in order, duplicates removed."""
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    out: dict[str, Metric] = {}
    for n in names:
        m = get(n)
        out.setdefault(m.name, m)
    if not out:
        raise UsageError("no metric given")
    return list(out.values())
