"""``--ties input-order`` on every score-based form (JSON scores, .npy, .csv; narrow and wide rows; one gold and
several): tied candidates keep the data's candidate order, as a stable sort does (DAM's scorer)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialeval.benchmarks.items import ItemSet, score_items
from dialeval.formats.scores import rank_in_vector


def _write(tmp_path, form: str, ids, cands, rows) -> object:
    if form == "npy":
        np.save(tmp_path / "s.npy", np.array(rows, float))
        return tmp_path / "s.npy"
    if form == "csv":
        (tmp_path / "s.csv").write_text("\n".join(",".join(repr(float(x)) for x in r) for r in rows) + "\n")
        return tmp_path / "s.csv"
    items = {i: dict(zip(cands, map(float, r), strict=True)) for i, r in zip(ids, rows, strict=True)}
    (tmp_path / "s.json").write_text(json.dumps({"format": "scores", "items": items}))
    return tmp_path / "s.json"


@pytest.mark.parametrize("form", ["npy", "csv", "json"])
@pytest.mark.parametrize("width", [10, 80])  # 80: the wide-row path of the matrix ranker and of JSON scores
def test_the_gold_ranks_after_the_tied_candidates_before_it_only(tmp_path, form, width):
    cands = tuple(f"c{j}" for j in range(width))
    ids = ["q1", "q2", "q3"]
    # q1: gold c3 tied with c1 (before) and c5 (after), c0 above -> 1 above + 1 tied before = rank 3
    # q2: gold c0 tied with every candidate -> first in order: rank 1
    # q3: gold c9 tied with everything -> nine candidates before it: rank 10
    rows = [[1.0, 0.5, 0.0, 0.5, 0.0, 0.5] + [0.0] * (width - 6), [0.2] * width, [0.7] * width]
    gold = [frozenset({"c3"}), frozenset({"c0"}), frozenset({"c9"})]
    s = ItemSet("g", ids, cands, gold)
    sub = _write(tmp_path, form, ids, cands, rows)
    want = {"input-order": [3, 1, 10], "pessimistic": [4, width, width], "optimistic": [2, 1, 1]}
    for policy, ranks in want.items():
        table, problems, _ = score_items(sub, [s], benchmark="b", split="t", ties=policy, scoring=True, nested=(2,))
        assert [p for p in problems if p.severity == "error"] == []
        assert table.gold_rank.tolist() == ranks, policy
        assert table.ties.tolist() == [0, 0, 0]
    table, _, _ = score_items(sub, [s], benchmark="b", split="t", ties="input-order", scoring=True, nested=(2,))
    assert table.nested[2][0].tolist() == [0, 1, 0]  # among the first two: q1, q3's gold is not there; q2 first


def test_several_golds_the_first_of_the_best_tied_block_counts():
    v = np.array([3.0, 5.0, 5.0, 5.0, 1.0])
    assert rank_in_vector(v, [2, 3], "input-order") == (2, 0)  # column 1 (not a gold) comes first
    assert rank_in_vector(v, [1, 3], "input-order") == (1, 0)
    assert rank_in_vector(v, [0, 4], "input-order") == (4, 0)  # the best gold scores 3.0: three above


def test_unscored_candidates_tie_below_in_the_data_order(tmp_path):
    s = ItemSet("g", ["q1"], ("a", "b", "c", "d"), [frozenset({"c"})])
    sub = tmp_path / "s.json"
    sub.write_text(json.dumps({"format": "scores", "items": {"q1": {"d": 1.0}}}))  # a, b, c unscored: a, b first
    table, _, _ = score_items(sub, [s], benchmark="b", split="t", ties="input-order", scoring=True)
    assert table.gold_rank.tolist() == [4]


def test_the_command_line_takes_input_order_for_ubuntu(tmp_path, cli):
    from dialeval.simulator.ubuntu import write_fixture

    write_fixture(tmp_path / "u", seed=1, n_train=2, n_valid=2, n_test=3)
    np.save(tmp_path / "s.npy", np.full((3, 10), 0.5))  # all tied: the ground truth (column 0) comes first
    r = cli("score", tmp_path / "s.npy", "--benchmark", "ubuntu", "--data", tmp_path / "u", "--split", "test",
            "--ties", "input-order", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "ties:input-order" in doc["signature"]
    assert {x["metric"]: x["value"] for x in doc["results"]}["r10@1"] == 1.0


def test_protocols_prints_every_tie_policy_side_by_side(tmp_path, cli):
    from dialeval.simulator.ubuntu import write_fixture

    write_fixture(tmp_path / "u", seed=1, n_train=2, n_valid=2, n_test=3)
    np.save(tmp_path / "s.npy", np.full((3, 10), 0.5))
    r = cli("score", tmp_path / "s.npy", "--benchmark", "ubuntu", "--data", tmp_path / "u", "--split", "test",
            "--protocols")
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[-6]: [float(x) for x in ln.split()[-5:-1]] for ln in r.stdout.splitlines()
            if ln.split() and ln.split()[-6:-5] and ln.split()[-6] in ("pessimistic", "optimistic", "expected", "input-order")}
    # R2@1, R10@1, R10@2, R10@5 with the ground truth tied with every distractor
    assert rows == {"pessimistic": [0, 0, 0, 0], "optimistic": [1, 1, 1, 1], "expected": [0.5, 0.1, 0.2, 0.5],
                    "input-order": [1, 1, 1, 1]}
