"""Ids of another split: one ``wrong-split`` error names the split they belong to, on every benchmark whose
item ids are split-specific (DSTC6, bAbI, Movie Dialog), through the one rule
:func:`dialeval.benchmarks.items.other_split_hint`.

The real-data cases score a split's gold ranking against another split of the published data (bAbI: every
task, dev and tst-OOV against tst; Movie Dialog: the dev files against a small test split beside them) and
check that the hint is there, alone of its code, exit 1, with no id in its message, and that following its
advice scores the run perfectly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_cli

from dialeval.api import evaluate
from dialeval.benchmarks.rankings import WRONG_SPLIT_IDS, fb_item_ids, other_split_hint

SHARED = Path(__file__).resolve().parents[2] / "shared"
BABI = SHARED / "data" / "babi-dialog"
MOVIE = SHARED / "data" / "movie-dialog"
needs_babi = pytest.mark.skipif(not BABI.is_dir(), reason=f"real bAbI data not found at {BABI}")
needs_movie = pytest.mark.skipif(not MOVIE.is_dir(), reason=f"real Movie Dialog data not found at {MOVIE}")


def ranked(ids, golds) -> list[dict]:
    return [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(sorted(g), 1)]}
            for i, g in zip(ids, golds, strict=True)]


def hints(problems) -> list:
    return [p for p in problems if p.code == "wrong-split"]


# ---- the rule ------------------------------------------------------------------------------------------------
def test_the_hint_names_the_split_most_ids_belong_to():
    others = [("dev", lambda u: ["a", "b", "c"]), ("trn", lambda u: ["b", "c", "d", "e"]), ("tst", lambda u: ["x"])]
    p = other_split_hint(["b", "d", "e", "q"], "tst", others, "item ids")
    assert (p.code, p.severity, p.pointer) == ("wrong-split", "error", "")
    assert p.message == "3 of the 4 item ids that are not in split tst belong to split trn: score with --split trn"
    # a tie goes to the first split given; the split scored is never named; no match, no hint
    assert "split dev:" in other_split_hint(["b", "c"], "tst", others).message
    assert other_split_hint(["x"], "tst", others) is None
    assert other_split_hint(["zz"], "tst", others) is None


def test_a_split_whose_data_cannot_be_read_is_passed_over():
    from dialeval.core.errors import UsageError

    def broken(unknown):
        raise UsageError("dev/x.txt: not a regular file (a FIFO)")

    p = other_split_hint(["a"], "tst", [("dev", broken), ("trn", lambda u: {"a": 1})])
    assert p is not None and "--split trn" in p.message


def test_work_is_bounded_by_the_first_ids():
    seen = []

    def ids(unknown):
        seen.append(len(unknown))
        return iter(())

    other_split_hint([f"x{i}" for i in range(WRONG_SPLIT_IDS + 5000)], "tst", [("dev", ids)])
    assert seen == [WRONG_SPLIT_IDS]


def test_fb_files_are_read_only_when_an_id_names_them(tmp_path):
    (tmp_path / "task1_qa_dev.txt").write_text("1 q\ta\n1 q2\tb\n")
    os.mkfifo(tmp_path / "task2_recs_dev.txt")  # would block if it were opened
    ids = fb_item_ids([tmp_path / "task1_qa_dev.txt", tmp_path / "task2_recs_dev.txt"])
    assert list(ids(frozenset({"task1_qa_dev:2:1", "elsewhere:1:1"}))) == ["task1_qa_dev:1:1", "task1_qa_dev:2:1"]


# ---- bAbI on the published data ----------------------------------------------------------------------------------
@needs_babi
@pytest.mark.realdata
@pytest.mark.parametrize(("task", "split"), [(1, "dev"), (3, "tst-OOV"), (5, "trn"), (6, "dev")])
def test_babi_ids_of_another_split(tmp_path, task, split):
    from dialeval.benchmarks.babi import load_items

    s = load_items(BABI, task, split)
    sub = tmp_path / "run.json"
    sub.write_text(json.dumps(ranked(s.item_ids, s.gold)))
    _, ev = evaluate(sub, benchmark="babi", data=BABI, split="tst", groups=[str(task)])
    (hint,) = hints(ev.problems)
    n = len(s.item_ids)
    assert hint.message == (f"{n} of the {n} item ids that are not in split tst belong to split {split}: "
                            f"score with --split {split}")
    assert ev.problems[0] is hint and not ev.valid
    _, ev = evaluate(sub, benchmark="babi", data=BABI, split=split, groups=[str(task)])
    assert ev.valid and not hints(ev.problems) and ev.table.gold_rank.tolist() == [1] * n


@needs_babi
@pytest.mark.realdata
def test_babi_cli_scores_json_of_dev_ids_scored_as_tst(tmp_path):
    from dialeval.benchmarks.babi import load_items

    s = load_items(BABI, 1, "dev")
    doc = {"format": "scores", "items": {i: {c: 1.0 for c in g} for i, g in zip(s.item_ids, s.gold, strict=True)}}
    sub = tmp_path / "scores.json"
    sub.write_text(json.dumps(doc))
    r = run_cli("score", sub, "--benchmark", "babi", "--data", BABI, "--split", "tst", "--task", "1", "--json")
    assert r.returncode == 1, r.stderr
    rep = json.loads(r.stdout)
    (hint,) = [p for p in rep["problems"] if p["code"] == "wrong-split"]
    assert hint["message"].endswith("belong to split dev: score with --split dev")
    assert not any(i in hint["message"] for i in s.item_ids)  # counts and split names only
    assert all(len(line) < 300 for line in r.stderr.splitlines())


# ---- Movie Dialog on the published dev files ---------------------------------------------------------------------
@pytest.fixture
def movie_two_splits(tmp_path) -> Path:
    """The published dev files (linked, never copied) beside a small test split made of dev's first lines."""
    d = tmp_path / "movie"
    d.mkdir()
    for name in ("entities.txt", "task1_qa_dev.txt", "task2_recs_dev.txt", "task3_qarecs_dev.txt"):
        (d / name).symlink_to(MOVIE / name)
    with open(MOVIE / "task1_qa_dev.txt", encoding="utf-8") as f:
        (d / "task1_qa_test.txt").write_text("".join(f.readline() for _ in range(30)), encoding="utf-8")
    return d


@needs_movie
@pytest.mark.realdata
@pytest.mark.parametrize("task", [1, 3])
def test_movie_dev_ids_scored_as_test(movie_two_splits, tmp_path, task):
    from dialeval.benchmarks.movie_dialog import load_task

    s = load_task(MOVIE, task, "dev", [])
    sub = tmp_path / "run.json"
    sub.write_text(json.dumps(ranked(s.item_ids, s.gold)))
    _, ev = evaluate(sub, benchmark="movie-dialog", data=movie_two_splits, split="test", groups=["1"])
    (hint,) = hints(ev.problems)
    n = len(s.item_ids)
    assert hint.message == (f"{n} of the {n} item ids that are not in split test belong to split dev: "
                            "score with --split dev")
    assert not ev.valid
    _, ev = evaluate(sub, benchmark="movie-dialog", data=movie_two_splits, split="dev", groups=[str(task)])
    assert ev.valid and not hints(ev.problems)


@needs_movie
@pytest.mark.realdata
def test_movie_cli_and_ids_of_no_split(movie_two_splits, tmp_path):
    from dialeval.benchmarks.movie_dialog import load_task

    s = load_task(MOVIE, 2, "dev", [])
    ids = list(s.item_ids[:500]) + ["task2_recs_train:1:1", "nowhere"]
    sub = tmp_path / "run.json"
    sub.write_text(json.dumps(ranked(ids, [["e1"]] * len(ids))))
    r = run_cli("score", sub, "--benchmark", "movie-dialog", "--data", movie_two_splits, "--split", "test",
                "--task", "1")
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if "belong to split" in ln]
    assert len(lines) == 1 and "500 of the 502 item ids that are not in split test belong to split dev" in lines[0]
    # ids of no split the data has: unknown, and no hint
    sub.write_text(json.dumps(ranked(["task1_qa_train:1:1", "x"], [["e1"], ["e2"]])))
    _, ev = evaluate(sub, benchmark="movie-dialog", data=movie_two_splits, split="test", groups=["1"])
    assert not hints(ev.problems) and any(p.code == "unknown-dialog" for p in ev.problems)
