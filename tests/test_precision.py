"""Machine-readable numbers keep every digit, and one run's value reads the same from every command.

`score --json` writes each value at full precision; `compare --json`, `rank --json` and the site's board JSON used to
round theirs to 6 decimals, so a researcher matching a run's MRR across the two got 0.362635 against
0.36263492063492064. They also summed the units in another order (sorted by item id), which for a graded metric
(MRR) can change the last bit: the run below (a seeded shuffle of real DSTC6 tst1) is one where it does.
"""

from __future__ import annotations

import csv
import json
import random

import pytest
from conftest import REAL_CHALLENGE, REPO, ranking, run_cli

pytestmark = pytest.mark.realdata

SHUFFLE_SEEDS = (12, 2017)  # run A (seed 12): its MRR summed in item-id order differs from score's in the last bit


def _shuffled_run(tst1, seed: int) -> list[dict]:
    """Every tst1 item with its candidates in a seeded random order (tasks in order, items in file order)."""
    rng = random.Random(seed)
    out = []
    for f in sorted(tst1.glob("dialog-task*-tst1000.json")):
        for it in json.loads(f.read_text()):
            cands = [c["candidate_id"] for c in it["candidates"]]
            rng.shuffle(cands)
            out.append(ranking(it["dialog_id"], cands))
    return out


@pytest.fixture(scope="module")
def graded(real_tst1, tmp_path_factory):
    """Two shuffled runs of real tst1 as files, each's `score --json` micro values, and a registry holding both."""
    root = tmp_path_factory.mktemp("precision")
    runs = root / "runs"
    runs.mkdir()
    files, scored = [], []
    for i, seed in enumerate(SHUFFLE_SEEDS):
        f = runs / f"run{i}.json"
        f.write_text(json.dumps(_shuffled_run(real_tst1, seed)))
        (runs / f"run{i}.team.json").write_text(json.dumps(
            {"team": f"team {i}", "system": f"shuffle {seed}", "submitted_at": f"2026-01-0{i + 1}T00:00:00Z"}))
        files.append(f)
        res = run_cli("score", f, "--data", REAL_CHALLENGE, "--split", "tst1", "--json")
        assert res.returncode == 0, res.stderr
        scored.append({r["metric"]: r["value"] for r in json.loads(res.stdout)["results"]
                       if r["group"] == "all" and r["average"] == "micro"})
    res = run_cli("grade", runs, "--data", REAL_CHALLENGE, "--registry", root / "reg", "--board", "tst1",
                  "--now", "2026-02-01T00:00:00Z")
    assert res.returncode == 0, res.stdout + res.stderr
    return root, files, scored


def test_the_run_checked_is_one_whose_mrr_depends_on_the_summing_order(real_tst1, tmp_path):
    # the premise of the tests below: were the two orders' sums equal, equal numbers would prove nothing about order
    import numpy as np

    from dialeval.api import score
    from dialeval.metrics import get
    from dialeval.results import stats

    f = tmp_path / "run.json"
    f.write_text(json.dumps(_shuffled_run(real_tst1, SHUFFLE_SEEDS[0])))
    report = score(f, "tst1", data=REAL_CHALLENGE)
    in_key_order = stats.unit_values(report.table, get("mrr")).values
    assert float(np.mean(in_key_order)) != report.value("mrr", "tst1")


@pytest.mark.parametrize("metric", ["p@1", "mrr"])
def test_compare_json_gives_each_run_the_value_score_json_gives(graded, metric):
    root, files, scored = graded
    res = run_cli("compare", *files, "--data", REAL_CHALLENGE, "--split", "tst1", "--metric", metric, "--json")
    assert res.returncode == 0, res.stderr
    (r,) = json.loads(res.stdout)["results"]
    assert (r["a"], r["b"]) == (scored[0][metric], scored[1][metric])  # equal as floats: every digit
    assert (r["a_interval"]["estimate"], r["b_interval"]["estimate"]) == (r["a"], r["b"])
    # the interval and the difference keep their digits too (they were cut to 6 decimals)
    assert any(len(repr(x).split(".")[1]) > 6 for x in (r["diff"], r["a_interval"]["low"], r["a_interval"]["high"],
                                                        r["b_interval"]["low"], r["b_interval"]["high"]))


@pytest.mark.parametrize("metric", ["p@1", "mrr"])
def test_rank_json_gives_each_run_the_value_score_json_gives(graded, metric):
    root, files, scored = graded
    res = run_cli("rank", "--registry", root / "reg", "--metric", metric, "--all-runs", "--json")
    assert res.returncode == 0, res.stderr
    got = {r["team"]: r["score"] for r in json.loads(res.stdout)["runs"]}
    assert got == {"team 0": scored[0][metric], "team 1": scored[1][metric]}


def test_board_json_and_csv_give_the_value_score_json_gives(graded):
    root, files, scored = graded
    site = root / "site"
    res = run_cli("leaderboard", "build", "--registry", root / "reg", "--out", site, "--all-runs")
    assert res.returncode == 0, res.stderr
    board = json.loads((site / "board-tst1.json").read_text())
    ranked = {r["team"]: r["score"] for r in board["ranking"]}  # the board ranks by P@1, DSTC6's first metric
    assert ranked == {"team 0": scored[0]["p@1"], "team 1": scored[1]["p@1"]}
    mrr = {(r["team"]): r["value"] for r in board["records"]
           if r["metric"] == "mrr" and r["group"] == "all" and r["average"] == "micro"}
    assert mrr == {"team 0": scored[0]["mrr"], "team 1": scored[1]["mrr"]}
    with open(site / "board-tst1.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["metric"] == "mrr" and r["group"] == "all"
                and r["average"] == "micro"]
    assert {r["team"]: float(r["value"]) for r in rows} == mrr


def test_reported_macro_averages_keep_every_digit(tmp_path):
    # the DSTC6 overview's published numbers: a team's mean over five tasks was stored rounded to 6 decimals
    reported = REPO / "submissions" / "reported" / "dstc6-2017.csv"
    res = run_cli("registry", "import", reported, "--registry", tmp_path / "reg", "--board", "dstc6-2017")
    assert res.returncode == 0, res.stderr
    res = run_cli("registry", "export", "--registry", tmp_path / "reg", "--out", tmp_path / "runs.jsonl")
    assert res.returncode == 0, res.stderr
    published: dict[tuple[str, str, str], float] = {}
    with open(reported, newline="") as fh:
        for r in csv.DictReader(fh):  # a row repeated in the overview's table counts once, as the import takes it
            published.setdefault((r["team"], r["split"], r["task"]), float(r["p@2"]))
    checked = 0
    for line in (tmp_path / "runs.jsonl").read_text().splitlines():
        run = json.loads(line)
        for rec in run["records"]:
            if rec["average"] == "macro" and rec["split"] != "all" and rec["metric"] == "p@2":
                vs = [v for (team, split, _), v in published.items() if (team, split) == (run["team"], rec["split"])]
                assert rec["value"] == sum(vs) / len(vs)
                checked += 1
    assert checked
    assert any(len(repr(rec["value"]).split(".")[1]) > 6 for line in (tmp_path / "runs.jsonl").read_text().splitlines()
               for rec in json.loads(line)["records"] if rec["average"] == "macro")
