"""Bands that mean what they say, and signatures of `rank` / `compare` (issue 20, items 5, 7 and 8's `rank` edges).

A board of synthetic runs is written straight into a registry (no grading): each run is a rank table on two
splits of 2,500 items each (gold rank 1 = right, 2 = wrong: P@1 is 0/1 per item, every item its own
conversation) with score records whose signatures carry the data identity, as graded runs' do.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval.core.ranks import RankTable
from dialeval.leaderboard.registry import Registry
from dialeval.leaderboard.scoring import Graded
from dialeval.results import stats

REPO = Path(__file__).resolve().parents[1]
REPORTED = REPO / "submissions" / "reported" / "dstc6-2017.csv"
N = 5000
SPLITS = {"tst1": "tst1#0000aaaa", "tst2": "tst2#0000bbbb"}
DATA_ALL = "all#0000cccc"
OPTIONS = "tasks:1-5|mode:strict|nc:all|gold:id"


def chain(n=N, accs=(0.62, 0.60, 0.58, 0.56), seed=2026):
    """Independent 0/1 runs with exactly these accuracies (2 points apart), right answers placed at random."""
    rng = np.random.default_rng(seed)
    out = []
    for a in accs:
        v = np.zeros(n)
        v[rng.choice(n, int(round(a * n)), replace=False)] = 1.0
        out.append(v)
    return np.stack(out)


def _sig(split, metric, avg, group="all"):
    data = DATA_ALL if split == "all" else SPLITS[split]
    return f"dstc6|data:{data}|{OPTIONS}|split:{split}|task:{group}|metric:{metric}|avg:{avg}|v:0.1.0"


def _graded(values: np.ndarray) -> Graded:
    half = len(values) // 2
    tables, records = [], []
    for k, split in enumerate(SPLITS):
        part = values[k * half:(k + 1) * half]
        ids = [f"{split}-{i:05d}" for i in range(len(part))]
        tables.append(RankTable.build(benchmark="dstc6", split=split, group="1", item_ids=ids,
                                      gold_rank=np.where(part == 1, 1, 2), n_candidates=10))
        for avg in ("micro", "macro"):
            records.append({"split": split, "group": "all", "subset": None, "metric": "p@1", "average": avg,
                            "value": float(part.mean()), "n": len(part), "signature": _sig(split, "p@1", avg)})
    for avg in ("micro", "macro"):
        records.append({"split": "all", "group": "all", "subset": None, "metric": "p@1", "average": avg,
                        "value": float(values.mean()), "n": len(values), "signature": _sig("all", "p@1", avg)})
    return Graded(True, [], records, RankTable.concat(tables), "dstc6", list(SPLITS), ["1"], ["p@1"], "0000cccc",
                  None)


@pytest.fixture(scope="module")
def chain_registry(tmp_path_factory):
    path = tmp_path_factory.mktemp("chain") / "registry"
    with Registry(path) as reg:
        for i, v in enumerate(chain()):
            reg.record_run(team={"team": f"Team {'ABCD'[i]}", "system": "s"}, graded=_graded(v), grading_key=None,
                           kind="submission", board="chain", submitted_at=f"2017-09-0{i + 1}T00:00:00Z",
                           source_name=None, sha256=None)
    return path


def cli(*args):
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


# ---- the statistics ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("test", ["auto", "ar"])
def test_a_chain_of_small_steps_does_not_make_one_band(test):
    v = chain()
    assert v.mean(axis=1).tolist() == pytest.approx([0.62, 0.60, 0.58, 0.56])
    b = stats.bands(v, metric="p@1", test=test)  # the default rule: pairwise
    assert b.rule == "pairwise" and b.test == ("mcnemar" if test == "auto" else "ar")
    assert b.order == [0, 1, 2, 3]
    assert b.band[0] != b.band[-1]  # 0.62 and 0.56 differ (McNemar p ~ 1e-9): never one band
    assert b.band == [1, 1, 2, 2]
    assert b.p_adjusted[0, 3] < 0.005 and b.p_adjusted[0, 1] > 0.05
    # the DSTC6 overview's neighbour rule chains the three non-significant steps into one band (kept by name)
    n = stats.bands(v, metric="p@1", test=test, rule="neighbour")
    assert n.band == [1, 1, 1, 1] and "|bands:neighbour|" in n.signature and "|bands:pairwise|" in b.signature


def test_no_two_runs_of_one_band_differ_significantly():
    rng = np.random.default_rng(7)
    for trial in range(20):
        k = int(rng.integers(3, 9))
        accs = np.sort(rng.uniform(0.4, 0.7, size=k))[::-1]
        v = chain(2000, tuple(accs), seed=trial)
        b = stats.bands(v, metric="p@1")
        for x, i in enumerate(b.order):
            for y in range(x + 1, len(b.order)):
                j = b.order[y]
                if b.band[x] == b.band[y]:
                    assert b.p_adjusted[i, j] >= b.alpha
        # each band after the first starts at a run that differs from a run of the band above
        for x, why in enumerate(b.differs_from):
            if x and b.band[x] != b.band[x - 1]:
                assert why is not None and b.p_adjusted[why, b.order[x]] < b.alpha
        assert b.band == sorted(b.band)


def test_the_neighbour_rule_reproduces_the_earlier_randomization_p_values():
    v = chain()
    b = stats.bands(v, metric="p@1", rule="neighbour", test="ar")
    assert b.resamples == stats.band_resamples(4) == 1200
    raw = stats.neighbour_randomization(v, None, 1200)
    assert [b.p_adjusted[i, i + 1] for i in range(3)] == pytest.approx(stats.holm(raw).tolist())
    # the numbers dialeval printed before the pairwise rule (same seed, same random stream)
    assert [round(float(b.p_adjusted[i, i + 1]), 4) for i in range(3)] == [0.1424] * 3


def test_mcnemar_needs_0_1_values_on_independent_items():
    v = chain(400)
    assert stats.exact_applies(v)
    assert not stats.exact_applies(v, np.repeat(np.arange(200), 2))  # two turns per conversation
    assert not stats.exact_applies(v * 0.5)  # graded values (MRR and the like)
    with pytest.raises(ValueError, match="0/1 values"):
        stats.bands(v * 0.5, test="mcnemar")
    assert stats.bands(v * 0.5).test == "ar"


# ---- rank on a board --------------------------------------------------------------------------------------------
def test_rank_separates_the_ends_of_the_chain_and_signs_with_benchmark_and_data(chain_registry):
    r = cli("rank", "--registry", chain_registry, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    bands = [row["band"] for row in out["runs"]]
    assert [row["team"] for row in out["runs"]] == ["Team A", "Team B", "Team C", "Team D"]
    assert bands[0] != bands[-1] and bands == [1, 1, 2, 2]
    assert out["runs"][2]["differs_from"] == 1
    sig = out["signature"]
    assert sig.startswith(f"dstc6|data:{DATA_ALL}|{OPTIONS}|split:all|metric:p@1|bands:pairwise|test:mcnemar|")
    assert sig.endswith("|v:0.1.0")
    # one split, the neighbour rule by name: the split's own data identity and scope, the rule in the signature
    r = cli("rank", "--registry", chain_registry, "--split", "tst1", "--bands", "neighbour")
    assert r.returncode == 0, r.stderr
    assert f"signature: dstc6|data:{SPLITS['tst1']}|{OPTIONS}|split:tst1|metric:p@1|bands:neighbour|" in r.stdout
    assert "bands: neighbour" in r.stdout
    text = cli("rank", "--registry", chain_registry).stdout
    assert "new band: differs from #1" in text and "|bands:pairwise|test:mcnemar|" in text


def test_rank_keeps_its_columns_for_long_names_and_baseline_badges(tmp_path):
    # before: "team / system" was cut to 39 characters and the badge added after it, so a baseline with a long
    # name pushed its numbers right ("dialeval baselines / nearest-neighbor (baseline)   0.6340") and a team's
    # system was cut mid-word ("seq2s")
    path = tmp_path / "registry"
    names = [("dialeval baselines", "nearest-neighbor", "baseline"), ("Team Gamma & friends", "seq2seq", "submission"),
             ("Team A", "s", "submission"), ("T" * 80, "s", "submission")]
    with Registry(path) as reg:
        for i, (v, (team, system, kind)) in enumerate(zip(chain(), names)):
            reg.record_run(team={"team": team, "system": system}, graded=_graded(v), grading_key=None, kind=kind,
                           board="chain", submitted_at=f"2017-09-0{i + 1}T00:00:00Z", source_name=None, sha256=None)
    r = cli("rank", "--registry", path, "--test", "mcnemar")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = lines[1]
    rows = [x for x in lines if x[:3].strip().isdigit()]
    assert len(rows) == 4
    end = head.index("p@1") + len("p@1")  # the metric's column ends under its heading on every row
    assert all(re.match(r"\d\.\d{4}$", row[end - 6:end]) for row in rows), r.stdout
    assert any("dialeval baselines / nearest-neighbor (baseline) " in row for row in rows)
    assert any("Team Gamma & friends / seq2seq " in row for row in rows)
    assert all(len(row[:end]) == len(head[:end]) for row in rows)


def test_a_floor_p_value_is_printed_as_a_bound(chain_registry):
    b = stats.bands(chain(), metric="p@1", test="ar", resamples=2000)
    # 0.62 vs 0.56: no resample as extreme (raw p = 1/2001, the floor); Holm over 6 tests: 6/2001 = 0.0029985
    assert b.p_raw[0, 3] == pytest.approx(1 / 2001) and b.p_bound[0, 3]
    assert b.p_text(0, 3) == "< 0.0030"
    assert not b.p_bound[0, 1] and b.p_text(0, 1) == f"{b.p_adjusted[0, 1]:.4f}"
    # on the command line, with the default resamples for 6 tests (2,400): the neighbour rule's floors
    r = cli("rank", "--registry", chain_registry, "--test", "ar", "--bands", "neighbour", "--split", "tst1",
            "--json")
    assert r.returncode == 0, r.stderr
    assert "|test:ar|ar:1200|" in json.loads(r.stdout)["signature"]


def test_rank_help_states_the_rule():
    r = cli("rank", "--help")
    assert "no two runs in one band differ significantly" in " ".join(r.stdout.split())
    assert "--bands [pairwise|neighbour]" in r.stdout


# ---- compare -----------------------------------------------------------------------------------------------------
def test_compare_signatures_name_data_and_split_scope(chain_registry):
    text = cli("compare", "1", "4", "--registry", chain_registry).stdout
    one = json.loads(cli("compare", "1", "4", "--registry", chain_registry, "--split", "tst1", "--json").stdout)
    s_all = next(x for x in text.splitlines() if x.startswith("signature: "))[len("signature: "):]
    s_one = one["results"][0]["signature"]
    assert s_all != s_one
    assert s_all.startswith(f"dstc6|data:{DATA_ALL}|{OPTIONS}|split:all|metric:p@1|")
    assert s_one.startswith(f"dstc6|data:{SPLITS['tst1']}|{OPTIONS}|split:tst1|metric:p@1|")
    assert "|exact:mcnemar|" in s_all and "|exact:mcnemar|" in s_one
    res = one["results"][0]
    assert res["exact_test"] == "mcnemar" and res["p_exact"] < 1e-3
    # the randomization p-value is at its floor (2/(R+1) two-sided): shown as a bound, never as a number
    assert res["p_randomization_at_floor"] and res["p_randomization_text"] == "< 0.0020"
    p1 = next(x for x in text.splitlines() if x.startswith("p@1 "))
    assert "< 0.0020" in p1 and "< 0.0010" in p1


def test_compare_refuses_runs_scored_on_different_data(tmp_path):
    from dialeval.core.errors import UsageError
    from dialeval.leaderboard.bands import compare_runs

    v = chain(400)
    ga, gb = _graded(v[0]), _graded(v[1])
    for rec in gb.records:
        rec["signature"] = rec["signature"].replace("tst1#0000aaaa", "tst1#ffffffff")
    with pytest.raises(UsageError, match="different data for tst1"):
        compare_runs(ga.table, gb.table, ["p@1"], scope="tst1", records_a=ga.records, records_b=gb.records)


# ---- a board of reported results only ----------------------------------------------------------------------------
def test_rank_on_a_reported_only_board_lists_the_rows_unbanded(tmp_path):
    reg = tmp_path / "reg"
    r = cli("registry", "import", REPORTED, "--registry", reg, "--board", "dstc6-2017")
    assert r.returncode == 0, r.stderr
    r = cli("rank", "--registry", reg)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "reported results only, not banded" in lines[0]
    assert "signature:" not in r.stdout  # no empty signature line
    assert sum(1 for x in lines if x.strip()[:1].isdigit()) == 10  # the ten reported teams
    assert any(x.startswith("note: reported results only") for x in lines)
    out = json.loads(cli("rank", "--registry", reg, "--json").stdout)
    assert out["reported_only"] and all(row["band"] is None for row in out["runs"])
    scores = [row["score"] for row in out["runs"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 10
    # the board page's header names no empty scope ("on –")
    site = tmp_path / "site"
    assert cli("leaderboard", "build", "--registry", reg, "--out", site).returncode == 0
    page = (site / "board-dstc6-2017.html").read_text()
    assert "on –" not in page and "reported results only" in page


def test_a_site_title_with_control_characters_is_refused_before_anything_is_written(tmp_path):
    """--title is every page's heading: an escape sequence or bidi override in it is refused in one line (exit 2),
    shown escaped, and no site folder is made; plain non-ASCII text is accepted."""
    reg = tmp_path / "reg"
    assert cli("registry", "import", REPORTED, "--registry", reg, "--board", "dstc6-2017").returncode == 0
    for bad in ("Board\x1b[31m", "Board \u202eevil"):
        r = cli("leaderboard", "build", "--registry", reg, "--out", tmp_path / "site", "--title", bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "--title" in r.stderr and "\x1b" not in r.stderr and "\u202e" not in r.stderr
        assert not (tmp_path / "site").exists()
    r = cli("leaderboard", "build", "--registry", reg, "--out", tmp_path / "site", "--title", "Défi · 2017")
    assert r.returncode == 0, r.stderr
    assert "Défi · 2017" in (tmp_path / "site" / "index.html").read_text()


def test_compare_on_a_text_metric_counts_the_items_left_out(tiny, tmp_path, chain_registry):
    """compare scores runs given as files with the embedding metrics asked for (as `score --metrics` does): an item
    whose top-1 or gold text has no word with a vector is left out by the paper preset (empty:skip) in that run,
    and compare drops it from both sides and says how many; registry runs keep no texts (one usage line)."""
    from conftest import ranking, write_json

    items = tiny.all_items()
    runs = {"a": [], "b": []}
    texts = {"a": [], "b": []}
    gold = []
    for k, it in enumerate(items):
        text = {c.candidate_id: c.utterance for c in it.candidates}
        ids = tiny.gold_first(it.dialog_id)
        gold.append(text[tiny.gold[it.dialog_id]])
        for name, order in (("a", ids), ("b", ids[1:] + ids[:1] if k % 2 else ids)):
            runs[name].append(ranking(it.dialog_id, order))
            texts[name].append(text[order[0]])
    # vectors for the last word of the first half's gold texts only: other texts have no word with one
    known = sorted({t.split()[-1] for t in gold[: len(gold) // 2]})

    def empty(t):
        return not any(w in known for w in t.split())

    left = sum(empty(g) or empty(a) or empty(b) for g, a, b in zip(gold, texts["a"], texts["b"]))
    assert 0 < left < len(items)
    rng = np.random.default_rng(7)
    vec = tmp_path / "vectors.txt"
    vec.write_text(f"{len(known)} 3\n" + "".join(f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=3)) + "\n"
                                                for w in known), encoding="utf-8")
    a = write_json(tmp_path / "a.json", runs["a"])
    b = write_json(tmp_path / "b.json", runs["b"])
    common = ["--data", tiny.root, "--split", "tst1", "--metric", "p@1,embedding-average", "--vectors", vec,
              "--resamples", "200"]
    r = cli("compare", a, b, *common)
    assert r.returncode == 0, r.stderr
    assert (f"embedding-average: {left} item(s) of both runs left out by the metric in either run (an empty text "
            f"under empty:skip) are not compared: units {len(items) - left}") in r.stdout
    assert "p@1:" not in r.stdout  # p@1 leaves nothing out
    res = {x["metric"]: x for x in json.loads(cli("compare", a, b, *common, "--json").stdout)["results"]}
    assert res["embedding-average"]["left_out"] == left and res["p@1"]["left_out"] == 0
    assert res["p@1"]["n"] == len(items) and res["embedding-average"]["n"] == len(items) - left
    r = cli("compare", "1", "2", "--registry", chain_registry, "--metric", "embedding-average")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "the registry keeps no response texts" in r.stderr
