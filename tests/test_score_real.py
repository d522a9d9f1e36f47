"""Scoring the real DSTC6 tst1 (5 test files x 1000 items + answer keys); skips without ../shared/data.

Submissions are built in tmp_path from the real keys and test files; nothing is copied into the repo.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import tarfile

import pytest
from conftest import REAL_CHALLENGE, ranking, run_cli, write_json

from dialeval import __version__
from dialeval.api import score
from dialeval.core.errors import UsageError
from dialeval.core.schemacheck import schema_problems
from dialeval.core.signature import Signature
from dialeval.results.report import RECORD_FIELDS

pytestmark = pytest.mark.realdata
METRICS = ("p@1", "p@2", "p@5", "mrr")


class Real:
    """The real tst1: per task, test-file stem, candidate ids per dialog (file order) and gold ids."""

    def __init__(self, tst1):
        self.dir = tst1
        self.stems: dict[int, str] = {}
        self.order: dict[int, list[str]] = {}
        self.cands: dict[str, list[str]] = {}
        self.gold: dict[str, str] = {}
        for f in sorted(tst1.glob("dialog-task*-tst1000.json")):
            task = int(f.name[len("dialog-task")])
            self.stems[task] = f.name[: -len(".json")]
            items = json.loads(f.read_text())
            self.order[task] = [it["dialog_id"] for it in items]
            for it in items:
                self.cands[it["dialog_id"]] = [c["candidate_id"] for c in it["candidates"]]
            for it in json.loads((tst1 / f"{self.stems[task]}.answers.json").read_text()):
                self.gold[it["dialog_id"]] = next(e["candidate_id"] for e in it["lst_candidate_id"] if e["rank"] == 1)

    def submission(self, order_fn, tasks=None) -> list[dict]:
        """One ranking per item of ``tasks``: ``order_fn(gold, candidate ids) -> ranked ids``."""
        return [ranking(d, order_fn(self.gold[d], self.cands[d])) for t in (tasks or sorted(self.order))
                for d in self.order[t]]


@pytest.fixture(scope="module")
def real(real_tst1) -> Real:
    return Real(real_tst1)


def gold_first(gold, cands):
    return [gold] + [c for c in cands if c != gold]


def gold_second(gold, cands):
    rest = [c for c in cands if c != gold]
    return rest[:1] + [gold] + rest[1:]


def seeded_shuffle(seed=2017):
    rng = random.Random(seed)

    def order(gold, cands):
        c = list(cands)
        rng.shuffle(c)
        return c

    return order


def _score(sub, **kw):
    kw.setdefault("split", "tst1")
    return score(sub, challenge=REAL_CHALLENGE, **kw)


def _values(report):
    return {(r["split"], r["group"], r["metric"], r["average"]): r["value"] for r in report.records}


def test_keys_as_submission_score_one_everywhere(real, tmp_path):
    report = _score(write_json(tmp_path / "gold.json", real.submission(gold_first)))
    assert report.valid and report.problems == []
    assert report.groups == ["1", "2", "3", "4", "5"]
    values = _values(report)
    assert len(values) == 4 * (5 + 2)  # 4 metrics x (5 files + micro + macro)
    assert set(values.values()) == {1.0}
    assert all(r["n"] == (5000 if r["group"] == "all" else 1000) for r in report.records)
    assert report.ranks.gold_rank.tolist() == [1] * 5000


def test_the_answer_key_files_themselves_score_one(real, tmp_path):
    # the keys are result files with one rank-1 entry per item: a partial top-1 ranking is valid
    d = tmp_path / "sub" / "tst1"
    for stem in real.stems.values():
        write_json(d / f"{stem}.answers.json", json.loads((real.dir / f"{stem}.answers.json").read_text()))
    assert set(_values(_score(tmp_path / "sub")).values()) == {1.0}


def test_gold_at_rank_two(real, tmp_path):
    report = _score(write_json(tmp_path / "second.json", real.submission(gold_second)))
    assert report.valid
    for task in [1, 2, 3, 4, 5, "all"]:
        got = {m: report.value(m, "tst1", task) for m in METRICS}
        assert got == {"p@1": 0.0, "p@2": 1.0, "p@5": 1.0, "mrr": 0.5}
    assert report.value("mrr", "tst1", "all", "macro") == 0.5


def test_seeded_shuffle_near_chance(real, tmp_path):
    sub = real.submission(seeded_shuffle())
    report = _score(write_json(tmp_path / "shuffle.json", sub))
    # exact: recompute every gold's rank here
    ranks = [next(e["rank"] for e in it["lst_candidate_id"] if e["candidate_id"] == real.gold[it["dialog_id"]])
             for it in sub]
    for k in (1, 2, 5):
        assert report.value(f"p@{k}", "tst1", "all") == pytest.approx(sum(r <= k for r in ranks) / 5000, abs=1e-6)
    assert report.value("mrr", "tst1", "all") == pytest.approx(sum(1 / r for r in ranks) / 5000, abs=1e-6)
    # and near chance with 7-10 candidates per item (mostly 7): ~1/7, 2/7, 5/7
    assert report.value("p@1") == pytest.approx(0.14, abs=0.02)
    assert report.value("p@2") == pytest.approx(0.28, abs=0.03)
    assert report.value("p@5") == pytest.approx(0.70, abs=0.03)
    dist = report.rank_distribution()
    assert sum(d["count"] for d in dist) == 5000 and all(d["rank"] != "unranked" or d["count"] == 0 for d in dist)


@pytest.fixture(scope="module")
def shuffle_sub(real, tmp_path_factory):
    d = tmp_path_factory.mktemp("shuffle")
    return write_json(d / "shuffle.json", real.submission(seeded_shuffle(7)))


def test_task_subset_cli(real, shuffle_sub):
    r = run_cli("score", shuffle_sub, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--task", "3", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["groups"] == ["3"]
    assert {rec["group"] for rec in rep["results"]} == {"3", "all"}
    assert all(rec["n"] == 1000 for rec in rep["results"])
    full = _score(shuffle_sub)
    for rec in rep["results"]:
        if rec["group"] == "3":
            assert rec["value"] == full.value(rec["metric"], "tst1", 3)
        assert "tasks:3|" in rec["signature"]
    assert [p["code"] for p in rep["problems"]] == ["other-task"]  # 4000 items of other tasks, one warning


def test_json_report_validates_against_schema(shuffle_sub):
    r = run_cli("score", shuffle_sub, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--json")
    assert r.returncode == 0 and r.stderr == ""
    rep = json.loads(r.stdout)
    assert schema_problems(rep, "score-report") == []
    assert rep["valid"] is True and rep["counts"] == {"errors": 0, "warnings": 0}
    assert len(rep["submission"]["sha256"]) == 64
    # a broken report is caught by the same check
    bad = dict(rep, results=[dict(rep["results"][0], task=0)])
    assert schema_problems(bad, "score-report")


def test_csv_has_the_json_columns_and_values(shuffle_sub):
    j = json.loads(run_cli("score", shuffle_sub, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--json").stdout)
    r = run_cli("score", shuffle_sub, "--challenge", REAL_CHALLENGE, "--split", "tst1", "--csv")
    assert r.returncode == 0
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert tuple(csv.DictReader(io.StringIO(r.stdout)).fieldnames) == RECORD_FIELDS
    assert len(rows) == len(j["results"])
    for row, rec in zip(rows, j["results"]):
        assert row["split"] == rec["split"] and row["group"] == rec["group"] and row["metric"] == rec["metric"]
        assert row["average"] == (rec["average"] or "")
        assert float(row["value"]) == rec["value"] and int(row["n"]) == rec["n"]
        assert row["signature"] == rec["signature"]


def test_dataframe(shuffle_sub):
    report = _score(shuffle_sub)
    df = report.to_dataframe()
    assert list(df.columns) == list(RECORD_FIELDS)
    assert len(df) == len(report.records) == 28
    micro = df[(df.group == "all") & (df.average == "micro") & (df.metric == "p@1")]
    assert micro.value.item() == report.value("p@1")
    assert report.table.to_dataframe().shape == (5000, 9)


def test_every_record_carries_a_full_signature(shuffle_sub):
    report = _score(shuffle_sub)
    for rec in report.records:
        sig = Signature.parse(rec["signature"])
        f = dict(sig.fields)
        assert sig.benchmark == "dstc6" and sig.version == __version__
        assert f["split"] == rec["split"] and f["task"] == rec["group"] and f["metric"] == rec["metric"]
        assert f["avg"] == (rec["average"] or "none") and f["mode"] == "strict"
        assert rec["signature"].endswith(f"|v:{__version__}")
    lenient = _score(shuffle_sub, lenient=True)
    assert all("mode:lenient|nc:10" in r["signature"] for r in lenient.records)


@pytest.fixture(scope="module")
def layouts(real, shuffle_sub, tmp_path_factory):
    """The shuffle submission as a directory (official layout) and as a .tgz of it."""
    root = tmp_path_factory.mktemp("layouts")
    data = json.loads(shuffle_sub.read_text())
    task_of = {d: t for t, ds in real.order.items() for d in ds}
    for t, stem in real.stems.items():
        write_json(root / "sub" / "tst1" / f"{stem}.answers.json", [it for it in data if task_of[it["dialog_id"]] == t])
    tgz = root / "sub.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(root / "sub" / "tst1", arcname="tst1")
    return root / "sub", tgz


def test_directory_and_tgz_score_like_the_single_file(shuffle_sub, layouts):
    ref = _score(shuffle_sub)
    for sub, kind in zip(layouts, ("directory", "archive")):
        rep = _score(sub, split=None)  # a directory or archive defaults to the splits it holds
        assert rep.submission["kind"] == kind and rep.splits == ["tst1"]
        assert rep.valid and rep.problems == []
        assert rep.records == ref.records
        assert rep.ranks.gold_rank.tolist() == ref.ranks.gold_rank.tolist()


def test_missing_items_warn_and_count_as_misses(real, tmp_path):
    sub = real.submission(gold_first)
    drop = set(real.order[2][:10]) | set(real.order[5][-3:])
    sub = [it for it in sub if it["dialog_id"] not in drop]
    r = run_cli("score", write_json(tmp_path / "partial.json", sub), "--challenge", REAL_CHALLENGE,
                "--split", "tst1", "--json")
    assert r.returncode == 0
    rep = json.loads(r.stdout)
    assert rep["valid"] and rep["counts"] == {"errors": 0, "warnings": 13}
    assert {p["code"] for p in rep["problems"]} == {"missing-dialog"}
    vals = {(x["group"], x["metric"], x["average"]): x["value"] for x in rep["results"]}
    assert vals[("2", "p@1", None)] == 0.99 and vals[("5", "p@5", None)] == 0.997 and vals[("1", "mrr", None)] == 1.0
    assert vals[("all", "p@1", "micro")] == pytest.approx(4987 / 5000)


def test_keys_in_a_separate_directory(real, tmp_path, shuffle_sub):
    ch = tmp_path / "challenge" / "tst1"
    ch.mkdir(parents=True)
    for stem in real.stems.values():
        os.symlink(real.dir / f"{stem}.json", ch / f"{stem}.json")  # test files only, no keys
    with pytest.raises(UsageError, match="answer key"):
        score(shuffle_sub, split="tst1", challenge=ch.parent)
    rep = score(shuffle_sub, split="tst1", challenge=ch.parent, keys=real.dir)
    assert rep.records == _score(shuffle_sub).records
    r = run_cli("score", shuffle_sub, "--challenge", ch.parent, "--split", "tst1", "--keys", real.dir, "--csv")
    assert r.returncode == 0 and r.stdout.startswith("benchmark,split,group,subset,metric")
