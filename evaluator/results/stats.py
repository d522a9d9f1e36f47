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
    * :func:`pairwise_randomization` (used by :func:`bands` and ``dialeval rank``): the same test for every
      pair of many runs **not** through scipy: ``permutation_test`` draws fresh swaps per call, so 50 runs
      would cost 1,225 calls; here one matrix of random signs (R x C) is drawn once and shared by all pairs
      (common random numbers), and since the null statistic of pair (i, j) is ``signs @ (S_i - S_j)`` it is
      ``M[:, i] - M[:, j]`` with ``M = signs @ S.T`` — one matrix product for all pairs. :func:`bands` tests
      neighbours in rank order, Holm-adjusted over the k - 1 tests, with enough resamples
      (:func:`band_resamples`) that the adjustment can reject at all (p >= 1/(R + 1) for a Monte Carlo test). Its p-values are the
      same test as :func:`approximate_randomization` (a different random stream, so they can differ by
      Monte Carlo error, about ±0.015 at p = 0.05 with 1,000 resamples); tests check the two agree.
    * :func:`holm`: Holm's step-down adjustment (scipy has none; statsmodels is not a dependency).

Every result carries the resampling settings in signature form (SacreBLEU's convention):
``|test:ar|ar:1000|bs:1000|seed:12345|conf:95|unit:conversation``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


# ---- per-unit values ----------------------------------------------------------------------------------
@dataclass
class UnitValues:
    """One run's per-unit values of one metric: ``keys`` (unique, sorted), ``values``, ``clusters`` (same order)."""

    metric: str
    keys: np.ndarray
    values: np.ndarray
    clusters: np.ndarray
    level: str = "item"

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    @property
    def mean(self) -> float:
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
        return UnitValues(metric.name, k[order], v[order], k[order].copy(), "conversation")
    v = np.asarray(metric.per_unit(table), dtype=np.float64)
    split = table.split.astype(str)
    keys = np.char.add(np.char.add(split, _SEP), table.item_id.astype(str))
    clusters = np.char.add(np.char.add(split, _SEP), table.conversation_id.astype(str))
    order = np.argsort(keys, kind="stable")
    keys, v, clusters = keys[order], v[order], clusters[order]
    if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
        raise ValueError("a rank table holds the same item twice")
    return UnitValues(metric.name, keys, v, clusters, "item")


def align(a: UnitValues, b: UnitValues) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values of A and B on the units both have (matched by key), and the units' clusters."""
    common, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    return a.values[ia], b.values[ib], a.clusters[ia]


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
             seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Percentile cluster-bootstrap interval of mean(values) (``scipy.stats.bootstrap``).

    Resamples clusters with replacement and recomputes the ratio ``sum S / sum N``. Fewer than two clusters,
    or identical cluster means (every item a hit, say), give the degenerate interval [estimate, estimate].
    """
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(values))
    n, s = cluster_sums(clusters, values)
    est = float(s.sum() / n.sum()) if len(values) else float("nan")
    if len(n) < 2 or np.allclose(s / n, s[0] / n[0]):
        return Interval(est, est, est, len(values), len(n), confidence)

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

    def significant(self, alpha: float = DEFAULT_ALPHA) -> bool:
        return self.p_randomization < alpha

    def to_json(self) -> dict:
        return {
            "metric": self.metric, "a": _r(self.a), "b": _r(self.b), "diff": _r(self.diff),
            "diff_low": _r(self.diff_low), "diff_high": _r(self.diff_high),
            "p_bootstrap": _r(self.p_bootstrap), "p_randomization": _r(self.p_randomization),
            "n": self.n, "clusters": self.clusters, "resamples": self.resamples, "seed": self.seed,
            "confidence": self.confidence, "unit": self.level,
            "a_interval": self.a_interval.to_json() if self.a_interval else None,
            "b_interval": self.b_interval.to_json() if self.b_interval else None,
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

    def diff(sa_, sb_, n_, axis=-1):
        return (sa_.sum(axis=axis) - sb_.sum(axis=axis)) / n_.sum(axis=axis)

    res = stats.bootstrap((sa, sb, n), diff, paired=True, vectorized=True, n_resamples=resamples,
                          confidence_level=confidence, method="percentile", batch=_batch(len(n), 3), rng=_rng(seed))
    dist = np.asarray(res.bootstrap_distribution)
    extreme = int(np.count_nonzero(np.abs(dist - d) >= abs(d) - 1e-12))
    p = (extreme + 1) / (len(dist) + 1)
    return d, float(res.confidence_interval.low), float(res.confidence_interval.high), min(1.0, p)


def approximate_randomization(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None,
                              resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> float:
    """Two-sided p-value of mean(a) = mean(b) by swapping the runs' outputs per cluster at random.

    ``scipy.stats.permutation_test`` with ``permutation_type="samples"`` on the paired cluster sums: the
    statistic is ``(sum S_A - sum S_B) / N`` (N is the same under every swap). Identical runs give 1.0.
    """
    from scipy import stats

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if clusters is None:
        clusters = np.arange(len(a))
    n, sa, sb = cluster_sums(clusters, a, b)
    if len(n) == 0 or np.array_equal(sa, sb):
        return 1.0
    total = n.sum()

    def stat(x, y, axis=-1):
        return (x.sum(axis=axis) - y.sum(axis=axis)) / total

    res = stats.permutation_test((sa, sb), stat, permutation_type="samples", vectorized=True,
                                 n_resamples=resamples, alternative="two-sided", batch=_batch(len(n), 2),
                                 rng=_rng(seed))
    return float(min(1.0, res.pvalue))


def compare_tables(table_a: RankTable, table_b: RankTable, metrics: list[Metric],
                   resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = DEFAULT_CONFIDENCE, base_signature: str = "") -> list[PairedResult]:
    """Paired bootstrap + approximate randomization of run A against run B, per metric, on their common units."""
    out = []
    for m in metrics:
        ua, ub = unit_values(table_a, m), unit_values(table_b, m)
        va, vb, cl = align(ua, ub)
        if not len(va):
            raise ValueError("the two runs share no scored item")
        d, lo, hi, p_bs = paired_bootstrap(va, vb, cl, resamples, seed, confidence)
        p_ar = approximate_randomization(va, vb, cl, resamples, seed)
        n_clusters = len(np.unique(cl))
        parts = [p for p in base_signature.split("|") if p] if base_signature else []
        version = [p for p in parts if p.startswith("v:")]  # the version stays last (signature convention)
        head = "|".join([p for p in parts if not p.startswith("v:")] + [f"metric:{m.name}"])
        sig = head + settings_suffix(test="ar+bs", resamples=resamples, seed=seed, confidence=confidence,
                                     level=ua.level) + "".join("|" + v for v in version)
        out.append(PairedResult(
            m.name, float(va.mean()), float(vb.mean()), d, lo, hi, p_bs, p_ar, len(va), n_clusters, resamples,
            seed, confidence, ua.level, interval(va, cl, resamples, seed, confidence),
            interval(vb, cl, resamples, seed, confidence), sig,
        ))
    return out


# ---- many runs ----------------------------------------------------------------------------------------
def pairwise_randomization(values: np.ndarray, clusters: np.ndarray | None = None,
                           resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                           pairs: list[tuple[int, int]] | None = None) -> np.ndarray:
    """Two-sided approximate-randomization p-values for every pair of rows of ``values`` (runs x units).

    Returns a symmetric (runs x runs) matrix with 1.0 on the diagonal (and for pairs not in ``pairs``). One sign matrix (resamples x clusters)
    is shared by all pairs; see the module docstring for why this is not ``scipy.stats.permutation_test``.
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
    rng = _rng(seed)
    # Swapping A and B in cluster c flips the sign of (S_A,c - S_B,c): null stat = signs @ (S_A - S_B) / N.
    proj = np.empty((resamples, k))
    step = _batch(n_cl, 1)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        signs = rng.integers(0, 2, size=(stop - start, n_cl), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        proj[start:stop] = signs @ sums.T / total
    p = np.ones((k, k))
    todo = pairs if pairs is not None else [(x, y) for x in range(k) for y in range(x + 1, k)]
    for i, j in todo:
        obs = abs(observed[i] - observed[j])
        if np.array_equal(sums[i], sums[j]):
            continue
        null = np.abs(proj[:, i] - proj[:, j])
        p[i, j] = p[j, i] = (np.count_nonzero(null >= obs - 1e-12) + 1) / (resamples + 1)
    return p


def holm(pvalues) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values: ``p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j))`` in sorted order."""
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    m = len(p)
    if not m:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adj = np.maximum.accumulate(adj)
    out = np.empty(m)
    out[order] = adj
    return out


@dataclass
class Banding:
    """Runs in rank order with their band (1 = top) and the Holm-adjusted pairwise p-values."""

    order: list[int]  # indices into the input, best first
    scores: list[float]
    band: list[int]  # band of each run in ``order``
    p_adjusted: np.ndarray  # (runs x runs) in input order
    metric: str = ""
    alpha: float = DEFAULT_ALPHA
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    n_units: int = 0
    level: str = "item"
    signature: str = ""
    notes: list[str] = field(default_factory=list)


def band_resamples(k: int, alpha: float = DEFAULT_ALPHA, floor: int = DEFAULT_RESAMPLES) -> int:
    """Resamples that let Holm over ``k - 1`` tests reject at all: the smallest attainable adjusted p-value,
    ``(k - 1) / (R + 1)``, must be well under ``alpha`` (here alpha / 20). At least ``floor``."""
    m = max(1, k - 1)
    return max(floor, int(np.ceil(20 * m / alpha)))


def bands(values: np.ndarray, clusters: np.ndarray | None = None, tiebreak=None, metric: str = "",
          alpha: float = DEFAULT_ALPHA, resamples: int | None = None, seed: int = DEFAULT_SEED,
          level: str = "item") -> Banding:
    """Rank runs (rows of ``values``, aligned units) by mean and group them into bands of indistinguishable systems.

    Runs are ordered by mean (equal means by ``tiebreak``, e.g. submission time, earliest first; then input
    order). Each run is tested against the next one down (approximate randomization, cluster swaps), the
    ``k - 1`` p-values are Holm-adjusted, and a band ends where the adjusted p-value is below ``alpha`` — the
    DSTC6 overview's grouping, derived from the items instead of fixed thresholds. Like any chain of
    neighbour tests, the first and last members of a long band may differ significantly from each other.

    ``resamples`` None picks :func:`band_resamples` (enough for Holm over ``k - 1`` tests to be able to reject);
    the number used is in the signature. ``p_adjusted[i, j]`` holds the adjusted p-value of neighbours i, j
    (input indices), 1.0 elsewhere.
    """
    values = np.asarray(values, dtype=np.float64)
    k = values.shape[0]
    if resamples is None:
        resamples = band_resamples(k, alpha)
    means = values.mean(axis=1) if values.shape[1] else np.full(k, np.nan)
    tb = list(tiebreak) if tiebreak is not None else [0] * k
    order = sorted(range(k), key=lambda i: (-round(float(means[i]), 12), tb[i], i))
    raw = neighbour_randomization(values[order], clusters, resamples, seed) if k > 1 else np.empty(0)
    adj_chain = holm(raw)
    adj = np.ones((k, k))
    band_of = []
    band = 1
    for pos, i in enumerate(order):
        if pos:
            prev = order[pos - 1]
            adj[prev, i] = adj[i, prev] = adj_chain[pos - 1]
            if adj_chain[pos - 1] < alpha:
                band += 1
        band_of.append(band)
    sig = f"metric:{metric}" + settings_suffix(test="ar", resamples=resamples, seed=seed, level=level) + \
        f"|alpha:{alpha:g}|adj:holm|pairs:neighbours"
    return Banding(order, [float(means[i]) for i in order], band_of, adj, metric, alpha, resamples, seed,
                   int(values.shape[1]), level, sig)


def neighbour_randomization(values: np.ndarray, clusters: np.ndarray | None = None,
                            resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Approximate-randomization p-values of rows (i, i + 1) of ``values``: the ``k - 1`` neighbour pairs."""
    p = pairwise_randomization(values, clusters, resamples, seed, pairs=[(i, i + 1) for i in range(len(values) - 1)])
    return np.array([p[i, i + 1] for i in range(len(values) - 1)])


def _r(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 6)
