"""The item-set skeleton (:mod:`dialeval.benchmarks.itemset`): the one split rule on bAbI and Ubuntu, and a
benchmark declared as its docstring says (a reader, a few declarations) scoring through the one evaluate loop."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_babi_benchmark import STEM, ranked
from test_babi_benchmark import data as babi_data  # noqa: F401 (fixture)
from test_ubuntu import row, write_eval

from dialeval.benchmarks.base import Request
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark, submission_ids
from dialeval.benchmarks.registry import get
from dialeval.core.errors import UsageError

DEV = STEM.replace("-tst", "-dev")


def write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc))
    return path


# ---- the split rule: no --split scores every split the submission covers ----------------------------------------
def test_babi_without_split_scores_the_split_its_ids_name(tmp_path, babi_data):  # noqa: F811
    sub = write(tmp_path / "r.json", ranked((f"{DEV}:1:1", ["1"]), (f"{DEV}:1:2", ["2"])))
    ev = get("babi").evaluate(Request(sub, babi_data))
    assert ev.splits == ["dev"] and ev.valid
    assert ev.table.split.tolist() == ["dev"] * 6 and ev.table.gold_rank.tolist()[:2] == [1, 1]


def test_babi_file_naming_two_splits_needs_one_split(tmp_path, babi_data):  # noqa: F811
    sub = write(tmp_path / "r.json", ranked((f"{DEV}:1:1", ["1"]), (f"{STEM}:1:1", ["1"])))
    with pytest.raises(UsageError, match=r"babi: a submission file answers one split, and the data hold \d+ \(.*\); give --split with one of them"):
        get("babi").evaluate(Request(sub, babi_data))


@pytest.fixture
def ubuntu(tmp_path) -> Path:
    d = tmp_path / "ubuntu"
    d.mkdir()
    write_eval(d / "test.csv", [row(i) for i in range(1, 5)])
    write_eval(d / "valid.csv", [row(i) for i in range(1, 3)])
    return d


def test_ubuntu_without_split_scores_every_split_the_json_covers(tmp_path, ubuntu):
    items = {f"{s}:{i}": {"gt": 1, "d0": 0} for s, n in (("valid", 2), ("test", 4)) for i in range(1, n + 1)}
    ev = get("ubuntu").evaluate(Request(write(tmp_path / "s.json", {"format": "scores", "items": items}), ubuntu))
    assert ev.splits == ["valid", "test"] and ev.table.split.tolist() == ["valid"] * 2 + ["test"] * 4
    only_valid = {k: v for k, v in items.items() if k.startswith("valid")}
    ev = get("ubuntu").evaluate(Request(write(tmp_path / "v.json", {"format": "scores", "items": only_valid}), ubuntu))
    assert ev.splits == ["valid"] and ev.valid and ev.table.gold_rank.tolist() == [1, 1]


def test_a_matrix_names_no_split(tmp_path, ubuntu):
    np.save(tmp_path / "s.npy", np.tile(np.arange(10, 0, -1, dtype=float), (4, 1)))
    with pytest.raises(UsageError, match=r"ubuntu: give --split \(one of: valid, test\)"):
        get("ubuntu").evaluate(Request(tmp_path / "s.npy", ubuntu))
    (ubuntu / "valid.csv").unlink()  # one split: it is taken
    ev = get("ubuntu").evaluate(Request(tmp_path / "s.npy", ubuntu))
    assert ev.splits == ["test"] and ev.table.gold_rank.tolist() == [1] * 4


def test_submission_ids_of_both_json_forms(tmp_path):
    assert submission_ids(write(tmp_path / "a.json", ranked(("x:1", ["1"]), ("y:2", ["2"])))) == ["x:1", "y:2"]
    assert submission_ids(write(tmp_path / "b.json", {"format": "scores", "items": {"x:1": {"a": 1}}})) == ["x:1"]
    assert submission_ids(write(tmp_path / "c.json", [{"no": "id"}])) is None
    (tmp_path / "d.json").write_text("not json")
    assert submission_ids(tmp_path / "d.json") is None and submission_ids(tmp_path / "e.npy") is None


# ---- a benchmark declared as the skeleton's docstring says ---------------------------------------------------
class Pairs(ItemSetBenchmark):
    """``<split>.txt``: one ``context<TAB>gold<TAB>distractor`` line per item; ids ``<split>:<line>``."""

    name = "pairs"
    title = "two candidates per context"
    group_label = "file"
    split_names = ("dev", "test")
    default_metrics = ("hits@1", "mrr")

    def present(self, data):
        return {s: [f"{s}.txt"] for s in self.split_names if (data / f"{s}.txt").exists()}

    def load(self, data, split, group, with_gold, problems):
        path = data / group
        n = len(path.read_text().splitlines())
        return ItemSet(group, [f"{split}:{i}" for i in range(1, n + 1)], ("gold", "other"),
                       [frozenset({"gold"})] * n if with_gold else None, files=(path,))

    def split_of_id(self, item_id):
        return item_id.partition(":")[0]


def test_a_declared_benchmark_scores_through_the_one_loop(tmp_path):
    data = tmp_path / "pairs"
    data.mkdir()
    (data / "dev.txt").write_text("c\tg\to\n" * 2)
    (data / "test.txt").write_text("c\tg\to\n" * 3)
    items = {"test:1": {"gold": 2, "other": 1}, "test:2": {"gold": 0, "other": 1}, "test:3": {"gold": 1, "other": 1}}
    ev = Pairs().evaluate(Request(write(tmp_path / "s.json", {"format": "scores", "items": items}), data))
    assert ev.valid and ev.splits == ["test"] and ev.groups == ["test.txt"]
    assert ev.table.gold_rank.tolist() == [1, 2, 2]  # a tie is pessimistic by default
    assert ev.signature_fields == {"ties": "pessimistic"} and ev.data.files == ["test.txt"]
    ev = Pairs().evaluate(Request(tmp_path / "s.json", data, split="dev"))
    assert not ev.valid and {p.code for p in ev.problems} == {"wrong-split", "missing-dialog"}  # test's ids, not dev's


# ---- the same rule on DSTC6 and AirDialogue, and grading asks every benchmark ------------------------------------
def test_dstc6_single_file_without_split_scores_the_split_its_ids_name(tmp_path):
    from conftest import make_challenge, ranking

    root = tmp_path / "challenge"
    make_challenge(root, split="tst1", seed=1)
    tst2 = make_challenge(root, split="tst2", seed=2)
    run = [ranking(it.dialog_id, [tst2.gold[it.dialog_id]]) for t in tst2.tasks for it in tst2.items[t]]
    sub = write(tmp_path / "run.json", run)
    ev = get("dstc6").evaluate(Request(sub, root))
    assert ev.splits == ["tst2"] and ev.valid and set(ev.table.gold_rank.tolist()) == {1}
    assert get("dstc6").splits_of(sub, root) == ["tst2"]
    with pytest.raises(UsageError, match=r"give --split for a single result file \(one of: tst1, tst2\)"):
        get("dstc6").evaluate(Request(write(tmp_path / "none.json", []), root))


def test_airdialogue_without_split_needs_one_when_the_data_hold_several(tmp_path):
    bench = get("airdialogue")
    with pytest.raises(UsageError, match=r"airdialogue: give --split \(one of: dev, test\)"):
        bench.choose_splits(Request(tmp_path / "preds.jsonl", tmp_path), ["dev", "test"])
    assert bench.choose_splits(Request(tmp_path / "preds.jsonl", tmp_path), ["dev"]) == ["dev"]
    with pytest.raises(UsageError, match=r"airdialogue: a submission file answers one split, and the data hold 2 \(dev, test\); give --split"):
        bench.choose_splits(Request(tmp_path / "preds.jsonl", tmp_path, split="all"), ["dev", "test"])


def test_grading_infers_a_single_file_runs_splits_for_any_benchmark(tmp_path, babi_data, ubuntu):  # noqa: F811
    from dialeval.leaderboard.grade import splits_held

    sub = write(tmp_path / "r.json", ranked((f"{DEV}:1:1", ["1"])))
    assert splits_held(sub, "babi", babi_data) == ["dev"]
    items = {"valid:1": {"gt": 1}, "test:2": {"gt": 1}}
    assert splits_held(write(tmp_path / "s.json", {"format": "scores", "items": items}), "ubuntu", ubuntu) == [
        "valid", "test"]
    np.save(tmp_path / "s.npy", np.zeros((4, 10)))
    assert splits_held(tmp_path / "s.npy", "ubuntu", ubuntu) is None  # a matrix names no split
