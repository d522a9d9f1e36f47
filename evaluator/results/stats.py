"""Significance for dialog benchmarks: confidence intervals, paired tests, Holm correction and ranking bands.

Everything here works on *per-unit values keyed by item id* taken from a :class:`~dialeval.core.ranks.RankTable`
and a registered :class:`~dialeval.metrics.Metric`: a unit is an item (one row, key ``split/item id``) for
item-level metrics (hits@k, P@k, MRR, ...) and a conversation for conversation-level ones (per-dialog
accuracy). Units are grouped into **clusters** — the item's conversation — and every resampling draws whole
clusters, because turns of one conversation are correlated (metrics.md §8). Where a benchmark has no
conversations each item is its own cluster and this reduces to the ordinary item bootstrap.

A metric's value is the mean over units, so over clusters it is the ratio estimator
``sum_c S_c / sum_c N_c`` (``S_c`` the sum of the unit values of cluster ``c``, ``N_c`` its unit count).
All routines work on these per-cluster sums, which makes them exact cluster resampling and cheap.

Routines and where they come from
    * :func:`interval`: 95 % percentile bootstrap interval of one run's metric — ``scipy.stats.bootstrap``
      (``method="percentile"``; BCa would need a jackknife over every cluster, O(C^2) memory on 20k items).
    * :func:`paired_bootstrap`: Koehn (2004) paired bootstrap of the difference A - B, interval from
      ``scipy.stats.bootstrap(paired=True)`` over the clusters' (S_A, S_B, N) triples; the two-sided p-value is
      the share of resampled differences at least as far from the observed one as the observed one is from 0
      (the "shift" form, +1 smoothed).
    * :func:`approximate_randomization`: approximate randomization (Noreen 1989; Riezler & Maxwell 2005):
      swap the two runs' outputs per cluster at random — ``scipy.stats.permutation_test(permutation_type=
      "samples")`` on the paired cluster sums, two-sided, p-value as scipy computes it ((hits + 1)/(R + 1)).
    * :func:`mcnemar` / :func:`pairwise_mcnemar`: the exact McNemar test (``scipy.stats.binomtest`` on the
      discordant items, p = 0.5) for 0/1 per-item metrics (P@1, hits@1, accuracy) whose items are independent
      (every item its own cluster). It is exact, so it has no resampling floor. It does not apply to graded
      metrics (MRR, P@k on ties, embedding scores: no two-outcome table) or to clustered units (turns of one
      conversation are not independent); there the randomization test stands: with every one of the 2^C sign
      flips it is an exact conditional test of "A and B are exchangeable within each cluster", and the Monte
      Carlo estimate ``(hits + 1)/(R + 1)`` is a valid p-value that cannot go below ``1/(R + 1)`` (Phipson &
      Smyth 2010) — such a value is reported as ``< 1/(R + 1)`` (:func:`format_p`), never as if exact.
    * :func:`pairwise_randomization` (used by :func:`bands` and ``dialeval rank``): the same test for every
      pair of many runs **not** through scipy: ``permutation_test`` draws fresh swaps per call, so 50 runs
      would cost 1,225 calls; here one matrix of random signs (R x C) is drawn once and shared by all pairs
      (common random numbers), and since the null statistic of pair (i, j) is ``signs @ (S_i - S_j)`` it is
      ``M[:, i] - M[:, j]`` with ``M = signs @ S.T`` — one matrix product for all pairs. :func:`bands` tests
      every pair (or, under the ``neighbour`` rule, neighbours in rank order), Holm-adjusted over the tests,
      with enough resamples (:func:`band_resamples`) that the adjustment can reject at all (p >= 1/(R + 1) for
      a Monte Carlo test). Its p-values are the
      same test as :func:`approximate_randomization` (a different random stream, so they can differ by
      Monte Carlo error, about ±0.015 at p = 0.05 with 1,000 resamples); tests check the two agree.
    * :func:`holm`: Holm's step-down adjustment (scipy has none; statsmodels is not a dependency).

Every result carries the resampling settings in signature form (SacreBLEU's convention):
``|test:ar|ar:1000|bs:1000|seed:12345|conf:95|unit:conversation``.
"""

from __future__ import annotations

import os
import queue
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from dialeval.core.ranks import RankTable
    from dialeval.metrics import Metric

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 12345
DEFAULT_CONFIDENCE = 0.95
DEFAULT_ALPHA = 0.05
_SEP = "\x1f"  # joins split and id into one key (cannot occur in JSON-sourced ids without escaping)
_BATCH_BYTES = 64 << 20  # memory per vectorised batch of resamples
_LITTLE = sys.byteorder == "little"


# ---- per-unit values ----------------------------------------------------------------------------------
@dataclass
class UnitValues:
    """One run's per-unit values of one metric: ``keys`` (unique, sorted), ``values``, ``clusters`` (same order).
    Units the metric left out (a NaN value: an embedding metric under ``empty:skip``) are not among them; their
    keys are ``left_out``."""

    metric: str
    keys: np.ndarray
    values: np.ndarray
    clusters: np.ndarray
    level: str = "item"
    left_out: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=str))
    # the mean as `score` computes it: over the kept units in the table's own order. A float sum depends on its
    # order, so the mean over the key-sorted ``values`` can differ from it in the last bit (MRR, not 0/1 values)
    table_mean: float | None = None

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    @property
    def mean(self) -> float:
        """The metric's value on these units, bit for bit the number `score` reports for the same table."""
        if self.table_mean is not None:
            return self.table_mean
        return float(self.values.mean()) if len(self) else float("nan")


def unit_values(table: RankTable, metric: Metric) -> UnitValues:
    """Per-unit values of ``metric`` on ``table``, keyed ``split<US>item id`` (or conversation id), sorted by key.

    Item-level metrics cluster items by ``split<US>conversation id``; conversation-level metrics are computed per
    split (conversation ids may repeat across splits) and each conversation is its own cluster.
    """
    if metric.level == "conversation":
        keys, vals = [], []
        for split in dict.fromkeys(table.split.tolist()):
            part = table.take(table.split == split)
            v = np.asarray(metric.per_unit(part), dtype=np.float64)
            convs = np.unique(part.conversation_id.astype(str))  # the metric's units: sorted distinct ids
            keys.append(np.char.add(split + _SEP, convs.astype(str)))
            vals.append(v)
        k = np.concatenate(keys) if keys else np.empty(0, dtype=str)
        v = np.concatenate(vals) if vals else np.empty(0)
        order = np.argsort(k, kind="stable")
        return _without_left_out(UnitValues(metric.name, k[order], v[order], k[order].copy(), "conversation",
                                            table_mean=_kept_mean(v)))
    v = np.asarray(metric.per_unit(table), dtype=np.float64)
    in_table_order = _kept_mean(v)
    split = table.split.astype(str)
    keys = np.char.add(np.char.add(split, _SEP), table.item_id.astype(str))
    clusters = np.char.add(np.char.add(split, _SEP), table.conversation_id.astype(str))
    order = np.argsort(keys, kind="stable")
    keys, v, clusters = keys[order], v[order], clusters[order]
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        raise ValueError("a rank table holds the same item twice")
    return _without_left_out(UnitValues(metric.name, keys, v, clusters, "item", table_mean=in_table_order))


def _kept_mean(v: np.ndarray) -> float:
    """The mean of the units the metric kept (not NaN), summed in the order given: ``Metric.compute_left_out``'s."""
    kept = v[~np.isnan(v)]
    return float(kept.mean()) if len(kept) else float("nan")


def _without_left_out(u: UnitValues) -> UnitValues:
    """``u`` without its NaN units (the metric left them out), their keys kept in ``left_out``."""
    gone = np.isnan(u.values)
    if not gone.any():
        return u
    kept = ~gone
    return UnitValues(u.metric, u.keys[kept], u.values[kept], u.clusters[kept], u.level, u.keys[gone],
                      u.table_mean)


def align(a: UnitValues, b: UnitValues) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values of A and B on the units both have (matched by key), and the units' clusters. A unit either run
    left out is not among them (:func:`left_out_of_pair` counts those)."""
    common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    return a.values[ia], b.values[ib], a.clusters[ia]


def left_out_of_pair(a: UnitValues, b: UnitValues) -> int:
    """Units both runs have that the metric left out in either (so a paired comparison drops them)."""
    if not len(a.left_out) and not len(b.left_out):
        return 0
    all_a = np.union1d(a.keys, a.left_out)
    all_b = np.union1d(b.keys, b.left_out)
    both = np.intersect1d(all_a, all_b, assume_unique=True)
    return int(len(both) - len(np.intersect1d(a.keys, b.keys, assume_unique=True)))


def cluster_sums(clusters: np.ndarray, *value_arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """(N_c, S_c for each values array): units and value sums per cluster, clusters in sorted order."""
    _, inverse = np.unique(clusters, return_inverse=True)
    counts = np.bincount(inverse).astype(np.float64)
    sums = [np.bincount(inverse, weights=v, minlength=len(counts)) for v in value_arrays]
    return (counts, *sums)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _batch(n_clusters: int, arrays: int) -> int:
    return max(1, min(DEFAULT_RESAMPLES, _BATCH_BYTES // max(1, 8 * n_clusters * arrays)))


def settings_fields(test: str | None = None, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    confidence: float = DEFAULT_CONFIDENCE, level: str = "item") -> dict:
    """The signature fields of a statistic: ``test``, ``ar``/``bs`` (resamples), ``seed``, ``conf``, ``unit``."""
    f: dict = {}
    if test:
        f["test"] = test
    if test in ("ar", "ar+bs"):
        f["ar"] = resamples
    if test in (None, "bs", "ar+bs"):
        f["bs"] = resamples
    f["seed"] = seed
    f["conf"] = f"{round(confidence * 100, 3):g}"
    f["unit"] = "conversation" if level == "conversation" else "item"
    return f


def settings_suffix(**kw) -> str:
    """``|bs:1000|seed:12345|conf:95|unit:item`` — appended to a record's signature."""
    return "".join(f"|{k}:{v}" for k, v in settings_fields(**kw).items())


# ---- one run ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BootstrapCI:
    """How `score --ci` makes each record's interval: :func:`interval` over the record's units (items, resampled
    by conversation where the benchmark has them; conversations for a conversation-level metric), ``resamples``
    resamples drawn from ``seed``, at ``level`` (a percentage with at most 3 decimals, as the signature says it)."""

    level: float = DEFAULT_CONFIDENCE
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED

    METHOD = "bootstrap-percentile"

    def signature_fields(self) -> dict:
        """``ci:bootstrap-percentile|bs:1000|seed:12345|conf:95``: what a record's interval depends on but its unit."""
        return {"ci": self.METHOD, **{k: v for k, v in settings_fields(None, self.resamples, self.seed,
                                                                        self.level).items() if k != "unit"}}

    def to_json(self) -> dict:
        return {"method": self.METHOD, "level": self.level, "resamples": self.resamples, "seed": self.seed}


@dataclass
class Interval:
    estimate: float
    low: float
    high: float
    n: int  # units
    clusters: int
    confidence: float = DEFAULT_CONFIDENCE

    def to_json(self) -> dict:
        return {"estimate": _r(self.estimate), "low": _r(self.low), "high": _r(self.high), "n": self.n,
                "clusters": self.clusters, "confidence": self.confidence}


def interval(values: np.ndarray, clusters: np.ndarray | None = None, resamples: int = DEFAULT_RESAMPLES,
             seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
             estimate: float | None = None) -> Interval:
    """Percentile cluster-bootstrap interval of mean(values) (``scipy.stats.bootstrap``).

    Resamples clusters with replacement and recomputes the ratio ``sum S / sum N``. Fewer than two clusters,
    or identical cluster means (every item a hit, say), give the degenerate interval [estimate, estimate].
    ``estimate``: the point estimate to report, as the caller computed it (``UnitValues.mean``, the number
    `score` prints); by default the ratio, which can differ from it in the last bit.
    """
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(values))
    n, s = cluster_sums(clusters, values)
    est = estimate if estimate is not None else float(s.sum() / n.sum()) if len(values) else float("nan")
    if len(n) < 2 or np.allclose(s / n, s[0] / n[0]):
        return Interval(est, est, est, len(values), len(n), confidence)

    if _shared_draws():
        big_s, big_n = _bootstrap_sums([s, n], resamples, seed)
        low, high = _percentile_interval(big_s / big_n, confidence)
        return Interval(est, low, high, len(values), len(n), confidence)

    def ratio(s_, n_, axis=-1):
        return s_.sum(axis=axis) / n_.sum(axis=axis)

    res = stats.bootstrap((s, n), ratio, paired=True, vectorized=True, n_resamples=resamples,
                          confidence_level=confidence, method="percentile", batch=_batch(len(n), 2), rng=_rng(seed))
    return Interval(est, float(res.confidence_interval.low), float(res.confidence_interval.high),
                    len(values), len(n), confidence)


# ---- two runs -----------------------------------------------------------------------------------------
@dataclass
class PairedResult:
    metric: str
    a: float
    b: float
    diff: float  # a - b
    diff_low: float
    diff_high: float
    p_bootstrap: float
    p_randomization: float
    n: int
    clusters: int
    resamples: int
    seed: int
    confidence: float
    level: str = "item"
    a_interval: Interval | None = None
    b_interval: Interval | None = None
    signature: str = ""
    p_exact: float | None = None  # McNemar's exact test, where it applies (0/1 metric, independent items)
    exact_test: str | None = None  # "mcnemar" or None
    left_out: int = 0  # units both runs have that the metric left out in either run: not compared

    def significant(self, alpha: float = DEFAULT_ALPHA) -> bool:
        return (self.p_exact if self.p_exact is not None else self.p_randomization) < alpha

    @property
    def p_randomization_text(self) -> str:
        return format_p(self.p_randomization, floor=ar_floor(self.resamples))

    @property
    def p_bootstrap_text(self) -> str:
        return format_p(self.p_bootstrap, self.resamples)

    @property
    def p_exact_text(self) -> str:
        return "-" if self.p_exact is None else format_p(self.p_exact)

    def to_json(self) -> dict:
        return {
            "metric": self.metric, "a": _r(self.a), "b": _r(self.b), "diff": _r(self.diff),
            "diff_low": _r(self.diff_low), "diff_high": _r(self.diff_high),
            "p_bootstrap": _r(self.p_bootstrap), "p_randomization": _r(self.p_randomization),
            "n": self.n, "clusters": self.clusters, "resamples": self.resamples, "seed": self.seed,
            "confidence": self.confidence, "unit": self.level,
            "a_interval": self.a_interval.to_json() if self.a_interval else None,
            "b_interval": self.b_interval.to_json() if self.b_interval else None,
            # the Monte Carlo p-values as text: "< 0.0010" at the resampling floor, never a bare 0.0010
            "p_randomization_text": self.p_randomization_text, "p_bootstrap_text": self.p_bootstrap_text,
            "p_randomization_at_floor": at_floor(self.p_randomization, floor=ar_floor(self.resamples)),
            "p_exact": self.p_exact, "exact_test": self.exact_test,
            "p_exact_text": None if self.p_exact is None else self.p_exact_text,
            "left_out": self.left_out,
            "signature": self.signature,
        }


def paired_bootstrap(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None,
                     resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float, float, float]:
    """Paired cluster bootstrap of mean(a) - mean(b): ``(diff, low, high, p_two_sided)``.

    ``a`` and ``b`` are the two runs' values on the same units (same order). The p-value tests diff = 0 by
    the shifted bootstrap distribution: ``(1 + #{|d* - d| >= |d|}) / (1 + R)``.
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(a))
    n, sa, sb = cluster_sums(clusters, a, b)
    d = float((sa.sum() - sb.sum()) / n.sum()) if len(a) else float("nan")
    per = (sa - sb) / n
    if len(n) < 2 or np.allclose(per, per[0]):
        return d, d, d, (1.0 if d == 0 or len(n) < 2 else 1.0 / (resamples + 1))

    if _shared_draws():
        big_a, big_b, big_n = _bootstrap_sums([sa, sb, n], resamples, seed)
        return _paired_from_sums(d, big_a, big_b, big_n, confidence)

    def diff(sa_, sb_, n_, axis=-1):
        return (sa_.sum(axis=axis) - sb_.sum(axis=axis)) / n_.sum(axis=axis)

    res = stats.bootstrap((sa, sb, n), diff, paired=True, vectorized=True, n_resamples=resamples,
                          confidence_level=confidence, method="percentile", batch=_batch(len(n), 3), rng=_rng(seed))
    return _paired_result(d, np.asarray(res.bootstrap_distribution), float(res.confidence_interval.low),
                          float(res.confidence_interval.high))


def _paired_from_sums(d: float, big_a, big_b, big_n, confidence: float) -> tuple[float, float, float, float]:
    dist = (big_a - big_b) / big_n  # scipy's statistic on its resample sums, the same operations
    low, high = _percentile_interval(dist, confidence)
    return _paired_result(d, dist, low, high)


def _paired_result(d: float, dist: np.ndarray, low: float, high: float) -> tuple[float, float, float, float]:
    extreme = int(np.count_nonzero(np.abs(dist - d) >= abs(d) - 1e-12))
    p = (extreme + 1) / (len(dist) + 1)
    return d, low, high, min(1.0, p)


def approximate_randomization(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None,
                              resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value of mean(a) = mean(b) by swapping the runs' outputs per cluster at random.

    ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` on the paired cluster sums: the
    statistic is ``(sum S_A - sum S_B) / N`` (N is the same under every swap). Identical runs give 1.0, and so
    does a single cluster: its two equally likely assignments give statistics of equal size, so the exact p-value
    is 1 (scipy refuses samples of one observation).
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(a))
    n, sa, sb = cluster_sums(clusters, a, b)
    if len(n) < 2 or np.array_equal(sa, sb):
        return 1.0
    total = n.sum()
    if _shared_draws() and not _swaps_exhaustive(len(n), resamples):
        return _swap_p(sa, sb, total, _swap_nulls([(sa, sb)], total, resamples, seed, _batch(len(n), 2))[0])

    def stat(x, y, axis=-1):
        return (x.sum(axis=axis) - y.sum(axis=axis)) / total

    res = stats.permutation_test((sa, sb), stat, permutation_type="samples", vectorized=True,
                                 n_resamples=resamples, alternative="two-sided", batch=_batch(len(n), 2),
                                 rng=_rng(seed))
    return float(min(1.0, res.pvalue))


def compare_tables(table_a: RankTable, table_b: RankTable, metrics: list[Metric],
                   resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = DEFAULT_CONFIDENCE, base_signature: str = "") -> list[PairedResult]:
    """Paired bootstrap + approximate randomization of run A against run B, per metric, on their common units.
    A unit the metric left out in either run (NaN: an embedding metric under ``empty:skip``) is dropped from
    both sides; ``PairedResult.left_out`` counts those, and ``a``/``b`` are the means over the units compared."""
    out = []
    prepared = []
    means: dict[str, tuple[float, float]] = {}
    for m in metrics:
        ua, ub = unit_values(table_a, m), unit_values(table_b, m)
        va, vb, cl = align(ua, ub)
        if not len(va):
            raise ValueError("the two runs share no scored item")
        # not the keyed unit values: their string keys are memory
        prepared.append((m, ua.level, va, vb, cl, left_out_of_pair(ua, ub)))
        # each run's value as `score` reports it when every unit it has is compared (the usual case), else the
        # mean over the units compared
        means[m.name] = (ua.mean if len(va) == len(ua) else float(va.mean()),
                         ub.mean if len(vb) == len(ub) else float(vb.mean()))
        del ua, ub
    shared = _shared_resamples([(va, vb, cl) for _, _, va, vb, cl, _ in prepared], resamples, seed, confidence)
    for (m, level, va, vb, cl, left_out), done in zip(prepared, shared, strict=True):
        if done is None:  # each statistic on its own (scipy's own calls)
            d, lo, hi, p_bs = paired_bootstrap(va, vb, cl, resamples, seed, confidence)
            p_ar = approximate_randomization(va, vb, cl, resamples, seed)
            a_iv, b_iv = interval(va, cl, resamples, seed, confidence), interval(vb, cl, resamples, seed, confidence)
        else:
            (d, lo, hi, p_bs), p_ar, a_iv, b_iv = done
        a, b = means[m.name]
        a_iv, b_iv = _with_estimate(a_iv, a), _with_estimate(b_iv, b)
        n_clusters = len(np.unique(cl))
        exact = exact_applies(np.stack([va, vb]), cl)
        p_ex = mcnemar(va, vb) if exact else None
        parts = [p for p in base_signature.split("|") if p] if base_signature else []
        version = [p for p in parts if p.startswith("v:")]  # the version stays last (signature convention)
        head = "|".join([p for p in parts if not p.startswith("v:")] + [f"metric:{m.name}"])
        sig = head + settings_suffix(test="ar+bs", resamples=resamples, seed=seed, confidence=confidence,
                                     level=level) + ("|exact:mcnemar" if exact else "") \
            + "".join("|" + v for v in version)
        out.append(PairedResult(
            m.name, a, b, d, lo, hi, p_bs, p_ar, len(va), n_clusters, resamples,
            seed, confidence, level, a_iv, b_iv, sig, p_ex, "mcnemar" if exact else None, left_out,
        ))
    return out


def _with_estimate(iv: Interval, estimate: float) -> Interval:
    """``iv`` reporting ``estimate`` (the run's value as `score` gives it); a degenerate interval is that point."""
    if iv.low == iv.high == iv.estimate:
        return replace(iv, estimate=estimate, low=estimate, high=estimate)
    return replace(iv, estimate=estimate)


# ---- the resamples scipy draws, drawn once --------------------------------------------------------------
# ``scipy.stats.bootstrap`` and ``permutation_test`` cost far more than their arithmetic here: the permutation
# test walks the clusters in Python (20,000 calls per batch), and every statistic (each run's interval, the
# paired bootstrap, the randomization test, per metric) draws its own resamples from the same seed — the same
# draws each time. The functions below draw them once, in numpy, exactly as scipy does, and compute each
# statistic with the same numpy operations on arrays of the same layout, so every number is scipy's, bit for
# bit (``tests/test_stats.py`` checks them against scipy itself). Only a scipy with ``stats.quantile`` (1.15+;
# the percentile interval scipy computes with it) takes this path; others call scipy as before.
@lru_cache(maxsize=1)
def _shared_draws() -> bool:
    import scipy.stats

    return hasattr(scipy.stats, "quantile")


_DRAW_BYTES = 1 << 20  # one block of resampled cluster indices, or of swapped sums


def _whole(x: np.ndarray) -> bool:
    """Whole numbers whose every partial sum float64 (and int64) holds exactly: any order of adding them gives the
    same bits."""
    return bool(np.array_equal(x, np.round(x)) and np.abs(x).sum() < 2 ** 52)


def _bootstrap_sums(columns: list[np.ndarray], resamples: int, seed: int) -> list[np.ndarray]:
    """Each column's sum over every bootstrap resample of its clusters, as ``scipy.stats.bootstrap(paired=True)``
    draws them from ``seed``: resample r takes the clusters ``rng.integers(0, n, n)`` (one bounded 32-bit draw
    each, so the values do not depend on how scipy batches them), and each sum is numpy's sum of one row of the
    gathered (rows x n) block, which does not depend on the other rows. Columns of whole numbers (cluster sizes,
    0/1 metrics) are summed exactly, as (times each cluster was drawn) @ column: one product for all of them."""
    n = len(columns[0])
    rng = _rng(seed)
    out = [np.empty(resamples) for _ in columns]
    whole = [k for k, col in enumerate(columns) if _whole(col)]
    other = [k for k in range(len(columns)) if k not in whole]
    # whole numbers as int64: numpy's integer product is exact and runs on this core (BLAS's threads, on a busy
    # machine, cost more than the product)
    stacked = np.stack([columns[k] for k in whole], axis=1).astype(np.int64) if whole else None
    step = max(1, _DRAW_BYTES // (8 * max(1, n)))
    for a in range(0, resamples, step):
        b = min(step, resamples - a)
        idx = rng.integers(0, n, (b, n))
        if stacked is not None:
            times = np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n).reshape(b, n)
            sums = (times @ stacked).astype(np.float64)
            for j, k in enumerate(whole):
                out[k][a:a + b] = sums[:, j]
        for k in other:
            out[k][a:a + b] = columns[k][idx].sum(axis=-1)
    return out


def _percentile_interval(theta: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval ``scipy.stats.bootstrap(method="percentile")`` takes from its distribution."""
    from scipy import stats

    alpha = np.asarray((1 - confidence) / 2, dtype=theta.dtype)
    ci = stats.quantile(theta, np.stack((alpha, 1 - alpha), axis=-1), axis=-1)
    return float(ci[..., 0]), float(ci[..., 1])


def _swaps_exhaustive(n_clusters: int, resamples: int) -> bool:
    """scipy enumerates all 2^C swap patterns (an exact test) when there are no more than ``resamples``."""
    return n_clusters < 64 and 2 ** n_clusters <= resamples


def _swap_nulls(pairs: list[tuple[np.ndarray, np.ndarray]], total: float, resamples: int, seed: int,
                batch: int) -> list[np.ndarray]:
    """The null distributions of ``scipy.stats.permutation_test(permutation_type="samples")`` with the statistic
    ``(sum x - sum y) / total`` for each (S_A, S_B) pair of cluster sums (all of the same clusters).

    scipy shuffles each cluster's two values with one 32-bit draw (``rng.permuted`` on a pair: swapped when the
    draw's low bit is 0), ``batch`` resamples x n clusters per call in row order; the 32-bit draws are read here
    directly. Its statistic sums arrays laid out like a Fortran-ordered (rows x n) array, which numpy adds up
    cluster by cluster; the same layout gives the same sums. A block of rows is never cut down to one row
    unless scipy's batch has one (a single row would be summed pairwise). Sums of whole numbers are exact in
    any order: those come from one matrix product.
    """
    n = len(pairs[0][0])
    rng = _rng(seed)
    out = [np.empty(resamples) for _ in pairs]
    whole = [k for k, (sa, sb) in enumerate(pairs) if _whole(sa) and _whole(sb)]
    other = [k for k in range(len(pairs)) if k not in whole]
    diffs = np.stack([pairs[k][0] - pairs[k][1] for k in whole], axis=1).astype(np.int64) if whole else None
    sub = max(2, _DRAW_BYTES // (8 * max(1, n)))
    for a in range(0, resamples, batch):
        b = min(batch, resamples - a)
        cuts = list(range(0, b, sub)) + [b]
        if len(cuts) > 2 and cuts[-1] - cuts[-2] == 1:
            del cuts[-2]
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):  # the batch's draws, a block of rows at a time
            keep = (rng.integers(0, 1 << 32, size=(hi - lo, n), dtype=np.uint32) & 1).astype(bool)
            if whole:  # whole numbers: sum x = sum S_B + kept @ (S_A - S_B) exactly, for all such pairs at once
                moved = (keep.astype(np.int64) @ diffs).astype(np.float64)
                for j, k in enumerate(whole):
                    sa, sb = pairs[k]
                    out[k][a + lo:a + hi] = ((sb.sum() + moved[:, j]) - (sa.sum() - moved[:, j])) / total
            for k in other:
                sa, sb = pairs[k]
                x = np.where(keep.T, sa[:, None], sb[:, None]).T  # (rows x n), Fortran order: scipy's layout
                y = np.where(keep.T, sb[:, None], sa[:, None]).T
                out[k][a + lo:a + hi] = (x.sum(axis=-1) - y.sum(axis=-1)) / total
    return out


def _swap_p(sa: np.ndarray, sb: np.ndarray, total: float, null: np.ndarray) -> float:
    """scipy's two-sided p-value of the observed statistic against ``null`` (its tolerance for ties included)."""
    observed = (sa.sum(axis=-1) - sb.sum(axis=-1)) / total
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    resamples = len(null)
    less = float(np.count_nonzero(null <= observed + gamma) + 1) / (resamples + 1)
    greater = float(np.count_nonzero(null >= observed - gamma) + 1) / (resamples + 1)
    return float(min(1.0, min(max(min(less, greater) * 2, 0.0), 1.0)))


def _shared_resamples(runs: list[tuple[np.ndarray, np.ndarray, np.ndarray]], resamples: int, seed: int,
                      confidence: float) -> list:
    """For each (values A, values B, clusters) of :func:`compare_tables`: ``(paired bootstrap, p randomization,
    interval A, interval B)`` as those functions give them, each set of clusters resampled once for every metric
    on it; None where scipy has to be called (an exhaustive swap test, a scipy without ``stats.quantile``)."""
    out: list = [None] * len(runs)
    if not _shared_draws():
        return out
    groups: list[tuple[np.ndarray, list[int]]] = []
    for k, (_, _, cl) in enumerate(runs):
        for c, members in groups:
            if np.array_equal(c, cl):
                members.append(k)
                break
        else:
            groups.append((cl, [k]))
    for cl, members in groups:
        sums = [cluster_sums(cl, runs[k][0], runs[k][1]) for k in members]
        n = sums[0][0]
        if len(n) < 2 or _swaps_exhaustive(len(n), resamples):
            continue
        total = n.sum()
        columns = [n] + [x for _, sa, sb in sums for x in (sa, sb)]
        boot = _bootstrap_sums(columns, resamples, seed)
        differ = [j for j, (_, sa, sb) in enumerate(sums) if not np.array_equal(sa, sb)]
        nulls = dict(zip(differ, _swap_nulls([sums[j][1:] for j in differ], total, resamples, seed,
                                             _batch(len(n), 2)) if differ else [], strict=True))
        for j, k in enumerate(members):
            va, vb, _ = runs[k]
            _, sa, sb = sums[j]
            big_a, big_b = boot[1 + 2 * j], boot[2 + 2 * j]
            d = float((sa.sum() - sb.sum()) / n.sum())
            per = (sa - sb) / n
            if np.allclose(per, per[0]):
                paired = (d, d, d, 1.0 if d == 0 else 1.0 / (resamples + 1))
            else:
                paired = _paired_from_sums(d, big_a, big_b, boot[0], confidence)
            p_ar = 1.0 if j not in nulls else _swap_p(sa, sb, total, nulls[j])
            ivs = []
            for v, s_, big in ((va, sa, big_a), (vb, sb, big_b)):
                est = float(s_.sum() / n.sum())
                if np.allclose(s_ / n, s_[0] / n[0]):
                    ivs.append(Interval(est, est, est, len(v), len(n), confidence))
                else:
                    ivs.append(Interval(est, *_percentile_interval(big / boot[0], confidence), len(v), len(n),
                                        confidence))
            out[k] = (paired, p_ar, ivs[0], ivs[1])
    return out


# ---- exact test and p-value display -------------------------------------------------------------------
def is_binary(values: np.ndarray) -> bool:
    """Every value is 0 or 1 (P@1, hits@1, accuracy per item): the runs' outcomes form 2 x 2 tables."""
    v = np.asarray(values)
    return bool(v.size) and bool(np.isin(v, (0.0, 1.0)).all())


def exact_applies(values: np.ndarray, clusters: np.ndarray | None = None) -> bool:
    """McNemar's exact test fits: 0/1 values on independent units (no cluster holds two units)."""
    if not is_binary(values):
        return False
    if clusters is None:
        return True
    return len(np.unique(clusters)) == len(clusters)


def mcnemar(a: np.ndarray, b: np.ndarray) -> float:
    """Exact two-sided McNemar p-value of paired 0/1 outcomes: ``binomtest(n10, n10 + n01, 0.5)``.

    Only the discordant units count (A right and B wrong: n10; the reverse: n01); under the null each is
    equally likely either way. No discordant unit gives 1.0.
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n10 = int(np.count_nonzero((a == 1) & (b == 0)))
    n01 = int(np.count_nonzero((a == 0) & (b == 1)))
    if n10 + n01 == 0:
        return 1.0
    return float(stats.binomtest(n10, n10 + n01, 0.5, alternative="two-sided").pvalue)


def pairwise_mcnemar(values: np.ndarray, pairs: list[tuple[int, int]] | None = None) -> np.ndarray:
    """Exact McNemar p-values for every pair of rows of 0/1 ``values`` (runs x units); 1.0 on the diagonal.

    The discordant counts of all pairs come from one matrix product (``n10 = V @ (1 - V).T``). For p = 0.5
    the binomial is symmetric, so binomtest's two-sided p-value is ``min(1, 2 * cdf(min(n10, n01)))``: one
    vectorised ``binom.cdf`` instead of a call per pair (the tests check it against :func:`mcnemar`).
    """
    from scipy import stats

    v = np.asarray(values, dtype=np.float64)
    k = v.shape[0]
    n10 = np.rint(v @ (1.0 - v).T).astype(np.int64)
    todo = pairs if pairs is not None else [(x, y) for x in range(k) for y in range(x + 1, k)]
    p = np.ones((k, k))
    if not todo:
        return p
    i, j = np.array(todo).T
    hi_, lo_ = n10[i, j], n10[j, i]
    n = hi_ + lo_
    pv = np.where(n > 0, np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(hi_, lo_), np.maximum(n, 1), 0.5)), 1.0)
    p[i, j] = p[j, i] = pv
    return p


def ar_floor(resamples: int) -> float:
    """The smallest p-value :func:`approximate_randomization` can give: scipy's two-sided p-value is twice the
    smaller one-sided ``(hits + 1)/(R + 1)``, so ``2/(R + 1)`` (:func:`pairwise_randomization` counts |stat|
    directly: ``1/(R + 1)``)."""
    return 2.0 / (resamples + 1)


def at_floor(p: float | None, resamples: int | None = None, floor: float | None = None) -> bool:
    """A Monte Carlo p-value that is the smallest the test can give — ``floor``, by default ``1/(R + 1)`` —
    which means no resample was as extreme: the true p-value may be far smaller."""
    if floor is None:
        if p is None or not resamples:
            return False
        floor = 1.0 / (resamples + 1)
    if p is None:
        return False
    return bool(p <= floor * (1 + 1e-9))


def format_p(p: float | None, resamples: int | None = None, bound: bool = False, floor: float | None = None) -> str:
    """A p-value for people: ``0.0421``; ``3.4e-07`` when tiny (exact tests); ``< 0.0010`` when it is a bound.

    ``resamples`` (floor ``1/(R + 1)``) or ``floor`` given (a Monte Carlo p-value) and ``p`` at that floor, or
    ``bound`` True (a Holm-adjusted value driven by such a floor), print ``< x`` with x rounded *up*, so the text
    stays true. An exact p-value too small for a double (0.0) prints ``< 1e-300``.
    """
    if p is None or not np.isfinite(p):
        return "-"
    if p == 0:
        return "< 1e-300"
    if bound or at_floor(p, resamples, floor):
        if p >= 1e-4:
            return f"< {np.ceil(p * 1e4 - 1e-9) / 1e4:.4f}"
        exp = int(np.floor(np.log10(p)))
        mant = np.ceil(p / 10.0 ** exp * 10 - 1e-9) / 10
        if mant >= 10:
            mant, exp = mant / 10, exp + 1
        return f"< {mant:.1f}e{exp:03d}"
    if p >= 1e-4:
        return f"{p:.4f}"
    return f"{p:.1e}"


# ---- many runs ----------------------------------------------------------------------------------------
def pairwise_randomization(values: np.ndarray, clusters: np.ndarray | None = None,
                           resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                           pairs: list[tuple[int, int]] | None = None) -> np.ndarray:
    """Two-sided approximate-randomization p-values for every pair of rows of ``values`` (runs x units).

    Returns a symmetric (runs x runs) matrix with 1.0 on the diagonal (and for pairs not in ``pairs``). One sign
    matrix (resamples x clusters) is shared by all pairs; see the module docstring for why this is not
    ``scipy.stats.permutation_test``. The resamples are drawn in batches and only the per-pair counts kept, so
    memory does not grow with ``resamples`` (all-pairs banding of many runs needs hundreds of thousands).
    """
    values = np.asarray(values, dtype=np.float64)
    k, units = values.shape
    if clusters is None:
        clusters = np.arange(units)
    _, inverse = np.unique(clusters, return_inverse=True)
    n_cl = int(inverse.max()) + 1 if units else 0
    sums = np.stack([np.bincount(inverse, weights=row, minlength=n_cl) for row in values]) if k else np.empty((0, 0))
    total = float(units) or 1.0
    observed = sums.sum(axis=1) / total  # means of each run
    todo = pairs if pairs is not None else [(x, y) for x in range(k) for y in range(x + 1, k)]
    todo = [(i, j) for i, j in todo if not np.array_equal(sums[i], sums[j])]  # identical runs: p = 1
    p = np.ones((k, k))
    if not todo:
        return p
    ii, jj = np.array(todo).T
    rng = _rng(seed)
    step = _batch(n_cl, 1)  # the batches (and so the random stream) are those of earlier versions
    whole = _lattice(sums, units)
    with _one_blas_thread():
        if whole is not None:
            hits = _lattice_hits(whole, ii, jj, rng, resamples, step)
        else:
            obs = np.abs(observed[ii] - observed[jj]) - 1e-12
            hits = _float_hits(sums, total, obs, ii, jj, rng, resamples, step)
    p[ii, jj] = p[jj, ii] = (hits + 1) / (resamples + 1)
    return p


def _one_blas_thread():
    """BLAS on one thread while the resamples are multiplied out (:func:`_resampled` counts two batches at once on
    threads of its own instead): on a busy machine (cores shared with other work) BLAS's threads wait on each
    other at every product, and banding 20 runs x 20,000 items took 29 s with them and 7 s without
    (``benchmarks/bench_bands.py``, load 22 on 2 cores). Same products, same bits."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="blas")


def _float_hits(sums, total, obs, ii, jj, rng, resamples: int, step: int) -> np.ndarray:
    """Per pair, the resamples whose |null statistic| reaches ``obs``: the float64 product of the signs and the
    cluster sums (swapping A and B in cluster c flips the sign of S_A,c - S_B,c: null stat = signs @ (S_A - S_B)
    / N, so ``(signs @ sums.T)[:, i] - [:, j]`` for every pair), one product per batch as before."""
    weights = sums.T

    def count(drawn: np.ndarray, signs: np.ndarray) -> np.ndarray:
        np.copyto(signs, np.right_shift(drawn, 7, out=drawn))
        signs *= 2
        signs -= 1
        return _pair_hits(signs @ weights / total, ii, jj, obs)

    return _resampled(rng, resamples, step, weights.shape[0], count, np.float64)


def _pair_hits(proj: np.ndarray, ii, jj, obs) -> np.ndarray:
    """Per pair (i, j), the rows of ``proj`` with ``|proj[:, i] - proj[:, j]| >= obs``."""
    hits = np.zeros(len(ii), dtype=np.int64)
    for q in range(0, len(ii), 256):  # bounded (rows x 256) temporaries however many pairs
        sl = slice(q, q + 256)
        hits[sl] = np.count_nonzero(np.abs(proj[:, ii[sl]] - proj[:, jj[sl]]) >= obs[sl], axis=0)
    return hits


def _resampled(rng: np.random.Generator, resamples: int, step: int, n: int, count, dtype) -> np.ndarray:
    """The sum of ``count(bytes, buffer)`` over the batches of ``step`` resamples: each batch's sign bytes
    (:func:`_sign_bytes`) drawn here in order, so the random stream is the same, and counted on two worker
    threads (numpy and BLAS let go of the GIL) while the next batch is drawn. Counts add up the same in any
    order. Each worker converts the bytes into a (rows x n) ``dtype`` buffer of its own, reused: a fresh one per
    batch is tens of MB of new pages, which cost more than filling them."""
    workers = 2 if (os.cpu_count() or 1) > 1 else 1
    spare: queue.SimpleQueue = queue.SimpleQueue()
    for _ in range(workers):
        spare.put(np.empty((min(step, resamples), n), dtype))

    def run(drawn: np.ndarray) -> np.ndarray:
        buffer = spare.get()  # never waits: at most ``workers`` batches are counted at once
        try:
            return count(drawn, buffer[:len(drawn)])
        finally:
            spare.put(buffer)

    total = 0
    with ThreadPoolExecutor(workers) as pool:
        pending: deque = deque()
        for start in range(0, resamples, step):
            pending.append(pool.submit(run, _sign_bytes(rng, min(resamples, start + step) - start, n)))
            while len(pending) > workers:  # at most one batch drawn ahead of the workers
                total = total + pending.popleft().result()
        while pending:
            total = total + pending.popleft().result()
    return total


_LATTICES = (1, 2, 6, 12, 60, 420, 840, 2520, 27720)
"""Scales that make common cluster sums whole: lcm(1..m), so 1 for 0/1 metrics, 2520 for reciprocal ranks of up to
ten candidates (MRR on DSTC6), 27720 up to twelve; also P@k's j/k."""
_F32_WHOLE = 1 << 23  # chunk bound: every partial sum of a float32 product of 0/1 by whole numbers stays < 2^24


def _lattice(sums: np.ndarray, units: int) -> np.ndarray | None:
    """``sums`` (runs x clusters) times the smallest scale of :data:`_LATTICES` that makes them whole numbers
    (float64), or None when none does, or when the products could not be exact.

    On such a lattice the randomization test can be counted exactly (:func:`_lattice_hits`), and exact counts
    are the float product's counts: a null statistic and an observed difference are multiples of 1/(L N), so
    they are equal or at least 1/(L N) apart; the float path's rounding (about 1e-16 of the sums) and its 1e-12
    allowance for ties are far below that gap (kept >= 1e-9 here), so it decides every resample as exact
    arithmetic does (``tests/test_stats.py`` checks the two give the same bits).
    """
    if not sums.size:
        return None
    for scale in _LATTICES:
        if scale * units > 1e9:
            return None
        scaled = sums * scale
        whole = np.rint(scaled)
        if np.abs(scaled - whole).max() <= 1e-6:
            if np.abs(whole).max() >= _F32_WHOLE or np.abs(whole).sum(axis=1).max() >= 2 ** 52:
                return None
            return whole
    return None


def _lattice_hits(whole: np.ndarray, ii, jj, rng, resamples: int, step: int) -> np.ndarray:
    """:func:`_float_hits` in exact arithmetic on whole-number cluster sums (:func:`_lattice`).

    With ``b`` the resamples' 0/1 draws (the sign is ``2b - 1``), ``signs @ W = 2 (b @ W) - sum(W)``. ``b @ W``
    is a float32 product, exact because every partial sum is a whole number below 2^24: the clusters are taken
    in chunks whose sums stay under :data:`_F32_WHOLE`, and the chunks' results added in float64 (exact below
    2^53). Half the bytes of float64 signs and no sign table: several times faster than the float path.
    """
    n = whole.shape[1]
    colsum = whole.sum(axis=1)
    obs = np.abs(colsum[ii] - colsum[jj])  # exact: a tie with the observed difference is a hit
    bound = np.cumsum(np.abs(whole).max(axis=0))
    cuts = np.unique(np.concatenate([[0], np.searchsorted(bound, np.arange(1, bound[-1] // _F32_WHOLE + 1)
                                                          * _F32_WHOLE), [n]]))
    chunks = [(lo, hi, np.ascontiguousarray(whole[:, lo:hi].T, dtype=np.float32))
              for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]

    def count(drawn: np.ndarray, ones: np.ndarray) -> np.ndarray:
        np.copyto(ones, np.right_shift(drawn, 7, out=drawn))  # 1 where the sign is +1
        acc = np.zeros((len(ones), len(whole)))
        for lo, hi, w in chunks:
            acc += ones[:, lo:hi] @ w
        return _pair_hits(2.0 * acc - colsum, ii, jj, obs)

    return _resampled(rng, resamples, step, n, count, np.float32)


def _sign_bytes(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """The (rows x n) bytes whose top bits are ``rng.integers(0, 2, (rows, n), dtype=np.int8)``, drawn from ``rng``
    exactly as that call draws them.

    numpy makes each of those int8 values from one byte of a 32-bit draw — its top bit (Lemire's method for the
    range 2 never rejects) — using the four bytes of a draw in turn and a fresh draw at each call, so the 32-bit
    draws themselves give the same signs from the same stream (``tests/test_stats.py`` checks it) without the
    per-value work. An even number of 32-bit draws with none held over is PCG64's raw 64-bit output, low half
    first: read as such, faster still.
    """
    count = rows * n
    words = -(-count // 4)
    raw = None
    if words % 2 == 0 and _LITTLE and isinstance(rng.bit_generator, np.random.PCG64) \
            and not rng.bit_generator.state["has_uint32"]:
        raw = rng.bit_generator.random_raw(words // 2).view(np.uint8)
    else:
        raw = rng.integers(0, 1 << 32, size=words, dtype=np.uint32).view(np.uint8)
    return raw[:count].reshape(rows, n)


def holm(pvalues) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values: ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))`` in sorted order."""
    return holm_bounds(pvalues)[0]


def holm_bounds(pvalues, floor=None) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted p-values and, for each, whether it is only an upper bound.

    ``floor`` marks raw p-values that are Monte Carlo floors (``1/(R + 1)``: the true p may be far smaller).
    An adjusted value is a bound when the term that sets it, ``(m - j + 1) p(j)`` at the running maximum, comes
    from such a floor.
    """
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    m = len(p)
    fl = np.zeros(m, dtype=bool) if floor is None else np.asarray(floor, dtype=bool).ravel()
    if not m:
        return p, fl
    order = np.argsort(p, kind="stable")
    terms = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adj = np.maximum.accumulate(terms)
    # index of the term that attains the running maximum (the first one, as accumulate keeps it)
    arg = np.maximum.accumulate(np.where(terms >= adj, np.arange(m), 0))
    bound = fl[order][arg] & (adj < 1.0)
    out, out_b = np.empty(m), np.empty(m, dtype=bool)
    out[order], out_b[order] = adj, bound
    return out, out_b


RULES = {
    "pairwise": "every pair of runs is tested (Holm-corrected over all pairs); going down the ranking, a run "
                "joins the current band unless it differs significantly from a run already in it, and then it "
                "starts the next band - so no two runs in one band differ significantly",
    "neighbour": "the DSTC6 overview's rule: each run is tested against the next one down (Holm-corrected over "
                 "those neighbour tests) and a band ends where a neighbour differs significantly - a long band "
                 "can hold runs that differ significantly from each other",
}
TESTS = ("auto", "mcnemar", "ar")


@dataclass
class Banding:
    """Runs in rank order with their band (1 = top) and the Holm-adjusted pairwise p-values."""

    order: list[int]  # indices into the input, best first
    scores: list[float]
    band: list[int]  # band of each run in ``order``
    p_adjusted: np.ndarray  # (runs x runs) in input order; 1.0 for pairs not tested
    metric: str = ""
    alpha: float = DEFAULT_ALPHA
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    n_units: int = 0
    level: str = "item"
    signature: str = ""
    notes: list[str] = field(default_factory=list)
    rule: str = "pairwise"
    test: str = "ar"  # the test used: "ar" (approximate randomization) or "mcnemar" (exact)
    p_raw: np.ndarray | None = None  # unadjusted p-values, same layout
    p_bound: np.ndarray | None = None  # True where p_adjusted is only an upper bound (a Monte Carlo floor)
    # for each run in ``order`` that starts a band below the first: the input index of the run of the band
    # above that it differs from significantly (the reason the band ends), else None
    differs_from: list[int | None] = field(default_factory=list)

    def p_text(self, i: int, j: int) -> str:
        """The adjusted p-value of runs i, j (input indices) as text (``< x`` when a floor)."""
        bound = bool(self.p_bound[i, j]) if self.p_bound is not None else False
        return format_p(float(self.p_adjusted[i, j]), bound=bound)


def band_resamples(k: int, alpha: float = DEFAULT_ALPHA, floor: int = DEFAULT_RESAMPLES, tests: int | None = None) -> int:
    """Resamples that let Holm over ``tests`` tests (default ``k - 1``, the neighbour rule) reject at all: the
    smallest attainable adjusted p-value, ``tests / (R + 1)``, must be well under ``alpha`` (here alpha / 20).
    At least ``floor``."""
    m = max(1, k - 1 if tests is None else tests)
    return max(floor, int(np.ceil(20 * m / alpha)))


def bands(values: np.ndarray, clusters: np.ndarray | None = None, tiebreak=None, metric: str = "",
          alpha: float = DEFAULT_ALPHA, resamples: int | None = None, seed: int = DEFAULT_SEED,
          level: str = "item", rule: str = "pairwise", test: str = "auto") -> Banding:
    """Rank runs (rows of ``values``, aligned units) by mean and group them into bands.

    Runs are ordered by mean (equal means by ``tiebreak``, e.g. submission time, earliest first; then input
    order). ``rule`` (:data:`RULES`):

    * ``"pairwise"`` (default): all ``k (k - 1) / 2`` pairs are tested and Holm-adjusted together. Bands are
      built top-down, each anchored on its first run: the next run joins the current band unless it differs
      significantly (adjusted p < alpha) from *any* run already in the band, and then it starts a new band.
      No two runs of one band differ significantly; bands are contiguous in rank order.
    * ``"neighbour"``: the DSTC6 overview's grouping — each run is tested against the next one down, the
      ``k - 1`` p-values are Holm-adjusted, and a band ends where the adjusted p-value is below ``alpha``. A
      chain of small steps can put runs that differ significantly into one band; kept to reproduce the overview.

    ``test``: ``"mcnemar"`` (exact, 0/1 values on independent units), ``"ar"`` (approximate randomization,
    cluster swaps), or ``"auto"``: McNemar where it applies (:func:`exact_applies`), else randomization.
    ``resamples`` None picks :func:`band_resamples` for the number of tests (randomization only); the number used
    is in the signature.
    """
    if rule not in RULES:
        raise ValueError(f"unknown band rule {rule!r} (known: {', '.join(RULES)})")
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r} (known: {', '.join(TESTS)})")
    values = np.asarray(values, dtype=np.float64)
    k = values.shape[0]
    exact_ok = exact_applies(values, clusters)
    if test == "mcnemar" and not exact_ok:
        raise ValueError("McNemar's exact test needs 0/1 values on independent units (every item its own cluster)")
    used = "mcnemar" if test == "mcnemar" or (test == "auto" and exact_ok) else "ar"
    n_tests = max(0, k - 1) if rule == "neighbour" else k * (k - 1) // 2
    if used == "ar" and resamples is None:
        resamples = band_resamples(k, alpha, tests=n_tests)
    means = values.mean(axis=1) if values.shape[1] else np.full(k, np.nan)
    tb = list(tiebreak) if tiebreak is not None else [0] * k
    order = sorted(range(k), key=lambda i: (-round(float(means[i]), 12), tb[i], i))
    if rule == "neighbour":
        pairs = [(order[x], order[x + 1]) for x in range(k - 1)]
    else:
        pairs = [(order[x], order[y]) for x in range(k) for y in range(x + 1, k)]
    if used == "mcnemar":
        raw = pairwise_mcnemar(values, pairs)
    else:
        raw = pairwise_randomization(values, clusters, resamples, seed, pairs) if k > 1 else np.ones((k, k))
    raw_list = np.array([raw[i, j] for i, j in pairs])
    floor = np.array([used == "ar" and at_floor(x, resamples) for x in raw_list], dtype=bool)
    adj_list, bound_list = holm_bounds(raw_list, floor)
    adj, bound = np.ones((k, k)), np.zeros((k, k), dtype=bool)
    for (i, j), a, b in zip(pairs, adj_list, bound_list, strict=True):
        adj[i, j] = adj[j, i] = a
        bound[i, j] = bound[j, i] = b
    band_of: list[int] = []
    differs: list[int | None] = []
    band, members = 1, []
    for pos, i in enumerate(order):
        hit = None
        if pos:
            if rule == "neighbour":
                prev = order[pos - 1]
                hit = prev if adj[prev, i] < alpha else None
            else:
                hit = next((mm for mm in members if adj[mm, i] < alpha), None)
        if hit is not None:
            band, members = band + 1, []
        members.append(i)
        band_of.append(band)
        differs.append(hit)
    fields: dict = {"bands": rule, "test": used}
    if used == "ar":
        fields["ar"] = resamples
    sig = f"metric:{metric}|" + "|".join(f"{a}:{b}" for a, b in fields.items()) + \
        f"|seed:{seed}|unit:{'conversation' if level == 'conversation' else 'item'}|alpha:{alpha:g}|adj:holm|" \
        f"tests:{n_tests}"
    return Banding(order, [float(means[i]) for i in order], band_of, adj, metric, alpha,
                   resamples if used == "ar" else 0, seed, int(values.shape[1]), level, sig, [], rule, used, raw,
                   bound, differs)


def neighbour_randomization(values: np.ndarray, clusters: np.ndarray | None = None,
                            resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Approximate-randomization p-values of rows (i, i + 1) of ``values``: the ``k - 1`` neighbour pairs."""
    p = pairwise_randomization(values, clusters, resamples, seed, pairs=[(i, i + 1) for i in range(len(values) - 1)])
    return np.array([p[i, i + 1] for i in range(len(values) - 1)])


def _r(x: float) -> float | None:
    """A number for JSON: every digit (a report is a record: ``score --json`` writes its values whole, and the same
    run's value must read the same from ``compare``/``rank``); None for a missing or non-finite one. Only the
    printed tables round."""
    return None if x is None or not np.isfinite(x) else float(x)
