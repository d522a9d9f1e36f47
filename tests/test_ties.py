"""Tie policies on constructed ties: ranks, and the metric values they give, against hand-computed numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from dialeval import metrics
from dialeval.benchmarks.items import ItemSet, score_items
from dialeval.formats.scores import count_above_tied, fold_counts, fold_ties, new_counts, rank_in_vector

CANDS = ("gt", *(f"d{i}" for i in range(9)))

# Row 0: all ten scores equal (s = 0, t = 9).
# Row 1: gold 5.0, d0 5.0 (tied), d1 7.0 (above), the rest 1.0 (s = 1, t = 1).
# Row 2: gold strictly best (s = 0, t = 0).
# Row 3: gold 2.0 with d3 and d8 also 2.0, six others 3.0 above (s = 6, t = 2).
MATRIX = np.array(
    [
        [0.5] * 10,
        [5.0, 5.0, 7.0] + [1.0] * 7,
        [9.0] + [1.0] * 9,
        [2.0, 3.0, 3.0, 3.0, 2.0, 3.0, 3.0, 3.0, 1.0, 2.0],
    ]
)

H10 = sum(1 / i for i in range(1, 11))
EXPECTED = {
    # policy: (gold_rank, ties, hits@1, hits@2, hits@5, mrr) per row
    "pessimistic": ([10, 3, 1, 9], [0, 0, 0, 0], [0, 0, 1, 0], [0, 0, 1, 0], [0, 1, 1, 0], [1 / 10, 1 / 3, 1, 1 / 9]),
    "optimistic": ([1, 2, 1, 7], [0, 0, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0], [1, 1 / 2, 1, 1 / 7]),
    "expected": (
        [1, 2, 1, 7],
        [9, 1, 0, 2],
        [1 / 10, 0, 1, 0],  # row 0: 1 of 10 positions; row 1: needs position 1, but one candidate is above
        [2 / 10, 1 / 2, 1, 0],
        [5 / 10, 1, 1, 0],
        [H10 / 10, (1 / 2 + 1 / 3) / 2, 1, (1 / 7 + 1 / 8 + 1 / 9) / 3],
    ),
}


@pytest.mark.parametrize("policy", sorted(EXPECTED))
def test_matrix_ranks_hand_computed(policy):
    # what the matrix scorer runs on each chunk (benchmarks/items.py: _MatrixPlan): counts, then the tie rule
    above, same = new_counts(1, len(MATRIX), policy)
    count_above_tied(MATRIX, 0, [10], above, same)
    [(rank, ties)] = fold_counts(above, same, policy)
    exp_rank, exp_ties, *_ = EXPECTED[policy]
    assert rank.tolist() == exp_rank
    assert ties.tolist() == exp_ties


def test_the_tie_rule_on_scalars_and_arrays():
    # s = 2 above the gold, t = 3 others tied with it
    assert fold_ties(2, 3, "pessimistic") == (6, 0)
    assert fold_ties(2, 3, "optimistic") == (3, 0)
    assert fold_ties(2, 3, "expected") == (3, 3)
    r, t = fold_ties(np.array([2, 0]), np.array([3, 0]), "pessimistic")
    assert r.tolist() == [6, 1] and t.tolist() == [0, 0]


def test_json_integer_scores_compare_exactly(tmp_path):
    # 2**62 + 1 and 2**62 are one float64: as JSON integers they must not tie (as in an int64 .npy)
    s = ItemSet("g", ["q1"], CANDS, [frozenset({"gt"})])
    big = 2**62
    for n_cands in (2, 10):  # the plain-Python and the vectorised paths (more than 64 scores is wide)
        row = {"gt": big + 1, "d0": big} | {f"d{j}": j for j in range(1, n_cands - 1)}
        sub = tmp_path / "s.json"
        sub.write_text(json.dumps({"format": "scores", "items": {"q1": row}}))
        table, problems, _ = score_items(sub, [s], benchmark="b", split="t", ties="pessimistic", scoring=True)
        assert [p.code for p in problems if p.severity == "error"] == [] and table.gold_rank.tolist() == [1]
    wide = ItemSet("g", ["q1"], tuple(f"c{j}" for j in range(100)), [frozenset({"c0"})])
    sub.write_text(json.dumps({"format": "scores", "items": {"q1": {f"c{j}": big - j + (j == 0) for j in range(100)}}}))
    table, problems, _ = score_items(sub, [wide], benchmark="b", split="t", ties="pessimistic", scoring=True)
    assert problems == [] and table.gold_rank.tolist() == [1]
    np.save(tmp_path / "m.npy", np.array([[big + 1, big]], dtype=np.int64))
    two = ItemSet("g", ["q1"], ("gt", "d0"), [frozenset({"gt"})])
    table, problems, _ = score_items(tmp_path / "m.npy", [two], benchmark="b", split="t", ties="pessimistic", scoring=True)
    assert problems == [] and table.gold_rank.tolist() == [1]


@pytest.mark.parametrize("policy", sorted(EXPECTED))
@pytest.mark.parametrize("form", ["npy", "csv", "json"])
def test_metric_values_for_each_policy(tmp_path, policy, form):
    ids = [f"test:{i}" for i in range(1, 5)]
    s = ItemSet("test.csv", ids, CANDS, [frozenset({"gt"})] * 4)
    if form == "npy":
        sub = tmp_path / "s.npy"
        np.save(sub, MATRIX)
    elif form == "csv":
        sub = tmp_path / "s.csv"
        sub.write_text("\n".join(",".join(repr(float(x)) for x in row) for row in MATRIX) + "\n")
    else:
        sub = tmp_path / "s.json"
        sub.write_text(json.dumps({"format": "scores", "items": {i: dict(zip(CANDS, row.tolist(), strict=True)) for i, row in zip(ids, MATRIX, strict=True)}}))
    table, problems, info = score_items(sub, [s], benchmark="ubuntu", split="test", ties=policy, scoring=True, nested=(2, 10))
    assert problems == []
    assert info["format"] == ("scores" if form == "json" else form)
    exp_rank, exp_ties, h1, h2, h5, rr = EXPECTED[policy]
    assert table.gold_rank.tolist() == exp_rank
    assert table.ties.tolist() == exp_ties
    for name, per_row in (("hits@1", h1), ("hits@2", h2), ("hits@5", h5), ("mrr", rr), ("r10@1", h1), ("r10@5", h5)):
        m = metrics.get(name)
        assert np.allclose(m.per_unit(table), per_row), name
        assert math.isclose(m.compute(table), sum(per_row) / 4), name


@pytest.mark.parametrize(
    "policy,want", [("pessimistic", [0, 0, 1, 0]), ("optimistic", [1, 1, 1, 0]), ("expected", [0.5, 0.5, 1, 0])]
)
def test_nested_one_in_two_ties(tmp_path, policy, want):
    # 1-in-2 uses gt and d0 only: rows 0 and 1 tie there, row 2 has the gold ahead of d0, row 3 behind it
    s = ItemSet("g", ["a", "b", "c", "d"], CANDS, [frozenset({"gt"})] * 4)
    np.save(tmp_path / "s.npy", MATRIX)
    table, problems, _ = score_items(tmp_path / "s.npy", [s], benchmark="u", split="t", ties=policy, scoring=True, nested=(2,))
    assert problems == []
    assert metrics.get("r2@1").per_unit(table).tolist() == want


def test_several_golds_best_one_counts_and_tied_golds_form_one_block():
    v = np.array([3.0, 5.0, 5.0, 5.0, 1.0])  # golds at columns 1 and 2 tie with column 3; column 0 below
    assert rank_in_vector(v, [1, 2], "pessimistic") == (2, 0)  # one tied non-gold can come first
    assert rank_in_vector(v, [1, 2], "optimistic") == (1, 0)
    assert rank_in_vector(v, [1, 2], "expected") == (1, 1)
    assert rank_in_vector(v, [0, 4], "pessimistic") == (4, 0)  # best gold (3.0) has three above
    assert rank_in_vector(v, [], "expected") == (0, 0)


def test_unscored_candidates_rank_below_and_tie_among_themselves(tmp_path):
    s = ItemSet("g", ["q1", "q2"], ("a", "b", "c", "d"), [frozenset({"a"}), frozenset({"d"})])
    sub = tmp_path / "s.json"
    # q1: gold scored best, two unscored; q2: gold unscored, two scored above, one unscored tie (c)
    sub.write_text(json.dumps({"format": "scores", "items": {"q1": {"a": 1, "b": 0}, "q2": {"a": 2, "b": 1}}}))
    want = {"pessimistic": ([1, 4], [0, 0]), "optimistic": ([1, 3], [0, 0]), "expected": ([1, 3], [0, 1])}
    for policy, (rank, ties) in want.items():
        table, problems, _ = score_items(sub, [s], benchmark="b", split="t", ties=policy, scoring=True)
        assert table.gold_rank.tolist() == rank and table.ties.tolist() == ties, policy
        assert [p.code for p in problems] == ["unscored-candidate"]
        assert problems[0].severity == "warning"


def test_rank_submissions_have_no_ties(tmp_path):
    s = ItemSet("g", ["q1"], ("a", "b", "c"), [frozenset({"b"})])
    sub = tmp_path / "r.json"
    sub.write_text(json.dumps([{"dialog_id": "q1", "lst_candidate_id": [{"candidate_id": "c", "rank": 1}, {"candidate_id": "b", "rank": 2}]}]))
    for policy in ("pessimistic", "optimistic", "expected"):
        table, problems, _ = score_items(sub, [s], benchmark="b", split="t", ties=policy, scoring=True)
        assert problems == [] and table.gold_rank.tolist() == [2] and table.ties.tolist() == [0]


# ---------------------------------------------------------------------------------------------------------------
# the signature says which tie policy a number was computed under, and only where one applied

SAMPLES = Path(__file__).resolve().parents[1] / "submissions" / "samples"
BABI = Path(__file__).resolve().parents[2] / "shared" / "data" / "babi-dialog"


def _babi_scores_from_ranks(ranks: list[dict], candidates: list[str]) -> dict:
    """The sample's rank run as scores: each listed candidate above the unlisted ones, which all tie at 0."""
    items = {}
    for item in ranks:
        listed = {c["candidate_id"]: 10.0 - c["rank"] for c in item["lst_candidate_id"]}
        items[item["dialog_id"]] = {c: listed.get(c, 0.0) for c in candidates}
    return {"format": "scores", "items": items}


def _fields(report) -> dict[str, str]:
    return dict(report.signature.fields)


def test_rank_runs_sign_no_tie_policy_and_score_runs_sign_theirs(tmp_path):
    # before: the sample's rank run was signed `ties:pessimistic`, a policy that never touched its numbers
    from dialeval.api import score
    from dialeval.benchmarks.babi import load_items

    data = SAMPLES / "babi"
    rank_file = data / "example-run.json"
    ranks = json.loads(rank_file.read_text())
    candidates = list(load_items(data, 1, "tst").candidates)
    scores_file = tmp_path / "scores.json"
    scores_file.write_text(json.dumps(_babi_scores_from_ranks(ranks, candidates)))

    by_rank = score(rank_file, benchmark="babi", data=data, split="tst")
    assert by_rank.valid and _fields(by_rank)["ties"] == "none"
    for policy in ("pessimistic", "expected"):
        by_score = score(scores_file, benchmark="babi", data=data, split="tst", ties=policy)
        assert by_score.valid and _fields(by_score)["ties"] == policy
        assert by_score.value("per-response-accuracy", "tst", "3") == by_rank.value("per-response-accuracy", "tst", "3")
        # the same numbers where the gold is listed: the two signatures differ in the ties field alone
        differ = {k for k in _fields(by_rank).keys() | _fields(by_score).keys()
                  if _fields(by_rank).get(k) != _fields(by_score).get(k)}
        assert differ == {"ties"}


@pytest.mark.realdata
@pytest.mark.skipif(not BABI.is_dir(), reason=f"real bAbI data not found at {BABI}")
def test_a_rank_run_on_the_real_release_signs_no_tie_policy(tmp_path):
    from dialeval.api import score
    from dialeval.benchmarks.babi import load_items

    s = load_items(BABI, 4, "tst")  # the smallest task: 3,498 turns
    run = [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": sorted(g)[0], "rank": 1}]}
           for i, g in zip(s.item_ids, s.gold, strict=True)]
    (tmp_path / "run.json").write_text(json.dumps(run))
    report = score(tmp_path / "run.json", benchmark="babi", data=BABI, split="tst", tasks=[4])
    assert report.valid and report.value("per-response-accuracy", "tst", "4") == 1.0
    fields = _fields(report)
    assert fields["ties"] == "none" and fields["data"].startswith("babi-dialog/tst#"), fields
