"""The native bAbI dialog benchmark: ids, gold by text, accuracy on constructed files, bad input, real data,
and ``dialeval reproduce babi`` scoring through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialeval.benchmarks.babi import Babi, load_items
from dialeval.benchmarks.base import Request
from dialeval.core.errors import UsageError
from dialeval.metrics import get

SHARED = Path(__file__).resolve().parents[2] / "shared"
BABI = SHARED / "data" / "babi-dialog"
needs_babi = pytest.mark.skipif(not BABI.is_dir(), reason=f"real bAbI data not found at {BABI}")

CANDS = [
    "hello what can i help you with today",  # 1
    "how many people would be in your party",  # 2
    "api_call italian paris six cheap",  # 3
    "ok let me look into some options for you",  # 4
    "hello what can i help you with today",  # 5: same text as line 1 (both are gold where it is said)
    "you're welcome",  # 6
]
# Two conversations; the second has a KB fact line (ID 2), so its bot turns sit on lines with IDs 1, 3, 4.
TST = (
    "1 hi\thello what can i help you with today\n"
    "2 italian food in paris\thow many people would be in your party\n"
    "3 six please\tok let me look into some options for you\n"
    "\n"
    "1 <SILENCE>\thello what can i help you with today\n"
    "2 resto_1 R_cuisine italian\n"
    "3 thanks\tyou're welcome\n"
    "4 cheap italian for six in paris\tapi_call italian paris six cheap\n"
)
STEM = "dialog-babi-task1-API-calls-tst"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    d = tmp_path / "babi"
    d.mkdir()
    (d / "dialog-babi-candidates.txt").write_text("".join(f"1 {c}\n" for c in CANDS))
    (d / f"{STEM}.txt").write_text(TST)
    (d / "dialog-babi-task1-API-calls-dev.txt").write_text(TST)
    return d


def ranked(*pairs) -> list[dict]:
    """DSTC6 result items from (item id, [candidate ids best first])."""
    return [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]}
            for i, ids in pairs]


def run(tmp_path, data, sub, split="tst", ties="pessimistic", groups=None):
    p = tmp_path / "sub.json"
    p.write_text(json.dumps(sub))
    return Babi().evaluate(Request(p, data, split, groups=groups, ties=ties))


def test_ids_turns_and_gold_by_text(data):
    s = load_items(data, 1, "tst")
    assert s.item_ids == [f"{STEM}:1:1", f"{STEM}:1:2", f"{STEM}:1:3", f"{STEM}:2:1", f"{STEM}:2:3", f"{STEM}:2:4"]
    assert s.conversation_ids == [f"{STEM}:1"] * 3 + [f"{STEM}:2"] * 3
    assert s.turns == [1, 2, 3, 1, 2, 3]
    assert s.candidates == ("1", "2", "3", "4", "5", "6")  # line numbers of the candidate file
    assert s.gold == [frozenset({"1", "5"}), frozenset({"2"}), frozenset({"4"}),
                      frozenset({"1", "5"}), frozenset({"6"}), frozenset({"3"})]


def test_candidate_file_is_compact_and_exact(tmp_path):
    from dialeval.formats.fbdialog import CandidateFile, read_candidates

    p = tmp_path / "c.txt"
    p.write_bytes("1 a b\n\n  \n1 ünï\x1b[0m\r\n1 a b\n7 \n1 a b \n".encode())
    cf = CandidateFile(p)
    assert list(cf) == read_candidates(p) == ["a b", "ünï\x1b[0m", "a b", "", "a b "]
    assert list(cf.linenos) == [1, 4, 5, 6, 7] and cf[-1] == "a b " and cf[1:3] == ["ünï\x1b[0m", "a b"]
    assert cf.positions("a b") == [0, 2] and cf.positions("ünï\x1b[0m") == [1] and cf.positions("") == [3]
    assert cf.positions("a b  ") == [] and cf.positions("A B") == []


@pytest.mark.parametrize("line, needle", [
    ("\u00b2 hi\tthere", r":1: expected 'ID text'"),  # isdigit() but not a number int() reads
    ("9" * 5000 + " hi\tthere", r":1: the line ID has 5000 digits"),
    ("hi\tsecret gold answer", r":1: expected 'ID text': the line does not start with a line number and a space$"),
])
def test_bad_line_ids_are_named_never_shown(tmp_path, data, line, needle):
    (data / f"{STEM}.txt").write_text(line + "\n" + TST)
    with pytest.raises(UsageError, match=needle) as e:
        load_items(data, 1, "tst")
    assert "secret" not in str(e.value)


def test_empty_candidate_file_is_a_usage_error(tmp_path, data):
    (data / "dialog-babi-candidates.txt").write_text("\n")
    with pytest.raises(UsageError, match="no candidates"):
        load_items(data, 1, "tst")


def test_accuracy_hand_computed(tmp_path, data):
    # conversation 1: all three turns right (turn 1 through the duplicate line 5) -> a correct dialog;
    # conversation 2: turns 1 and 3 right, turn 2 wrong (gold 6 at rank 2) -> not.
    sub = ranked(
        (f"{STEM}:1:1", ["5", "1"]), (f"{STEM}:1:2", ["2"]), (f"{STEM}:1:3", ["4", "2"]),
        (f"{STEM}:2:1", ["1"]), (f"{STEM}:2:3", ["3", "6"]), (f"{STEM}:2:4", ["3"]),
    )
    ev = run(tmp_path, data, sub)
    assert ev.valid and ev.problems == []
    t = ev.table
    assert t.gold_rank.tolist() == [1, 1, 1, 1, 2, 1]
    assert get("per-response-accuracy").compute(t) == pytest.approx(5 / 6)
    assert get("per-dialog-accuracy").compute(t) == pytest.approx(1 / 2)
    assert Babi().metrics_for(ev) == ["per-response-accuracy", "per-dialog-accuracy"]
    assert ev.splits == ["tst"] and ev.groups == ["1"]
    assert ev.signature_fields["gold"] == "text" and ev.signature_fields["ties"] == "none"  # ranks: no tie policy
    assert sorted(ev.data.files) == ["dialog-babi-candidates.txt", f"{STEM}.txt"]


def test_missing_item_is_a_miss_with_a_warning(tmp_path, data):
    sub = ranked((f"{STEM}:1:1", ["1"]), (f"{STEM}:1:2", ["2"]), (f"{STEM}:1:3", ["4"]))
    ev = run(tmp_path, data, sub)
    assert ev.valid
    assert get("per-response-accuracy").compute(ev.table) == pytest.approx(3 / 6)
    assert get("per-dialog-accuracy").compute(ev.table) == pytest.approx(1 / 2)
    assert {p.code for p in ev.problems} == {"missing-dialog"}


def test_scores_with_tie_policies(tmp_path, data):
    # Every item: its gold tied with one other candidate at the top.
    s = load_items(data, 1, "tst")
    items = {}
    for iid, g in zip(s.item_ids, s.gold, strict=True):
        other = next(c for c in s.candidates if c not in g)
        items[iid] = {c: (1.0 if c in g or c == other else 0.0) for c in s.candidates}
    doc = {"format": "scores", "items": items}
    acc = {pol: get("per-response-accuracy").compute(run(tmp_path, data, doc, ties=pol).table)
           for pol in ("pessimistic", "optimistic", "expected")}
    assert acc == {"pessimistic": 0.0, "optimistic": 1.0, "expected": pytest.approx(0.5)}
    dial = get("per-dialog-accuracy").compute(run(tmp_path, data, doc, ties="expected").table)
    assert dial == pytest.approx(0.5 ** 3)  # three turns, each a hit with probability 1/2


def test_unknown_item_and_candidate_are_one_line_each(tmp_path, data):
    sub = ranked((f"{STEM}:9:1", ["1"]), (f"{STEM}:1:1", ["4212"]))
    ev = run(tmp_path, data, sub)
    errors = [p for p in ev.problems if p.severity == "error"]
    assert [p.code for p in errors] == ["unknown-dialog", "unknown-candidate"]
    assert errors[0].pointer == "/0/dialog_id" and f"{STEM}:9:1" in errors[0].message
    assert all("\n" not in p.format() for p in ev.problems)


def test_other_tasks_items_are_neither_errors_nor_missing(tmp_path, data):
    (data / "dialog-babi-task2-API-refine-tst.txt").write_text(TST)
    sub = ranked((f"{STEM}:1:1", ["1"]), ("dialog-babi-task2-API-refine-tst:1:1", ["1"]))
    ev = run(tmp_path, data, sub, groups=["2"])
    assert ev.valid and ev.groups == ["2"]
    assert set(ev.table.group.tolist()) == {"2"} and len(ev.table) == 6
    other = [p for p in ev.problems if p.code == "other-task"]  # said once, as a warning
    assert len(other) == 1 and other[0].severity == "warning" and "1 item of tasks other than 2" in other[0].message
    assert all(p.code == "missing-dialog" and "task1" not in p.message for p in ev.problems if p is not other[0])


def test_answer_not_in_candidates_is_a_data_warning(tmp_path, data):
    (data / f"{STEM}.txt").write_text(TST.replace("you're welcome", "you are welcome"))
    ev = run(tmp_path, data, ranked((f"{STEM}:2:3", ["6"])))
    warn = [p for p in ev.problems if p.code == "answer-not-candidate"]
    assert len(warn) == 1 and warn[0].file == f"{STEM}.txt" and "line 7" in warn[0].message
    assert "you are welcome" not in warn[0].message  # never echo an answer


@pytest.mark.parametrize(
    ("split", "needle"),
    [(None, "give --split"), ("tst,dev", "one split"), ("trn", "no split 'trn'")],
)
def test_split_usage_errors(tmp_path, data, split, needle):
    with pytest.raises(UsageError, match=needle):
        run(tmp_path, data, [], split=split)


def test_bad_task_is_a_usage_error(tmp_path, data):
    with pytest.raises(UsageError, match="tasks are 1-6"):
        run(tmp_path, data, [], groups=["7"])


def test_registered():
    from dialeval.benchmarks import registry

    b = registry.get("babi")
    assert b.name == "babi" and "tst-OOV" in b.split_names


# ---------------------------------------------------------------------------------------------------------------
# reproduce babi through the benchmark


def test_reproduce_scores_through_the_benchmark(tmp_path, data):
    """Nearest neighbour (trained on the same turns) is perfect here; numbers are percentages."""
    from dialeval.baselines.reproduce import reproduce_babi

    for split in ("trn", "tst-OOV"):
        (data / f"dialog-babi-task1-API-calls-{split}.txt").write_text(TST)
    recs = reproduce_babi(data, ["nearest-neighbor", "random"], [1])
    nn = [r for r in recs if r["model"] == "nearest-neighbor"]
    assert {r["split"] for r in nn} == {"tst", "tst-OOV"}
    assert all(r["per_response"] == 100.0 and r["per_dialog"] == 100.0 for r in nn)
    assert all(r["n_items"] == 6 and r["n_conversations"] == 2 for r in recs)


def test_merge_records_replaces_same_rows_and_keeps_run_order():
    from dialeval.baselines.reproduce import merge_records

    old = [{"model": "tfidf", "task": 1, "split": s, "v": 0} for s in ("tst", "tst-OOV")]
    old += [{"model": "tfidf", "task": 2, "split": "tst", "v": 0}]
    new = [{"model": "memn2n", "task": 1, "split": "tst", "v": 1}, {"model": "tfidf", "task": 2, "split": "tst", "v": 2}]
    out = merge_records(old, new)
    assert [(r["model"], r["task"], r["split"], r["v"]) for r in out] == [
        ("tfidf", 1, "tst", 0), ("tfidf", 1, "tst-OOV", 0), ("memn2n", 1, "tst", 1), ("tfidf", 2, "tst", 2)]


def test_neural_targets():
    from dialeval.baselines.registry import REGISTRY, BaselineSpec
    from dialeval.baselines.reproduce import meets_target, target_for

    spec = BaselineSpec("x-memn2n-match", "nowhere:X", "test", True, "MemNN + match")
    REGISTRY[spec.name] = spec
    try:
        assert target_for(spec.name, 4) == ("exact", 100.0, 100.0)
        assert target_for(spec.name, 1)[0] == "paper±5"
        rec = {"model": spec.name, "task": 1, "split": "tst", "per_response": 96.0, "paper_per_response": 100.0}
        assert meets_target(rec) is True
        assert meets_target({**rec, "per_response": 94.0}) is False
    finally:
        del REGISTRY[spec.name]


def test_check_flag_exits_1_on_a_missed_target(tmp_path, data):
    import subprocess
    import sys

    for split in ("trn", "tst-OOV"):
        (data / f"dialog-babi-task1-API-calls-{split}.txt").write_text(TST)
    # TF-IDF's target is the paper ±3 (5.6 on T1): on these handmade turns it is far off.
    args = [sys.executable, "-m", "dialeval", "reproduce", "babi", "--data", str(data), "--out", str(tmp_path / "o"),
            "--models", "tfidf", "--tasks", "1"]
    plain = subprocess.run(args, capture_output=True, text=True)
    checked = subprocess.run([*args, "--check"], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    assert checked.returncode == 1
    assert "target(s) missed" in checked.stderr and "T1 tst" in checked.stderr
    assert "per-response" not in checked.stdout  # progress goes to stderr
    assert json.loads((tmp_path / "o" / "babi-table2.json").read_text())[0]["model"] == "tfidf"


# ---------------------------------------------------------------------------------------------------------------
# real data


@needs_babi
@pytest.mark.realdata
def test_real_sizes_and_perfect_submission(tmp_path):
    sizes = {t: len(load_items(BABI, t, "tst", with_gold=False)) for t in range(1, 7)}
    assert sizes == {1: 5936, 2: 9464, 3: 10018, 4: 3498, 5: 18398, 6: 11237}
    s = load_items(BABI, 6, "tst")
    assert len(s.candidates) == 2407 and all(s.gold)
    sub = ranked(*((i, [sorted(g)[0]]) for i, g in zip(s.item_ids, s.gold, strict=True)))
    ev = run(tmp_path, BABI, sub, groups=["6"])
    assert ev.valid and len(ev.table) == 11237 and len(set(ev.table.conversation_id)) == 1117
    assert get("per-dialog-accuracy").compute(ev.table) == 1.0


@needs_babi
@pytest.mark.realdata
def test_fact_shape_agrees_with_the_tab_on_the_release():
    """One notion of a fact: the TAB in FB files, the shape where the TAB is gone (DSTC6 utterances). They agree on
    every line of tasks 1-5; task 6's ``api_call no result`` lines are facts by the TAB only."""
    from dialeval.formats.fbdialog import is_fact_text, iter_lines

    for task, name in ((1, "dialog-babi-task1-API-calls"), (5, "dialog-babi-task5-full-dialogs"),
                       (6, "dialog-babi-task6-dstc2")):
        lines = list(iter_lines(BABI / f"{name}-tst.txt"))
        differ = {ln.user for ln in lines if is_fact_text(ln.user) != (ln.bot is None)}
        assert differ == (set() if task < 6 else {"api_call no result"}), (task, sorted(differ)[:5])


@needs_babi
@pytest.mark.realdata
def test_real_splits_present():
    assert Babi().splits(BABI) == ["trn", "dev", "tst", "tst-OOV"]


@pytest.mark.slow
@needs_babi
@pytest.mark.realdata
def test_reproduction_numbers_equal_the_stored_table():
    """Task 4 (the smallest) with the fast models: the same numbers as submissions/baselines/babi-table2.json."""
    from dialeval.baselines.reproduce import reproduce_babi

    stored = json.loads((Path(__file__).resolve().parents[1] / "submissions/baselines/babi-table2.json").read_text())
    models = ["random", "tfidf", "nearest-neighbor", "rule-based"]  # the table also holds the neural models' rows
    want = {(r["model"], r["split"]): (r["per_response"], r["per_dialog"]) for r in stored
            if r["task"] == 4 and r["model"] in models}
    recs = reproduce_babi(BABI, models, [4])
    got = {(r["model"], r["split"]): (r["per_response"], r["per_dialog"]) for r in recs}
    assert got == want


# ---------------------------------------------------------------------------------------------------------------
# every reproduced row is signed: the number's scoring (data identity, split, options) and what made it

SAMPLE_BABI = Path(__file__).resolve().parents[1] / "submissions" / "samples" / "babi"
STORED_TABLES = ("babi-table2.json", "babi-table2.variants.json", "babi-neural.json", "babi-neural-gpu.json",
                 "babi-neural-profile-cpu.json", "babi-neural-se-variants.json", "babi-neural-gpu-profile.json")


def _sig(text: str) -> dict[str, str]:
    from dialeval.core.signature import Signature

    return dict(Signature.parse(text).fields)


def test_reproduce_signs_each_row_with_the_scoring_model_settings_and_seed():
    """Before: a row was signed as `score --task N` signs the number alone; two models (or two settings, or seeds)
    of one task signed alike. Now the model, a digest of its settings and the seed follow."""
    from dialeval.baselines.reproduce import babi_signature, record_signature, reproduce_babi, run_variants

    recs = reproduce_babi(SAMPLE_BABI, ["rule-based", "tfidf"], [1])
    scored, _ = babi_signature(str(SAMPLE_BABI), 1, "tst")
    for r in recs:
        assert r["signature"] == record_signature(SAMPLE_BABI, r)  # what a stored row is checked against
        fields = _sig(r["signature"])
        assert {k: v for k, v in fields.items() if k not in ("model", "params", "seed")} == _sig(
            babi_signature(str(SAMPLE_BABI), 1, r["split"])[0])
        assert (fields["model"], fields["seed"], fields["ties"]) == (r["model"], "0", "none")
    assert len({_sig(r["signature"])["params"] for r in recs}) == 2  # two models' settings
    assert recs[0]["signature"].startswith(scored.partition("|v:")[0] + "|model:rule-based|params:")
    # another seed, other settings: other signatures
    seeded = reproduce_babi(SAMPLE_BABI, ["tfidf"], [1], seed=3)
    assert _sig(seeded[0]["signature"])["seed"] == "3"
    other = reproduce_babi(SAMPLE_BABI, ["tfidf"], [1], params={"unseen": "max"})
    tfidf = next(r for r in recs if r["model"] == "tfidf")
    assert _sig(other[0]["signature"])["params"] != _sig(tfidf["signature"])["params"]
    # a variant row (fixed settings) is signed from them
    var = run_variants(SAMPLE_BABI, ["tfidf"], [1])
    assert all(v["signature"] == record_signature(SAMPLE_BABI, v) and "|model:tfidf|" in v["signature"] for v in var)
    assert len({_sig(v["signature"])["params"] for v in var if v["split"] == "tst"}) == len(var) // 2


@needs_babi
@pytest.mark.realdata
@pytest.mark.parametrize("table", STORED_TABLES)
def test_stored_tables_carry_the_signature_reproduce_gives_their_rows(table):
    """The stored rows were made on the full bAbI release (../shared/data/babi-dialog) and signed afterwards from
    their own fields (`benchmarks/reproduce_neural.py sign`, no retraining): each signature is what `dialeval
    reproduce babi` signs a row of that config with on that data."""
    from dialeval.baselines.reproduce import record_signature

    rows = json.loads((Path(__file__).resolve().parents[1] / "submissions" / "baselines" / table).read_text())
    for r in rows:
        assert "signature" in r, (table, r["model"], r["task"], r["split"])
        fields = _sig(r["signature"])
        assert fields["data"].startswith(f"babi-dialog/{r['split']}#")  # the published release, by name
        assert (fields["model"], fields["task"], fields["split"]) == (r["model"], str(r["task"]), r["split"])
        assert r["signature"] == record_signature(BABI, r), (table, r["model"], r["task"], r["split"])
