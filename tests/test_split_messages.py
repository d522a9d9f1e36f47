"""`--split all` where a submission file answers one split, the Ubuntu group list, and `data fetch --to`'s name."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import REPO, run_cli

from dialeval.benchmarks.base import Request
from dialeval.benchmarks.registry import get
from dialeval.core.errors import UsageError

BABI_RUN = REPO / "submissions" / "samples" / "babi" / "example-run.json"


def test_split_all_scores_the_one_split_a_babi_run_answers():
    args = ("score", BABI_RUN, "--benchmark", "babi", "--data", "sample:babi", "--json")
    every = run_cli(*args, "--split", "all")  # before: "a submission file is scored against one split; give one"
    assert every.returncode == 0, every.stderr
    alone = run_cli(*args)
    assert json.loads(every.stdout)["results"] == json.loads(alone.stdout)["results"]
    assert {r["split"] for r in json.loads(every.stdout)["results"]} == {"tst"}


def test_a_file_naming_several_splits_says_how_many_the_data_hold(tmp_path):
    with pytest.raises(UsageError, match=r"^airdialogue: a submission file answers one split, and the data hold 2 "
                                         r"\(dev, test\); give --split with one of them$"):
        get("airdialogue").choose_splits(Request(tmp_path / "preds.jsonl", tmp_path, split="all"), ["dev", "test"])


def test_ubuntu_unknown_group_lists_only_the_files_present(tmp_path):
    from dialeval.simulator.ubuntu import write_fixture

    write_fixture(tmp_path, seed=3, n_train=10, n_valid=5, n_test=5)
    (tmp_path / "valid.csv").unlink()
    np.save(tmp_path / "s.npy", np.zeros((5, 10), np.float32))
    with pytest.raises(UsageError, match=r"^ubuntu: no group 'dev\.csv' \(groups are the files: test\.csv\)$"):
        get("ubuntu").evaluate(Request(tmp_path / "s.npy", tmp_path, groups=["dev.csv"]))


def test_data_fetch_to_has_one_name_in_its_help():
    r = run_cli("data", "fetch", "--help")
    assert r.returncode == 0, r.stderr
    assert "--to DEST" in r.stdout and "DIRECTORY" not in r.stdout


def test_convai2_replies_file_under_split_all_names_the_data_files(tmp_path):
    from convai2_files import write_turns
    from test_convai2 import DIALOGS

    folder = tmp_path / "ConvAI2"
    folder.mkdir()
    for name in ("train_self_original.txt", "valid_self_original.txt"):
        write_turns(folder / name, DIALOGS)
    (tmp_path / "replies.txt").write_text("a\nb\nc\nd\n")
    with pytest.raises(UsageError, match=r"^convai2: a submission file answers one split, and the data hold 2 "
                                         r"\(train, valid\); give --split with one of them$"):
        get("convai2").evaluate(Request(tmp_path / "replies.txt", folder, split="all"))


def _two_split_dstc6(root):
    from conftest import make_challenge

    return make_challenge(root, split="tst1", seed=6), make_challenge(root, split="tst2", seed=7)


def test_dstc6_split_all_scores_the_split_a_result_file_answers(tmp_path):
    from conftest import ranking, write_json

    tst1, tst2 = _two_split_dstc6(tmp_path / "challenge")
    sub = write_json(tmp_path / "r.json", [ranking(i.dialog_id, [c.candidate_id for c in i.candidates])
                                                   for i in tst2.items[1]])
    ev = get("dstc6").evaluate(Request(sub, tmp_path / "challenge", split="all"))  # before: tst1 (have[:1])
    assert ev.splits == ["tst2"]


def test_dstc6_result_file_under_several_splits_names_them(tmp_path):
    _two_split_dstc6(tmp_path / "challenge")
    (tmp_path / "r.json").write_text(json.dumps([{"dialog_id": "nobody", "lst_candidate_id": []}]))
    for split in ("all", "tst1,tst2"):
        with pytest.raises(UsageError, match=r"^dstc6: a submission file answers one split, and the data hold 2 "
                                             r"\(tst1, tst2\); give --split with one of them$"):
            get("dstc6").evaluate(Request(tmp_path / "r.json", tmp_path / "challenge", split=split))
