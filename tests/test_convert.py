"""``dialeval convert``: bAbI ↔ DSTC6 on handmade files, determinism, bad inputs, and real-data round trips."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from dialeval.core.errors import UsageError
from dialeval.formats.convert import babi_to_dstc6, dstc6_to_babi, sample_candidates
from dialeval.formats.dstc6 import (
    Candidate,
    DialogItem,
    parse_dataset_name,
    read_dataset,
    write_dataset,
    write_results,
)
from dialeval.formats.fbdialog import is_fact_text, read_candidates, read_conversations

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
BABI = SHARED / "data" / "babi-dialog"
needs_babi = pytest.mark.skipif(not BABI.is_dir(), reason=f"real bAbI data not found at {BABI}")

DIALOGS = """1 hi\thello what can i help you with today
2 can you book a table in paris\ti'm on it
3 <SILENCE>\tany preference on a type of cuisine
4 italian please\tapi_call italian paris two cheap
5 resto_paris_cheap_italian_1stars R_phone resto_paris_cheap_italian_1stars_phone
6 resto_paris_cheap_italian_1stars R_rating 1
7 <SILENCE>\twhat do you think of this option: resto_paris_cheap_italian_1stars

1 hello\thello what can i help you with today
2 thanks\tyou're welcome
"""
CANDIDATES = [
    "hello what can i help you with today",
    "i'm on it",
    "any preference on a type of cuisine",
    "api_call italian paris two cheap",
    "what do you think of this option: resto_paris_cheap_italian_1stars",
    "you're welcome",
    "where should it be",
    "how many people would be in your party",
    "which price range are looking for",
    "ok let me look into some options for you",
    "api_call french rome four expensive",
    "sure is there anything else to update",
]


def run_cli(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-c", "from dialeval.cli import run; run()", *map(str, args)]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def assert_one_line_error(proc, needle=""):
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1, proc.stderr
    assert needle.lower() in lines[0].lower()


@pytest.fixture
def babi_dir(tmp_path) -> Path:
    d = tmp_path / "babi"
    d.mkdir()
    for split in ("trn", "dev", "tst", "tst-OOV"):
        (d / f"dialog-babi-task1-API-calls-{split}.txt").write_text(DIALOGS)
    (d / "dialog-babi-candidates.txt").write_text("".join(f"1 {c}\n" for c in CANDIDATES))
    return d


def test_babi_to_dstc6_sampled(babi_dir, tmp_path):
    res = babi_to_dstc6(babi_dir, 1, "tst", tmp_path / "out", n_candidates=6, seed=3)
    assert res.dataset.name == "dialog-task1API-babi-tst.json" and parse_dataset_name(res.dataset.name) == 1
    assert res.answers.name == "dialog-task1API-babi-tst.answers.json"
    items = read_dataset(res.dataset)
    assert len(items) == 7 and res.conversations == 2
    assert [(it.conversation_id, it.turn) for it in items][:2] == [("t1-tst-00001", 1), ("t1-tst-00001", 2)]
    assert all(it.answer is None for it in items)  # test files carry no answer
    key = json.loads(res.answers.read_text())
    for it, k in zip(items, key):
        assert k["dialog_id"] == it.dialog_id and k["lst_candidate_id"][0]["rank"] == 1
        gold = next(c for c in it.candidates if c.candidate_id == k["lst_candidate_id"][0]["candidate_id"])
        texts = [c.utterance for c in it.candidates]
        assert len(texts) == 6 and len(set(texts)) == 6 and texts.count(gold.utterance) == 1
        assert len(it.dialog_id) == 36 and len({c.candidate_id for c in it.candidates}) == 6
    # half of the distractors come from the context where it has enough lines
    last = items[4]
    from_ctx = [c.utterance for c in last.candidates if c.utterance in last.utterances]
    assert len(from_ctx) >= (6 - 1) // 2  # pool draws may also happen to be context lines


def test_babi_to_dstc6_is_deterministic_and_seeded(babi_dir, tmp_path):
    a = babi_to_dstc6(babi_dir, 1, "tst", tmp_path / "a", seed=1)
    b = babi_to_dstc6(babi_dir, 1, "tst", tmp_path / "b", seed=1)
    c = babi_to_dstc6(babi_dir, 1, "tst", tmp_path / "c", seed=2)
    assert a.dataset.read_bytes() == b.dataset.read_bytes()
    assert a.answers.read_bytes() == b.answers.read_bytes()
    assert a.dataset.read_bytes() != c.dataset.read_bytes()


def test_babi_to_dstc6_full_candidates_and_training_answers(babi_dir, tmp_path):
    res = babi_to_dstc6(babi_dir, 1, "trn", tmp_path / "out", candidates="full")
    items = read_dataset(res.dataset)
    assert all([c.utterance for c in it.candidates] == CANDIDATES for it in items)
    assert items[0].candidates[0].candidate_id == "0"
    assert all(it.answer is not None for it in items)  # training split: answer embedded
    # same bytes as the project's own writer
    write_dataset(tmp_path / "ref.json", items)
    assert (tmp_path / "ref.json").read_bytes() == res.dataset.read_bytes()


def test_round_trip_handmade(babi_dir, tmp_path):
    for mode in ("sampled", "full"):
        res = babi_to_dstc6(babi_dir, 1, "tst", tmp_path / mode, candidates=mode)
        back = tmp_path / f"{mode}.txt"
        exp = dstc6_to_babi(res.dataset, res.answers, back)
        assert read_conversations(back) == read_conversations(babi_dir / "dialog-babi-task1-API-calls-tst.txt")
        assert exp.conversations == 2
        if mode == "full":
            assert read_candidates(exp.candidates) == CANDIDATES


def test_dstc6_to_babi_items_without_conversation(tmp_path):
    cands = [Candidate("a", "here it is resto_x_phone"), Candidate("b", "you're welcome")]
    items = [
        DialogItem(
            "d1", ["resto_x r_phone resto_x_phone", "hi", "hello what can i help you with today", "phone please"], cands
        ),
        DialogItem("d2", ["hello what can i help you with today", "thanks"], cands),
    ]
    write_dataset(tmp_path / "ds.json", items)
    write_results(tmp_path / "key.json", [("d1", ["a"]), ("d2", ["b"])])
    exp = dstc6_to_babi(tmp_path / "ds.json", tmp_path / "key.json", tmp_path / "out.txt")
    convs = read_conversations(tmp_path / "out.txt")
    assert exp.conversations == 2
    assert [(x.user, x.bot) for x in convs[0].lines] == [
        ("resto_x r_phone resto_x_phone", None),
        ("hi", "hello what can i help you with today"),
        ("phone please", "here it is resto_x_phone"),
    ]
    assert [(x.user, x.bot) for x in convs[1].lines] == [
        ("<silence>", "hello what can i help you with today"),
        ("thanks", "you're welcome"),
    ]
    assert read_candidates(tmp_path / "out-candidates.txt") == ["here it is resto_x_phone", "you're welcome"]


def test_is_fact_text():
    assert is_fact_text("resto_rome_cheap_indian_6stars R_rating 6")
    assert is_fact_text("the_witty_horse r_atmosphere casual")
    assert not is_fact_text("i love italian food")


def test_sample_candidates_never_duplicates_gold():
    rng = random.Random(0)
    for _ in range(50):
        got = sample_candidates(rng, "g", ["g", "x", "y"], ["g", "p", "q", "x"], 10)
        texts = [c.utterance for c in got]
        assert texts.count("g") == 1 and len(set(texts)) == len(texts)
        assert set(texts) == {"g", "x", "y", "p", "q"}  # capped by what exists


def test_cli_convert_both_ways(babi_dir, tmp_path):
    out = tmp_path / "chal"
    proc = run_cli("convert", "babi-to-dstc6", "--data", babi_dir, "--task", "1", "--split", "tst", "--out", out)
    assert proc.returncode == 0, proc.stderr
    ds = out / "tst" / "dialog-task1API-babi-tst.json"
    key = out / "tst" / "dialog-task1API-babi-tst.answers.json"
    proc = run_cli("convert", "dstc6-to-babi", "--dataset", ds, "--answers", key, "--out", tmp_path / "back.txt")
    assert proc.returncode == 0, proc.stderr
    assert read_conversations(tmp_path / "back.txt") == read_conversations(
        babi_dir / "dialog-babi-task1-API-calls-tst.txt"
    )


def test_cli_convert_says_one_conversation_in_the_singular(tmp_path):
    # before: "wrote .../dialog-task5FULL-babi-tst.json (25 items, 1 conversations)"
    proc = run_cli("convert", "babi-to-dstc6", "--data", "sample:babi", "--task", "5", "--split", "tst", "--out",
                   tmp_path / "b5")
    assert proc.returncode == 0, proc.stderr
    assert "(25 items, 1 conversation)\n" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "args, needle",
    [
        (
            ["babi-to-dstc6", "--data", "{tmp}/nope", "--task", "1", "--split", "tst", "--out", "{tmp}/o"],
            "does not exist",
        ),
        (["babi-to-dstc6", "--data", "{babi}", "--task", "2", "--split", "tst", "--out", "{tmp}/o"], "no such file"),
        (["babi-to-dstc6", "--data", "{babi}", "--task", "6", "--split", "tst-OOV", "--out", "{tmp}/o"], "no split"),
        (["babi-to-dstc6", "--data", "{babi}", "--task", "9", "--split", "tst", "--out", "{tmp}/o"], "task"),
        (["dstc6-to-babi", "--dataset", "{tmp}/nope.json", "--out", "{tmp}/o.txt"], "no such file"),
        (["dstc6-to-babi", "--dataset", "{tmp}/bad.json", "--out", "{tmp}/o.txt"], "json"),
        (["dstc6-to-babi", "--dataset", "{tmp}/ok.json", "--out", "{tmp}/o.txt"], "no gold"),
        (
            ["dstc6-to-babi", "--dataset", "{tmp}/ok.json", "--answers", "{tmp}/bad.json", "--out", "{tmp}/o.txt"],
            "json",
        ),
    ],
)
def test_cli_bad_inputs(babi_dir, tmp_path, args, needle):
    (tmp_path / "bad.json").write_text("[{")
    write_dataset(tmp_path / "ok.json", [DialogItem("d", ["hi"], [Candidate("a", "x")])])
    proc = run_cli("convert", *[a.format(tmp=tmp_path, babi=babi_dir) for a in args])
    assert_one_line_error(proc, needle)


def test_wrong_format_babi_file_is_one_line_error(babi_dir, tmp_path):
    (babi_dir / "dialog-babi-task1-API-calls-tst.txt").write_text('[{"json": "not fb"}]\n')
    proc = run_cli(
        "convert", "babi-to-dstc6", "--data", babi_dir, "--task", "1", "--split", "tst", "--out", tmp_path / "o"
    )
    assert_one_line_error(proc, "expected 'ID text'")


# ---------------------------------------------------------------------------------------------------------------
# real data


@needs_babi
@pytest.mark.realdata
@pytest.mark.parametrize("task, split", [(1, "tst"), (3, "tst-OOV"), (4, "dev"), (6, "tst")])
def test_real_round_trip(tmp_path, task, split):
    from dialeval.formats.convert import babi_path

    res = babi_to_dstc6(BABI, task, split, tmp_path / "chal", seed=7)
    exp = dstc6_to_babi(res.dataset, res.answers, tmp_path / "back.txt")
    original = read_conversations(babi_path(BABI, task, split))
    assert read_conversations(exp.dialogs) == original
    assert exp.conversations == len(original)


@needs_babi
@pytest.mark.realdata
def test_real_full_candidates_small(tmp_path):
    res = babi_to_dstc6(BABI, 1, "tst", tmp_path / "chal", candidates="full", max_conversations=2)
    items = read_dataset(res.dataset)
    assert len(items[0].candidates) == 4212
    exp = dstc6_to_babi(res.dataset, res.answers, tmp_path / "back.txt")
    assert len(read_candidates(exp.candidates)) == 4212


def test_dstc6_to_babi_unknown_gold_never_shows_the_gold_id(tmp_path):
    cands = [Candidate("a", "hello what can i help you with today"), Candidate("b", "you're welcome")]
    write_dataset(tmp_path / "ds.json", [DialogItem("d1", ["hi"], cands)])
    write_results(tmp_path / "key.json", [("d1", ["secret-gold-zz"])])
    with pytest.raises(UsageError) as e:
        dstc6_to_babi(tmp_path / "ds.json", tmp_path / "key.json", tmp_path / "out.txt")
    assert "d1" in str(e.value) and "secret-gold-zz" not in str(e.value)


@pytest.mark.parametrize("name", ["dialog-babi-candidates.txt", "dialog-babi-task1-API-calls-dev.txt"])
def test_a_fifo_in_the_babi_folder_is_named_as_one_at_once(babi_dir, tmp_path, name):
    import os

    (babi_dir / name).unlink()
    os.mkfifo(babi_dir / name)  # opened for reading, it would block until a writer comes
    proc = run_cli("convert", "babi-to-dstc6", "--data", babi_dir, "--task", "1", "--split", "dev",
                   "--out", tmp_path / "out")
    assert_one_line_error(proc, "not a regular file (a FIFO)")
    assert not (tmp_path / "out").exists()
