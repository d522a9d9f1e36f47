"""`score --ci`: each number's percentile bootstrap interval, seeded and signed, on real DSTC6 tst1.

Runs are built in tmp_path from the real test files and keys (a seeded shuffle of every item's candidates; the
gold first for a run whose every metric is 1 on every item); nothing is copied into the repo.
"""

from __future__ import annotations

import json
import random

import pytest
from conftest import REAL_CHALLENGE, ranking, run_cli

from dialeval.core.schemacheck import schema_problems

pytestmark = pytest.mark.realdata


def _run(tst1, order) -> list[dict]:
    """Every tst1 item, its candidates in ``order(gold, candidate ids)``."""
    out = []
    for f in sorted(tst1.glob("dialog-task*-tst1000.json")):
        stem = f.name[: -len(".json")]
        gold = {it["dialog_id"]: next(e["candidate_id"] for e in it["lst_candidate_id"] if e["rank"] == 1)
                for it in json.loads((tst1 / f"{stem}.answers.json").read_text())}
        for it in json.loads(f.read_text()):
            out.append(ranking(it["dialog_id"], order(gold[it["dialog_id"]], [c["candidate_id"] for c in it["candidates"]])))
    return out


@pytest.fixture(scope="module")
def runs(real_tst1, tmp_path_factory):
    root = tmp_path_factory.mktemp("ci")
    rng = random.Random(2017)

    def shuffled(gold, cands):
        cands = list(cands)
        rng.shuffle(cands)
        return cands

    shuffle = root / "shuffled.json"
    shuffle.write_text(json.dumps(_run(real_tst1, shuffled)))
    perfect = root / "perfect.json"
    perfect.write_text(json.dumps(_run(real_tst1, lambda gold, cands: [gold] + [c for c in cands if c != gold])))
    return shuffle, perfect


def _score(*args):
    res = run_cli("score", *args, "--data", REAL_CHALLENGE, "--split", "tst1")
    assert res.returncode == 0, res.stderr
    return res


def test_the_same_seed_gives_byte_identical_intervals_and_another_seed_others(runs):
    shuffled, _ = runs
    first = _score(shuffled, "--ci", "--seed", "7", "--json").stdout
    assert _score(shuffled, "--ci", "--seed", "7", "--json").stdout == first
    assert _score(shuffled, "--ci", "--seed", "7", "--csv").stdout == _score(shuffled, "--ci", "--seed", "7",
                                                                             "--csv").stdout
    other = json.loads(_score(shuffled, "--ci", "--seed", "8", "--json").stdout)["results"]
    mine = json.loads(first)["results"]
    assert [r["value"] for r in other] == [r["value"] for r in mine]  # the numbers never move, their intervals do
    assert [(r["ci_low"], r["ci_high"]) for r in other] != [(r["ci_low"], r["ci_high"]) for r in mine]


def test_every_interval_holds_its_value_and_the_settings_are_signed(runs):
    shuffled, _ = runs
    report = json.loads(_score(shuffled, "--ci", "--ci-level", "0.9", "--ci-resamples", "500", "--json").stdout)
    assert schema_problems(report, "score-report") == []
    assert report["ci"] == {"method": "bootstrap-percentile", "level": 0.9, "resamples": 500, "seed": 12345}
    assert "|ci:bootstrap-percentile|bs:500|seed:12345|conf:90|" in report["signature"]
    with_ci = [r for r in report["results"] if r["average"] != "macro"]
    assert len(with_ci) == 4 * 6  # four metrics: five tasks and their micro aggregate
    for r in with_ci:
        assert r["ci_low"] < r["value"] < r["ci_high"], r
        assert r["signature"].endswith("|unit:item|v:" + report["dialeval_version"])
        assert "|bs:500|seed:12345|conf:90|" in r["signature"]
    for r in report["results"]:
        if r["average"] == "macro":  # a mean of the tasks' values: no interval over items
            assert (r["ci_low"], r["ci_high"]) == (None, None)
    # a 90 % interval over 5,000 items is about +-1.6 standard errors wide
    micro = next(r for r in with_ci if r["metric"] == "p@1" and r["group"] == "all")
    se = (micro["value"] * (1 - micro["value"]) / micro["n"]) ** 0.5
    assert micro["ci_high"] - micro["ci_low"] == pytest.approx(2 * 1.645 * se, rel=0.15)


def test_score_ci_is_the_interval_compare_gives_the_same_run(runs, tmp_path):
    # one stats layer: the micro interval `score --ci` prints is `compare`'s interval of that run, bit for bit
    shuffled, perfect = runs
    report = json.loads(_score(shuffled, "--ci", "--json").stdout)
    res = run_cli("compare", shuffled, perfect, "--data", REAL_CHALLENGE, "--split", "tst1", "--json")
    assert res.returncode == 0, res.stderr
    for r in json.loads(res.stdout)["results"]:
        micro = next(x for x in report["results"] if x["metric"] == r["metric"] and x["average"] == "micro")
        assert (micro["ci_low"], micro["ci_high"]) == (r["a_interval"]["low"], r["a_interval"]["high"])


def test_a_metric_equal_on_every_item_has_a_zero_width_interval(runs):
    _, perfect = runs
    report = json.loads(_score(perfect, "--ci", "--json").stdout)
    for r in report["results"]:
        if r["average"] != "macro":
            assert r["ci_low"] == r["value"] == r["ci_high"] == 1.0, r
    table = _score(perfect, "--ci").stdout
    assert "1.0000 [1.0000, 1.0000]" in table


@pytest.mark.parametrize(("args", "says"), [
    (["--ci", "--ci-resamples", "5"], "--ci-resamples"),
    (["--ci", "--ci-level", "1.5"], "--ci-level"),
    (["--ci", "--ci-level", "0"], "--ci-level"),
    (["--ci", "--ci-level", "0.9512345"], "--ci-level 0.9512345: give at most 5 decimals"),
    (["--ci", "--seed", "-1"], "--seed"),
    (["--ci", "--seed", "x"], "--seed"),
    (["--seed", "3"], "--seed only changes the intervals of --ci, which is not given: add --ci"),
    (["--ci-level", "0.9", "--ci-resamples", "200"], "--ci-level and --ci-resamples only change"),
    (["--ci", "--print-as", "dstc6-official"], "give --ci or --print-as dstc6-official, not both"),
])
def test_bad_ci_options_exit_2_with_one_line(runs, args, says):
    shuffled, _ = runs
    res = run_cli("score", shuffled, "--data", REAL_CHALLENGE, "--split", "tst1", *args)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialeval: error: ") and says in lines[0], lines
