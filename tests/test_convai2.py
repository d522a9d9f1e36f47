"""ConvAI2: the reader, ParlAI's answer normalisation, hits@k of 20 candidates and token F1, each number checked
against a hand computation on a constructed file in ParlAI's FB dialog format."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from dialeval.api import score, validate
from dialeval.core.errors import UsageError
from dialeval.formats.convai2 import read_turns
from dialeval.metrics.answer import normalize_answer, token_f1

sys.path.insert(0, str(Path(__file__).parent))
from convai2_files import write_turns  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "submissions" / "samples" / "convai2"


def _cands(label: str, tag: str, extra: list[str] = ()) -> list[str]:
    """19 distractors (``extra`` first) then the gold last, as in the release."""
    rest = [f"distractor {tag} {j}" for j in range(19 - len(extra))]
    return [*extra, *rest, label]


# turn 2's label "The beach, I like!" is written differently from both candidate 1 ("BEACH, I LIKE") and 20
# ("beach i like"); all three normalise to "beach i like", so the turn has two golds: 1 and 20
DIALOGS = [
    (["i like dogs .", "i am a teacher ."],
     [("hi", "Hello there, friend!", _cands("Hello there, friend!", "a")),
      ("do you swim ?", "The beach, I like!", _cands("beach i like", "b", ["BEACH, I LIKE"]))]),
    (["i play chess ."],
     [("hey", "an apple a day .", _cands("an apple a day .", "c")),
      ("what now ?", "chess is my game .", _cands("chess is my game .", "d"))]),
]
IDS = ["valid_self_original:1:3", "valid_self_original:1:4", "valid_self_original:2:2", "valid_self_original:2:3"]


@pytest.fixture
def data(tmp_path) -> Path:
    p = tmp_path / "valid_self_original.txt"
    write_turns(p, [(persona, [(t, lab, c) for t, lab, c in turns]) for persona, turns in DIALOGS])
    return p


def _scores(path: Path, items: dict) -> Path:
    path.write_text(json.dumps({"format": "scores", "items": items}))
    return path


def _values(report) -> dict[str, float]:
    return {m: report.value(m) for m in report.metrics}


# ---- normalisation and F1 ---------------------------------------------------------------------------------------
def test_normalize_answer_follows_parlai():
    assert normalize_answer("The Cat's HAT!") == "cat s hat"
    assert normalize_answer("an apple, a day; the end") == "apple day end"
    assert normalize_answer("theater anthem") == "theater anthem"  # articles only as whole words
    assert normalize_answer("snake_case  and\ttabs-too") == "snake case and tabs too"
    assert normalize_answer("café’s") == "café’s"  # only ASCII punctuation goes, as in ParlAI
    assert normalize_answer("...") == ""


def test_normalize_answer_fast_path_is_the_regex_definition():
    """The word-by-word path equals the definition (punctuation to spaces, then ``\\b(a|an|the)\\b`` to a space,
    then white space collapsed) on random strings mixing articles, punctuation, Unicode letters and spaces, and
    characters that are neither word characters nor punctuation (where ``\\b`` falls inside a word)."""
    import random
    import re
    import string

    table = str.maketrans({c: " " for c in string.punctuation})

    def definition(s: str) -> str:
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", s.lower().translate(table)).split())

    rng = random.Random(0)
    alphabet = [*"abcdefghijklmnopqrstuvwxyzTHEAN0123456789 \t\n_-'.,!?’…éß\x01\xa0\u2028\u200b", "the", "an", "a", "The"]
    for _ in range(50_000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert normalize_answer(s) == definition(s), repr(s)
    assert normalize_answer("a’s the…end") == "’s …end"  # \b between "a" and "’": dropped, as the regex does


def test_token_f1_by_hand():
    assert token_f1("A cat sat, on the MAT!!", ["the cat sat on a mat ."]) == 1.0
    # "cat dog" vs "cat sat on mat": 1 common token, P = 1/2, R = 1/4, F1 = 2PR / (P + R) = 1/3
    assert token_f1("cat dog", ["cat sat on mat"]) == pytest.approx(1 / 3)
    # repeated tokens count as a multiset: "a b b" vs "b b b c" -> common 2, P = 2/3, R = 2/4, F1 = 4/7
    assert token_f1("x b b", ["b b b c"]) == pytest.approx(4 / 7)
    assert token_f1("", ["anything"]) == 0.0 and token_f1("the", ["a"]) == 0.0
    assert token_f1("cat", ["dog", "cat"]) == 1.0  # the best over the labels


# ---- the reader ---------------------------------------------------------------------------------------------------
def test_reader_ids_labels_and_gold(data):
    t = read_turns(data)
    assert t.item_ids == IDS
    assert t.conversation_ids == ["valid_self_original:1"] * 2 + ["valid_self_original:2"] * 2
    assert t.turns == [1, 2, 1, 2] and len(t.candidates(1)) == 20
    from dialeval.benchmarks.convai2 import _load

    _, gold = _load(data)
    assert gold == [{"20"}, {"1", "20"}, {"20"}, {"20"}]


@pytest.mark.parametrize("line, message", [
    ("1 hi\tsecretword\t\t" + "|".join(["secretword"] * 19), r":1: 19 candidates; a ConvAI2 turn has 20"),
    ("1 hi\tsecretword", r":1: expected 'N text<TAB>label<TAB>reward<TAB>candidates'"),
    ("1 hi\tsecretword\t\tx\textra", r":1: expected 'N text<TAB>label<TAB>reward<TAB>candidates'"),
    ("1 hi\t\t\t" + "|".join(["secretword"] * 20), r":1: the turn has no label"),
    ("x hi\tsecretword\t\t" + "|".join(["secretword"] * 20), r":1: expected 'ID text'"),
    ("1 your persona: only context", r"no turns"),
])
def test_malformed_data_is_one_usage_error_naming_the_line(tmp_path, line, message):
    p = tmp_path / "valid_self_original.txt"
    p.write_text(line + "\n")
    with pytest.raises(UsageError, match=message) as e:
        score(_scores(tmp_path / "s.json", {}), benchmark="convai2", data=p)
    assert "secretword" not in str(e.value) and "\n" not in str(e.value)


def test_label_that_is_no_candidate_is_named_by_turn_not_text(tmp_path):
    p = tmp_path / "valid_self_original.txt"
    write_turns(p, [(["p ."], [("hi", "secret gold reply", [f"c{j}" for j in range(20)])])])
    with pytest.raises(UsageError, match=r"turn valid_self_original:1:2: no candidate equals the label") as e:
        score(_scores(tmp_path / "s.json", {}), benchmark="convai2", data=p)
    assert "secret" not in str(e.value)


# ---- hits@k -------------------------------------------------------------------------------------------------------
def test_ties_at_the_cut_off_by_hand(data, tmp_path):
    """Turn 1: 3 candidates above the gold and 3 tied with it. Pessimistic rank 7, optimistic 4; expected hits@5 =
    (5 - 3) / (3 + 1) = 0.5. The other turns put their gold first."""
    first = {str(j): 0.0 for j in range(1, 21)}
    t1 = {str(j): 0.0 for j in range(1, 21)}
    t1.update({"1": 3.0, "2": 3.0, "3": 3.0, "4": 1.0, "5": 1.0, "6": 1.0, "20": 1.0})
    items = {IDS[0]: t1, **{i: {**first, "20": 1.0} for i in IDS[1:]}}
    sub = _scores(tmp_path / "s.json", items)
    got = {ties: _values(score(sub, benchmark="convai2", data=data, ties=ties)) for ties in
           ("pessimistic", "optimistic", "expected")}
    assert got["pessimistic"] == {"hits@1": 0.75, "hits@5": 0.75, "hits@10": 1.0}
    assert got["optimistic"] == {"hits@1": 0.75, "hits@5": 1.0, "hits@10": 1.0}
    assert got["expected"] == {"hits@1": 0.75, "hits@5": (3 + 0.5) / 4, "hits@10": 1.0}


def test_two_golds_after_normalisation_count_the_better(data, tmp_path):
    """Turn 2 ranks gold candidate 1 first and gold candidate 20 last: a hit at 1; the other turns are missing."""
    order = ["1", *(str(j) for j in range(2, 20)), "20"]
    ranked = [{"dialog_id": IDS[1], "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(order, 1)]}]
    sub = tmp_path / "r.json"
    sub.write_text(json.dumps(ranked))
    rep = score(sub, benchmark="convai2", data=data)
    assert rep.valid and _values(rep) == {"hits@1": 0.25, "hits@5": 0.25, "hits@10": 0.25}  # 3 turns missing
    assert sum(p.code == "missing-dialog" for p in rep.problems) == 3


def test_candidates_by_text_score_as_by_position(data, tmp_path):
    """The same rankings, once by position and once by text (case and punctuation changed): the same numbers."""
    turns = read_turns(data)
    rng = np.random.default_rng(5)
    by_pos, by_text = [], []
    for i, iid in enumerate(IDS):
        order = (rng.permutation(20) + 1).tolist()
        cands = turns.candidates(i)
        by_pos.append({"dialog_id": iid, "lst_candidate_id": [{"candidate_id": str(c), "rank": r}
                                                              for r, c in enumerate(order, 1)]})
        by_text.append({"dialog_id": iid, "lst_candidate_id": [{"candidate_id": cands[c - 1].upper() + " !", "rank": r}
                                                               for r, c in enumerate(order, 1)]})
    (tmp_path / "pos.json").write_text(json.dumps(by_pos))
    (tmp_path / "text.json").write_text(json.dumps(by_text))
    a = score(tmp_path / "pos.json", benchmark="convai2", data=data)
    b = score(tmp_path / "text.json", benchmark="convai2", data=data)
    assert a.valid and b.valid and _values(a) == _values(b)
    assert list(a.table.gold_rank) == list(b.table.gold_rank)
    # by hand: the rank of the best gold in each permutation
    gold = [{20}, {1, 20}, {20}, {20}]
    ranks = [min(order.index(g) + 1 for g in gs) for order, gs in
             zip(([int(e["candidate_id"]) for e in x["lst_candidate_id"]] for x in by_pos), gold, strict=True)]
    assert list(a.table.gold_rank) == ranks


def test_scores_by_text_and_a_candidate_named_twice(data, tmp_path):
    """Scores keyed by text; the gold of turn 1 named by its position and by its text counts once (its higher
    score), so the turn is a hit."""
    turns = read_turns(data)
    items = {iid: {t: float(j) for j, t in enumerate(turns.candidates(i))} for i, iid in enumerate(IDS)}
    items[IDS[0]]["20"] = 100.0  # the gold (text scored 19, the highest already) named again by position
    rep = score(_scores(tmp_path / "s.json", items), benchmark="convai2", data=data)
    # text scores rise with the position: the gold (last) is first everywhere
    assert rep.valid and _values(rep) == {"hits@1": 1.0, "hits@5": 1.0, "hits@10": 1.0}


def test_unknown_candidates_are_errors_that_echo_only_the_submission(data, tmp_path):
    items = {IDS[0]: {"21": 1.0, "no such reply": 0.5, **{str(j): 0.0 for j in range(1, 21)}}}
    rep = validate(_scores(tmp_path / "s.json", items), benchmark="convai2", data=data)
    assert not rep.valid
    msgs = [p.message for p in rep.problems if p.code == "unknown-candidate"]
    assert len(msgs) == 2 and any('"21"' in m for m in msgs) and any("no such reply" in m for m in msgs)
    assert not any("Hello there" in p.message for p in rep.problems)


def test_npy_matrix_in_file_order(data, tmp_path):
    m = np.zeros((4, 20))
    m[:, 19] = 1.0  # the gold column everywhere
    m[2, :5] = 2.0  # turn 3: five above the gold -> rank 6
    np.save(tmp_path / "m.npy", m)
    assert _values(score(tmp_path / "m.npy", benchmark="convai2", data=data)) == \
        {"hits@1": 0.75, "hits@5": 0.75, "hits@10": 1.0}


# ---- generated replies: token F1 ---------------------------------------------------------------------------------
def test_generated_replies_get_token_f1(data, tmp_path):
    sub = tmp_path / "replies.txt"
    # turn 1 exact after normalisation (1.0); turn 2 "i like" vs "beach i like" (P 1, R 2/3 -> 0.8);
    # turn 3 "apple" vs "apple day" (P 1, R 1/2 -> 2/3); turn 4 nothing in common (0)
    sub.write_text("hello THERE friend\nI like.\nan apple\nno\n")
    rep = score(sub, benchmark="convai2", data=data)
    assert rep.valid and rep.metrics == ["f1"]
    assert rep.table.values["f1"].tolist() == pytest.approx([1.0, 0.8, 2 / 3, 0.0])
    assert _values(rep)["f1"] == pytest.approx((1.0 + 0.8 + 2 / 3) / 4)


@pytest.mark.parametrize("text, message", [("a\nb\nc\n", "3 lines, but the file has 4 turns"),
                                           ("a\nb\nc\nd\ne\n", "more than 4 lines")])
def test_reply_file_of_the_wrong_length_is_one_error(data, tmp_path, text, message):
    sub = tmp_path / "replies.txt"
    sub.write_text(text)
    rep = score(sub, benchmark="convai2", data=data)
    assert not rep.valid and [p.code for p in rep.problems] == ["wrong-shape"] and message in rep.problems[0].message


# ---- data layout and the command line -----------------------------------------------------------------------------
def test_folder_data_and_split_choice(tmp_path, data):
    folder = tmp_path / "ConvAI2"
    folder.mkdir()
    (tmp_path / "empty").mkdir()
    (folder / "valid_self_original.txt").write_bytes(data.read_bytes())
    (folder / "train_self_original.txt").write_bytes(data.read_bytes())
    sub = _scores(tmp_path / "s.json", {})
    with pytest.raises(UsageError, match="give --split"):
        validate(sub, benchmark="convai2", data=folder)
    with pytest.raises(UsageError, match="s.json: neither a ConvAI2 file"):
        validate(sub, benchmark="convai2", data=tmp_path / "s.json")
    with pytest.raises(UsageError, match="no split 'test': the ConvAI2 test set was never released .*--split valid"):
        validate(sub, benchmark="convai2", data=data, split="test")
    with pytest.raises(UsageError, match="nor a folder holding train_self_original.txt or valid_self_original.txt"):
        validate(sub, benchmark="convai2", data=tmp_path / "empty")


def test_issue_example_runs_as_written(cli, tmp_path):
    """``dialeval score scores.json --benchmark convai2 --data valid_self_original.txt --split valid``."""
    data = tmp_path / "valid_self_original.txt"
    data.write_bytes((SAMPLE / "valid_self_original.txt").read_bytes())
    turns = read_turns(data)
    _scores(tmp_path / "scores.json", {iid: {"20": 1.0, "1": 0.5} for iid in turns.item_ids})
    r = cli("score", "scores.json", "--benchmark", "convai2", "--data", "valid_self_original.txt", "--split", "valid",
            "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {x["metric"]: x["value"] for x in doc["results"]} == {"hits@1": 1.0, "hits@5": 1.0, "hits@10": 1.0}
    assert "|ties:pessimistic" in doc["results"][0]["signature"]


# ---- the release: its published sha256 is what `data fetch` checks -------------------------------------------------
PUBLISHED = "d0ae89defe2fd0b0a4221eaa642a457d7d40cef475f54798119c7f3b8dd9361d"  # ParlAI's convai2/build.py


def _registry_with(url: str, sha256: str, path: Path) -> Path:
    """The shipped convai2 entry, its archive URL pointed at a loopback server."""
    doc = json.loads((Path(__file__).resolve().parents[1] / "evaluator" / "files" / "releases.json").read_text())
    entry = next(r for r in doc["releases"] if r["name"] == "convai2")
    entry["archives"] = [{**entry["archives"][0], "url": url, "sha256": sha256}]
    doc["releases"] = [entry]
    path.write_text(json.dumps(doc))
    return path


def test_shipped_entry_carries_the_published_checksum():
    from dialeval.files.releases import registry

    rel = registry(Path(__file__).resolve().parents[1] / "evaluator" / "files" / "releases.json").get("convai2")
    assert rel.benchmark == "convai2" and rel.splits == ["train", "valid"] and rel.marker == "valid_self_original.txt"
    assert [(a.url, a.sha256) for a in rel.archives] == [("http://parl.ai/downloads/convai2/convai2_fix_723.tgz",
                                                          PUBLISHED)]


def test_fetch_checks_the_sha256_then_data_name_scores(tmp_path):
    """An archive that is not the published one is refused; one whose sha256 the registry lists is unpacked and
    ``--data convai2`` then reads it."""
    import hashlib

    from test_releases import Server, tgz

    body = tgz({"valid_self_original.txt": (SAMPLE / "valid_self_original.txt").read_bytes()})
    server = Server()
    try:
        server.routes["/convai2_fix_723.tgz"] = ("ok", body)
        url = server.url("/convai2_fix_723.tgz")
        env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache"), "DIALEVAL_FETCH_TIMEOUT": "5"}
        from conftest import run_cli

        env["DIALEVAL_RELEASES"] = str(_registry_with(url, PUBLISHED, tmp_path / "published.json"))
        r = run_cli("data", "fetch", "convai2", env=env)
        errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
        assert r.returncode == 2 and len(errors) == 1 and "sha256 is not the published d0ae89de" in errors[0]
        env["DIALEVAL_RELEASES"] = str(_registry_with(url, hashlib.sha256(body).hexdigest(), tmp_path / "ok.json"))
        r = run_cli("data", "fetch", "convai2", env=env)
        assert r.returncode == 0, r.stderr
        turns = read_turns(Path(r.stdout.strip()) / "valid_self_original.txt")
        _scores(tmp_path / "s.json", {iid: {"20": 1.0} for iid in turns.item_ids})
        r = run_cli("score", tmp_path / "s.json", "--benchmark", "convai2", "--data", "convai2", "--split", "valid",
                    "--json", env=env)
        assert r.returncode == 0, r.stderr
        assert {x["metric"]: x["value"] for x in json.loads(r.stdout)["results"]} == \
            {"hits@1": 1.0, "hits@5": 1.0, "hits@10": 1.0}
    finally:
        server.close()


def test_input_order_ties_rank_the_last_candidate_gold_last(tmp_path):
    """The README's warning, measured: one score for all 20 candidates of every sample turn. The release puts the
    gold last, so the file's order ranks it 20th (as pessimistic does); expected gives hits@k = k / 20."""
    data = SAMPLE / "valid_self_original.txt"
    sub = _scores(tmp_path / "flat.json", {iid: {p: 0.5 for p in map(str, range(1, 21))}
                                           for iid in read_turns(data).item_ids})
    got = {t: _values(score(sub, benchmark="convai2", data=data, ties=t)) for t in ("input-order", "expected")}
    assert got["input-order"] == {"hits@1": 0.0, "hits@5": 0.0, "hits@10": 0.0}
    assert got["expected"] == pytest.approx({"hits@1": 0.05, "hits@5": 0.25, "hits@10": 0.5})


@pytest.mark.parametrize("columns", ["20", "200"])
def test_protocols_columns_stay_apart_piped_at_any_width(cli, tmp_path, columns):
    """``--protocols`` side by side: HITS@10 is as wide as a value, and the header once ran ``HITS@5HITS@10``."""
    data = tmp_path / "valid_self_original.txt"
    data.write_bytes((SAMPLE / "valid_self_original.txt").read_bytes())
    # the gold (20) tied with candidate 1: pessimistic ranks it 2nd, optimistic 1st
    _scores(tmp_path / "scores.json", {iid: {"20": 1.0, "1": 1.0} for iid in read_turns(data).item_ids})
    r = cli("score", "scores.json", "--benchmark", "convai2", "--data", data.name, "--protocols", cwd=tmp_path,
            env={"COLUMNS": columns})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("every tie policy:"))
    assert lines[head].split()[3:] == ["ties", "HITS@1", "HITS@5", "HITS@10", "n"]
    rows = {ln.split()[0]: ln.split()[1:] for ln in lines[head + 1:head + 5]}
    assert rows == {"pessimistic": ["0.0000", "1.0000", "1.0000", "9"], "optimistic": ["1.0000", "1.0000", "1.0000", "9"],
                    "expected": ["0.5000", "1.0000", "1.0000", "9"], "input-order": ["0.0000", "1.0000", "1.0000", "9"]}
    # each value ends under its column's name
    ends = [lines[head].index(h) + len(h) for h in ("HITS@1", "HITS@5", "HITS@10")]
    assert all(ln[:e].endswith(v) for ln in lines[head + 1:head + 5] for e, v in zip(ends, ln.split()[1:4], strict=True))


# ---- F1 of a ranking's top candidate (ParlAI's f1 for ranking models) ---------------------------------------------
TOP_CANDS = (["i love cats", "my dog is old", *(f"filler {j}" for j in range(17)), "I love my dog."],
             ["a blue sky", *(f"filler {j}" for j in range(18)), "The sea is blue."])
TOP_IDS = ["valid_self_original:1:2", "valid_self_original:1:3"]


@pytest.fixture
def top_data(tmp_path) -> Path:
    """Turn 1: label "i love my dog" (4 tokens after normalisation); candidate 1 "i love cats" shares i, love
    (P 2/3, R 2/4: F1 4/7), candidate 2 "my dog is old" shares my, dog (P 2/4, R 2/4: F1 1/2), candidate 20 is the
    gold (F1 1). Turn 2: label "sea is blue" (3 tokens); candidate 1 "blue sky" shares blue (P 1/2, R 1/3: F1 2/5)."""
    return write_turns(tmp_path / "valid_self_original.txt", [(["i have a dog ."], [
        ("what pet ?", "I love my dog.", list(TOP_CANDS[0])), ("and the sea ?", "The sea is blue.", list(TOP_CANDS[1]))])])


def _top_scores(tmp_path) -> Path:
    """Turn 1: candidates 1, 2 and 20 tie at the top; turn 2: candidate 1 alone at the top, the gold below it."""
    t1 = {str(j): 0.0 for j in range(1, 21)} | {"1": 2.0, "2": 2.0, "20": 2.0}
    t2 = {str(j): 0.0 for j in range(1, 21)} | {"1": 1.0, "20": 0.5}
    return _scores(tmp_path / "s.json", {TOP_IDS[0]: t1, TOP_IDS[1]: t2})


@pytest.mark.parametrize("ties, turn1", [("pessimistic", 1 / 2), ("optimistic", 1.0), ("input-order", 4 / 7),
                                         ("expected", (4 / 7 + 1 / 2 + 1) / 3)])
def test_the_top_candidates_f1_under_each_tie_policy_by_hand(top_data, tmp_path, ties, turn1):
    """A tie at the top is settled on F1 itself: the lowest, the highest, the first in the line, or their mean."""
    rep = score(_top_scores(tmp_path), benchmark="convai2", data=top_data, ties=ties,
                metrics=["hits@1", "hits@5", "hits@10", "f1"])
    assert rep.valid
    assert rep.table.values["f1"].tolist() == pytest.approx([turn1, 2 / 5])
    assert rep.value("f1") == pytest.approx((turn1 + 2 / 5) / 2)
    assert rep.metrics == ["hits@1", "hits@5", "hits@10", "f1"]


def test_a_score_matrix_gives_the_same_top_f1(top_data, tmp_path):
    rows = np.zeros((2, 20))
    rows[0, [0, 1, 19]] = 2.0
    rows[1, [0, 19]] = [1.0, 0.5]
    np.save(tmp_path / "s.npy", rows)
    got = {ties: score(tmp_path / "s.npy", benchmark="convai2", data=top_data, ties=ties, metrics=["f1"]).value("f1")
           for ties in ("pessimistic", "optimistic", "input-order")}
    assert got == pytest.approx({"pessimistic": (1 / 2 + 2 / 5) / 2, "optimistic": (1 + 2 / 5) / 2,
                                 "input-order": (4 / 7 + 2 / 5) / 2})


def test_a_ranking_by_text_takes_its_first_candidate_and_a_missing_turn_scores_0(top_data, tmp_path):
    """Turn 1 ranks "my dog is old" (named by its text, written differently) first: F1 1/2; turn 2 is missing."""
    order = ["MY DOG, is old!", "20", "1", *(str(j) for j in range(3, 20))]
    ranked = [{"dialog_id": TOP_IDS[0], "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(order, 1)]}]
    (tmp_path / "r.json").write_text(json.dumps(ranked))
    rep = score(tmp_path / "r.json", benchmark="convai2", data=top_data, metrics=["hits@1", "f1"])
    assert rep.valid and rep.table.values["f1"].tolist() == [0.5, 0.0]
    assert rep.value("f1") == 0.25 and rep.value("hits@1") == 0.0


def test_the_default_metrics_of_a_ranking_are_unchanged(top_data, tmp_path):
    """f1 of the top candidate is asked for with --metrics: the default report stays hits@1/5/10."""
    assert score(_top_scores(tmp_path), benchmark="convai2", data=top_data).metrics == ["hits@1", "hits@5", "hits@10"]
