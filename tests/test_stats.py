"""Significance statistics: intervals, paired tests, cluster resampling, Holm, bands (dialeval.results.stats)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialeval.core.ranks import RankTable
from dialeval.metrics import get
from dialeval.results import stats


def bernoulli(p, n, seed):
    return (np.random.default_rng(seed).random(n) < p).astype(float)


def test_interval_matches_the_normal_approximation_and_is_deterministic():
    v = bernoulli(0.7, 4000, 1)
    iv = stats.interval(v)
    se = np.sqrt(v.mean() * (1 - v.mean()) / len(v))
    assert iv.estimate == pytest.approx(v.mean())
    assert iv.low == pytest.approx(v.mean() - 1.96 * se, abs=0.004)
    assert iv.high == pytest.approx(v.mean() + 1.96 * se, abs=0.004)
    assert stats.interval(v) == iv  # same seed, same numbers
    assert stats.interval(v, seed=7) != iv


def test_cluster_resampling_widens_intervals_of_correlated_turns():
    # 400 conversations of 10 identical turns: the effective sample is 400, not 4000
    conv = bernoulli(0.6, 400, 2)
    v = np.repeat(conv, 10)
    clusters = np.repeat(np.arange(400), 10)
    item = stats.interval(v)
    cluster = stats.interval(v, clusters)
    ratio = (cluster.high - cluster.low) / (item.high - item.low)
    assert 2.5 < ratio < 3.8  # about sqrt(10)
    assert cluster.clusters == 400 and cluster.n == 4000


def test_degenerate_interval_when_every_item_is_a_hit():
    iv = stats.interval(np.ones(50))
    assert (iv.low, iv.estimate, iv.high) == (1.0, 1.0, 1.0)


def test_paired_tests_detect_a_real_difference_and_not_a_null_one():
    a = bernoulli(0.8, 3000, 3)
    b = a.copy()
    flip = np.random.default_rng(4).random(3000) < 0.1
    b[flip] = 0.0  # B loses ~8 points on the same items
    d, lo, hi, p_bs = stats.paired_bootstrap(a, b)
    assert d == pytest.approx(a.mean() - b.mean())
    assert 0 < lo < d < hi
    assert p_bs < 0.01
    assert stats.approximate_randomization(a, b) < 0.01
    # identical runs: nothing to find
    assert stats.approximate_randomization(a, a) == 1.0
    assert stats.paired_bootstrap(a, a)[3] == 1.0
    # two independent runs of the same system: not significant
    c = bernoulli(0.8, 3000, 5)
    e = bernoulli(0.8, 3000, 6)
    assert stats.approximate_randomization(c, e) > 0.05


def test_vectorised_pairwise_randomization_agrees_with_scipy_permutation_test():
    # a borderline difference, where Monte Carlo error shows
    a = bernoulli(0.75, 2000, 11)
    b = a.copy()
    ones, zeros = np.flatnonzero(a == 1), np.flatnonzero(a == 0)
    b[ones[:24]] = 0  # 36 discordant items, net 12 against B: z about 2
    b[zeros[:12]] = 1
    clusters = np.repeat(np.arange(500), 4)
    p_scipy = stats.approximate_randomization(a, b, clusters, resamples=4000)
    p_ours = stats.pairwise_randomization(np.stack([a, b]), clusters, resamples=4000)[0, 1]
    assert 0.005 < p_scipy < 0.9
    assert p_ours == pytest.approx(p_scipy, abs=0.03)


def test_holm_adjustment_by_hand():
    # sorted p: 0.005 (x4), 0.01 (x3), 0.03 (x2), 0.04 (x1) -> 0.02, 0.03, 0.06, 0.06 (monotone)
    assert stats.holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.9, 0.8]).tolist() == pytest.approx([1.0, 1.0])
    assert len(stats.holm([])) == 0


@pytest.mark.parametrize("rule", ["pairwise", "neighbour"])
def test_bands_group_indistinguishable_runs_and_order_ties_by_submission(rule):
    base = bernoulli(0.7, 3000, 20)
    rng = np.random.default_rng(21)

    def variant(flip_share, seed):
        v = base.copy()
        r = np.random.default_rng(seed).random(3000)
        v[(r < flip_share) & (v == 1)] = 0
        return v

    runs = [variant(0.0, 1), variant(0.003, 2), variant(0.3, 3), variant(0.302, 4), variant(0.7, 5)]
    runs.append(runs[0].copy())  # an exact duplicate of run 0, submitted earlier
    tiebreak = ["2017-09-05", "2017-09-02", "2017-09-03", "2017-09-04", "2017-09-06", "2017-09-01"]
    del rng
    b = stats.bands(np.stack(runs), tiebreak=tiebreak, metric="p@1", rule=rule, test="ar")
    assert b.order[:2] == [5, 0]  # equal scores: earliest submission first
    band_of = dict(zip(b.order, b.band))
    assert band_of[5] == band_of[0] == band_of[1] == 1
    assert band_of[2] == band_of[3] == 2
    assert band_of[4] == 3
    assert "|ar:" in b.signature and "|seed:12345" in b.signature and "adj:holm" in b.signature
    tests = 15 if rule == "pairwise" else 5
    assert b.resamples == stats.band_resamples(6, tests=tests) and f"|bands:{rule}|" in b.signature
    # 0/1 values on independent items: "auto" takes McNemar's exact test, and the bands agree here
    e = stats.bands(np.stack(runs), tiebreak=tiebreak, metric="p@1", rule=rule)
    assert e.test == "mcnemar" and "|test:mcnemar|" in e.signature and "|ar:" not in e.signature
    assert e.band == b.band


def _table(split, ids, ranks, convs=None):
    return RankTable.build(benchmark="x", split=split, group="1", item_ids=ids, gold_rank=ranks, n_candidates=10,
                           conversation_ids=convs)


def test_unit_values_are_keyed_by_split_and_item_and_align_across_runs():
    t1 = RankTable.concat([_table("tst1", ["a", "b", "c"], [1, 2, 0]), _table("tst2", ["a"], [1])])
    t2 = RankTable.concat([_table("tst1", ["c", "b", "a"], [1, 1, 1])])
    m = get("p@1")
    u1, u2 = stats.unit_values(t1, m), stats.unit_values(t2, m)
    assert len(u1) == 4  # "a" of tst1 and "a" of tst2 are different items
    va, vb, cl = stats.align(u1, u2)
    assert va.tolist() == [1.0, 0.0, 0.0] and vb.tolist() == [1.0, 1.0, 1.0]


def test_conversation_level_metric_resamples_conversations():
    t = _table("tst1", ["a1", "a2", "b1", "b2"], [1, 1, 1, 2], convs=["A", "A", "B", "B"])
    u = stats.unit_values(t, get("per-dialog-accuracy"))
    assert u.level == "conversation" and u.values.tolist() == [1.0, 0.0]
    assert len(u) == 2


def test_compare_tables_signature_holds_resamples_and_seed():
    ids = [f"i{k}" for k in range(300)]
    ra = np.where(bernoulli(0.8, 300, 30) == 1, 1, 3)
    rb = np.where(bernoulli(0.5, 300, 31) == 1, 1, 3)
    res = stats.compare_tables(_table("tst1", ids, ra), _table("tst1", ids, rb), [get("p@1"), get("mrr")],
                               base_signature="x|mode:strict|v:0.1.0")
    assert [r.metric for r in res] == ["p@1", "mrr"]
    assert res[0].signature.startswith("x|mode:strict|metric:p@1|test:ar+bs|ar:1000|bs:1000|seed:12345")
    assert res[0].signature.endswith("|v:0.1.0")
    assert res[0].p_randomization < 0.01 and res[0].diff_low > 0
    assert res[0].a_interval.low < res[0].a < res[0].a_interval.high


# ---- exact test, p-value display (issue 20, items 5 and 7) ---------------------------------------------------------
def test_mcnemar_agrees_with_scipy_on_a_hand_made_case():
    from scipy.stats import binomtest

    # 40 items: 20 both right, 5 both wrong, 12 only A right, 3 only B right
    a = np.array([1] * 20 + [0] * 5 + [1] * 12 + [0] * 3, dtype=float)
    b = np.array([1] * 20 + [0] * 5 + [0] * 12 + [1] * 3, dtype=float)
    by_hand = 2 * (1 + 15 + 105 + 455) / 2 ** 15  # 2 P(X <= 3), X ~ Bin(15, 1/2)
    assert by_hand == pytest.approx(0.03515625)
    assert stats.mcnemar(a, b) == pytest.approx(binomtest(12, 15, 0.5).pvalue) == pytest.approx(by_hand)
    assert stats.mcnemar(b, a) == pytest.approx(by_hand)
    assert stats.pairwise_mcnemar(np.stack([a, b]))[0, 1] == pytest.approx(by_hand)
    assert stats.mcnemar(a, a) == 1.0


def test_vectorised_mcnemar_matches_binomtest_for_every_pair():
    runs = np.stack([bernoulli(p, 700, s) for s, p in enumerate([0.5, 0.52, 0.55, 0.6, 0.6])])
    p = stats.pairwise_mcnemar(runs)
    for i in range(5):
        for j in range(i + 1, 5):
            assert p[i, j] == pytest.approx(stats.mcnemar(runs[i], runs[j]), rel=1e-9)
            assert p[j, i] == p[i, j]


def test_a_p_value_at_the_resampling_floor_is_printed_as_a_bound():
    assert stats.format_p(1 / 1001, 1000) == "< 0.0010"
    assert stats.format_p(1 / 501, 500) == "< 0.0020"
    assert stats.format_p(2 / 1001, floor=stats.ar_floor(1000)) == "< 0.0020"
    assert stats.format_p(1 / 2801, 2800) == "< 0.0004"  # 0.000357 rounded up: the bound stays true
    assert stats.format_p(1 / 11201, 11200) == "< 9.0e-05"
    assert stats.format_p(1 / 100001, 100000) == "< 1.0e-05"
    assert stats.format_p(3 / 1001, 1000) == "0.0030"  # above the floor: a number
    assert stats.format_p(0.0421) == "0.0421" and stats.format_p(1.7e-5) == "1.7e-05"
    assert stats.format_p(0.0) == "< 1e-300" and stats.format_p(None) == "-"
    # compare: clearly different runs put the randomization p-value at its floor
    ids = [f"i{k}" for k in range(300)]
    res = stats.compare_tables(_table("tst1", ids, np.ones(300, int)), _table("tst1", ids, np.full(300, 3)),
                               [get("p@1")])[0]
    assert res.p_randomization == pytest.approx(2 / 1001) and res.p_randomization_text == "< 0.0020"
    assert res.p_bootstrap_text == "< 0.0010"
    assert res.exact_test == "mcnemar" and res.p_exact == pytest.approx(2 * 0.5 ** 300)
    assert res.to_json()["p_randomization_at_floor"] is True


def test_holm_marks_adjusted_values_driven_by_a_floor():
    adj, bound = stats.holm_bounds([0.001, 0.04, 0.2], floor=[True, False, False])
    assert adj.tolist() == pytest.approx([0.003, 0.08, 0.2])
    assert bound.tolist() == [True, False, False]
    adj, bound = stats.holm_bounds([0.001, 0.0012], floor=[True, False])
    assert adj.tolist() == pytest.approx([0.002, 0.002])  # the second is set by the floor term
    assert bound.tolist() == [True, True]


# ---- speed without new numbers (issue 26 item 7): the fast paths give scipy's and the old loop's bits ------------
def _scipy_only(monkeypatch):
    """The statistics as scipy computes them, call by call (what every number was before the shared draws)."""
    monkeypatch.setattr(stats, "_shared_draws", lambda: False)


def _cases():
    rng = np.random.default_rng(11)
    for t, n in enumerate((10, 11, 300, 2000, 5001)):
        hits_a, hits_b = (rng.random(n) < 0.6).astype(float), (rng.random(n) < 0.5).astype(float)
        rr_a, rr_b = 1.0 / rng.integers(1, 11, n), 1.0 / rng.integers(1, 11, n)
        clusters = None if t % 2 else rng.integers(0, max(2, n // 3), n)
        yield hits_a, hits_b, clusters
        yield rr_a, rr_b, clusters
        yield rr_a, rr_a.copy(), clusters  # identical runs


@pytest.mark.parametrize("resamples", [1000, 419])
def test_shared_draws_give_scipys_numbers_bit_for_bit(monkeypatch, resamples):
    fast = []
    for a, b, cl in _cases():
        fast.append((stats.paired_bootstrap(a, b, cl, resamples, 5), stats.approximate_randomization(a, b, cl, resamples, 5),
                     stats.interval(a, cl, resamples, 5), stats.interval(b, cl, resamples, 5)))
    _scipy_only(monkeypatch)
    for (a, b, cl), got in zip(_cases(), fast, strict=True):
        want = (stats.paired_bootstrap(a, b, cl, resamples, 5), stats.approximate_randomization(a, b, cl, resamples, 5),
                stats.interval(a, cl, resamples, 5), stats.interval(b, cl, resamples, 5))
        assert repr(got) == repr(want)


def _one_task(ranks, convs=None):
    ids = [f"i{k:05d}" for k in range(len(ranks))]
    return RankTable.build(benchmark="dstc6", split="tst1", group="1", item_ids=ids, gold_rank=ranks, n_candidates=10,
                           conversation_ids=convs)


@pytest.mark.parametrize("clustered", [False, True])
def test_compare_tables_draws_once_for_every_metric_with_the_same_numbers(monkeypatch, clustered):
    rng = np.random.default_rng(3)
    convs = [f"c{k // 3}" for k in range(3000)] if clustered else None
    ta = _one_task(np.where(rng.random(3000) < 0.55, 1, rng.integers(1, 11, 3000)), convs)
    tb = _one_task(np.where(rng.random(3000) < 0.5, 1, rng.integers(1, 11, 3000)), convs)
    metrics = [get(m) for m in ("p@1", "p@2", "mrr")]
    fast = [r.to_json() for r in stats.compare_tables(ta, tb, metrics)]
    _scipy_only(monkeypatch)
    assert fast == [r.to_json() for r in stats.compare_tables(ta, tb, metrics)]


def _old_pairwise_randomization(values, clusters, resamples, seed):
    """The loop before issue 26: int8 draws per batch, converted to float64 signs, one product per batch."""
    values = np.asarray(values, dtype=np.float64)
    k, units = values.shape
    _, inverse = np.unique(np.arange(units) if clusters is None else clusters, return_inverse=True)
    n_cl = int(inverse.max()) + 1
    sums = np.stack([np.bincount(inverse, weights=row, minlength=n_cl) for row in values])
    observed = sums.sum(axis=1) / float(units)
    ii, jj = np.array([(x, y) for x in range(k) for y in range(x + 1, k) if not np.array_equal(sums[x], sums[y])]).T
    obs = np.abs(observed[ii] - observed[jj]) - 1e-12
    hits = np.zeros(len(ii), dtype=np.int64)
    rng = np.random.default_rng(seed)
    step = stats._batch(n_cl, 1)
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        signs = rng.integers(0, 2, size=(stop - start, n_cl), dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        proj = signs @ sums.T / float(units)
        hits += np.count_nonzero(np.abs(proj[:, ii] - proj[:, jj]) >= obs, axis=0)
    p = np.ones((k, k))
    p[ii, jj] = p[jj, ii] = (hits + 1) / (resamples + 1)
    return p


@pytest.mark.parametrize("kind", ["mrr", "mrr-clustered", "p@2", "scores", "hits-clustered", "hits-few-differences"])
def test_pairwise_randomization_is_the_old_loop_bit_for_bit(kind):
    """Both ways of counting: exact whole numbers (MRR's 1/r, P@2's halves, 0/1 hits: float32 products in chunks)
    and the float product (scores on no lattice)."""
    rng = np.random.default_rng(4)
    n, k = 9001, 5
    clusters = np.arange(n) // 3 if kind not in ("mrr", "scores") else None
    if kind.startswith("mrr"):
        values = 1.0 / rng.integers(1, 11, (k, n))
    elif kind == "p@2":
        values = rng.integers(0, 3, (k, n)) / 2
    elif kind == "scores":
        values = rng.random((k, n))
    else:
        values = (rng.random((k, n)) < 0.5).astype(float)
        if kind == "hits-few-differences":  # null statistics land exactly on the observed one: ties of |stat|
            values = np.repeat(values[:1], k, axis=0)
            for r in range(1, k):
                values[r, rng.choice(n, 3 * r, replace=False)] = 1 - values[r, 0]
    got = stats.pairwise_randomization(values, clusters, 3001, 9)
    assert np.array_equal(got, _old_pairwise_randomization(values, clusters, 3001, 9))
    sums = _old_cluster_sums(values, clusters)
    assert (stats._lattice(sums, n) is None) == (kind == "scores")


def _old_cluster_sums(values, clusters):
    _, inverse = np.unique(np.arange(values.shape[1]) if clusters is None else clusters, return_inverse=True)
    return np.stack([np.bincount(inverse, weights=row) for row in values])


def test_whole_number_sums_are_counted_in_float32_chunks_that_stay_exact():
    """MRR sums of 40,000 mostly-first items scale to about 95 million, past float32's 2^24 (one float32 product
    would round): the product is split into chunks, and the p-values are still the old loop's."""
    rng = np.random.default_rng(5)
    values = np.where(rng.random((3, 40000)) < 0.9, 1.0, 1.0 / rng.integers(1, 11, (3, 40000)))
    whole = stats._lattice(values, 40000)
    assert np.array_equal(whole, np.rint(values * 2520)) and whole.sum(axis=1).min() > 2 ** 26
    got = stats.pairwise_randomization(values, None, 301, 9)
    assert np.array_equal(got, _old_pairwise_randomization(values, None, 301, 9))
    assert stats._lattice(values + 1e-3, 40000) is None  # off the lattice: the float product


@pytest.mark.parametrize("shape", [(3, 5), (7, 13), (400, 2001), (1, 1)])
def test_sign_draws_are_numpys_int8_draws(shape):
    a, b = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(3):  # several calls: each starts from a fresh 32-bit draw, as numpy's own
        want = a.integers(0, 2, size=shape, dtype=np.int8).astype(np.float64) * 2.0 - 1.0
        got = (stats._sign_bytes(b, *shape) >> 7) * 2.0 - 1.0
        assert np.array_equal(got, want)
    assert a.integers(0, 10**6, 5).tolist() == b.integers(0, 10**6, 5).tolist()  # the streams stay aligned


def test_a_single_cluster_gives_p_1_not_a_traceback(monkeypatch):
    """One conversation (or one item): its two equally likely swaps give statistics of equal size, so the exact
    randomization p-value is 1; before, scipy's "two or more observations" ValueError escaped."""
    a, b, one = np.array([1.0, 0.0, 1.0]), np.zeros(3), np.array([7, 7, 7])
    assert stats.approximate_randomization(a, b, one) == 1.0
    assert stats.approximate_randomization(np.array([1.0]), np.array([0.0])) == 1.0
    res = stats.compare_tables(_table("tst1", ["a", "b", "c"], [1, 2, 1], convs=["A"] * 3),
                               _table("tst1", ["a", "b", "c"], [3, 3, 3], convs=["A"] * 3), [get("p@1")])
    assert res[0].p_randomization == 1.0
    _scipy_only(monkeypatch)  # scipy's own path too
    assert stats.approximate_randomization(a, b, one) == 1.0


# ---- units a metric leaves out (issue 27 item 6: embedding metrics under empty:skip) -----------------------------
def test_units_left_out_by_a_metric_are_dropped_from_intervals_and_paired_tests():
    """NaN per-item values (an embedding metric skipping an empty text) are not units: a run's value and interval
    are over the others, and a paired comparison drops an item that either run left out, and says how many."""
    m = get("embedding-average")
    ids = [f"i{k}" for k in range(200)]
    rng = np.random.default_rng(8)
    va, vb = rng.uniform(0.5, 1.0, 200), rng.uniform(0.4, 0.9, 200)
    va[[3, 10, 50]] = np.nan  # left out in A
    vb[[10, 77]] = np.nan  # left out in B (item 10 in both)
    ta = RankTable.build(benchmark="x", split="tst1", group="1", item_ids=ids, gold_rank=np.ones(200, int),
                         n_candidates=10, values={m.name: va})
    tb = RankTable.build(benchmark="x", split="tst1", group="1", item_ids=ids, gold_rank=np.ones(200, int),
                         n_candidates=10, values={m.name: vb})
    ua = stats.unit_values(ta, m)
    assert len(ua) == 197 and sorted(ua.left_out.tolist()) == sorted("tst1\x1f" + i for i in ("i3", "i10", "i50"))
    assert ua.mean == pytest.approx(np.nanmean(va), abs=1e-15)
    assert m.compute_left_out(ta) == (pytest.approx(np.nanmean(va), abs=1e-15), 3)
    iv = stats.interval(ua.values, ua.clusters)
    assert iv.n == 197 and np.isfinite([iv.low, iv.high]).all()

    (res,) = stats.compare_tables(ta, tb, [m])
    both = ~(np.isnan(va) | np.isnan(vb))
    assert res.n == 196 and res.left_out == 4  # items 3, 10, 50, 77
    assert res.a == pytest.approx(va[both].mean(), abs=1e-15) and res.b == pytest.approx(vb[both].mean(), abs=1e-15)
    assert res.diff == pytest.approx(va[both].mean() - vb[both].mean(), abs=1e-12)
    assert np.isfinite([res.diff_low, res.diff_high, res.p_randomization, res.p_bootstrap]).all()
    assert res.to_json()["left_out"] == 4
    # nothing left out: the same numbers as before the rule existed, and left_out 0
    (full,) = stats.compare_tables(tb.take(both), ta.take(both), [m])
    assert full.left_out == 0 and full.n == 196 and full.diff == pytest.approx(-res.diff, abs=1e-12)


def test_report_counts_only_the_items_a_metric_kept():
    from dialeval.core.signature import Signature
    from dialeval.results.report import ScoreReport

    m = get("embedding-average")
    t = RankTable.concat([
        RankTable.build(benchmark="x", split="tst1", group="1", item_ids=["a", "b", "c"], gold_rank=[1, 1, 1],
                        n_candidates=10, values={m.name: np.array([0.5, np.nan, 0.7])}),
        RankTable.build(benchmark="x", split="tst1", group="2", item_ids=["d", "e"], gold_rank=[1, 2],
                        n_candidates=10, values={m.name: np.array([np.nan, np.nan])}),
    ])
    rep = ScoreReport(Signature("x"), {}, ["tst1"], ["1", "2"], True, table=t).compute([m, get("p@1")])
    got = {(r["group"], r["average"], r["metric"]): (r["value"], r["n"]) for r in rep.records}
    assert got[("1", None, m.name)] == (pytest.approx(0.6), 2)
    assert ("2", None, m.name) not in got  # every item left out: no number
    assert got[("all", "micro", m.name)] == (pytest.approx(0.6), 2)
    assert got[("all", "macro", m.name)] == (pytest.approx(0.6), 2)  # over the groups that have a value
    assert got[("all", "micro", "p@1")] == (0.8, 5)  # other metrics keep every item
    rows = [json.loads(line) for line in rep.per_item_lines()]
    assert [r[m.name] for r in rows] == [0.5, None, 0.7, None, None]  # valid JSON: null, never NaN
