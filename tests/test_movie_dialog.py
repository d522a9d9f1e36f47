"""The Movie Dialog benchmark: entity splitting, ids, hits@k on constructed files (ids, text, scores, matrices),
task 3 by turn, Reddit candidates, bad input, and the real dev files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dialeval.benchmarks.base import Request
from dialeval.benchmarks.movie_dialog import MovieDialog, groups_by_turn, load_task
from dialeval.core.errors import UsageError
from dialeval.formats.movie import normalize_text, read_entities, split_answer
from dialeval.metrics import get

SHARED = Path(__file__).resolve().parents[2] / "shared"
MOVIE = SHARED / "data" / "movie-dialog"
needs_movie = pytest.mark.skipif(not MOVIE.is_dir(), reason=f"real Movie Dialog data not found at {MOVIE}")

ENTITIES = [
    "Girl, Interrupted",  # e1
    "Alien",  # e2
    "Aliens",  # e3
    "Dance, Girl, Dance",  # e4
    "Winona Ryder",  # e5
    "James Cameron",  # e6
    "The Abyss",  # e7
    "Titanic",  # e8
    "will arnett",  # e9
    "Will Arnett",  # e10
    "Drama",  # e11
    "Ridley Scott",  # e12
    "300",  # e13
]
E = {t: f"e{i}" for i, t in enumerate(ENTITIES, 1)}


def write_data(d: Path, split: str = "test") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "entities.txt").write_text("\n".join(ENTITIES) + "\n")
    (d / f"task1_qa_{split}.txt").write_text(
        "1 what movies did Winona Ryder act in?\tGirl, Interrupted, Alien\n"  # two golds, one with a comma
        "1 what did James Cameron direct?\tAliens, The Abyss, Titanic\n"
        "1 who directed Alien?\tRidley Scott\n"
    )
    (d / f"task3_qarecs_{split}.txt").write_text(
        "1 I liked Alien. Suggest a drama?\tTitanic\n2 Who directed that?\tJames Cameron\n3 Any other?\tThe Abyss\n"
        "\n"
        "1 I liked 300. Something else?\tAliens\n2 Who directed it?\tJames Cameron\n3 More?\tAlien\n"
    )
    (d / f"task4_reddit_{split}.txt").write_text(
        "1 best sci-fi sequel?\tAliens , no contest .\n2 agreed\tFair enough .\n\n1 thoughts on Titanic?\tMeh .\n"
    )
    (d / f"task4_reddit_cand-{split}.txt").write_text(
        "1 MORTAL KOMBAT !\n\n1 Fair enough .\n\n1 Fair enough .\n\n1 I loved it\n"
    )
    return d


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return write_data(tmp_path / "movie")


def ranked(*pairs) -> list[dict]:
    return [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]}
            for i, ids in pairs]


def run(tmp_path, data, sub, groups=None, split="test", ties="pessimistic", name="sub.json"):
    p = tmp_path / name
    if isinstance(sub, np.ndarray):
        np.save(p, sub)
    else:
        p.write_text(json.dumps(sub))
    return MovieDialog().evaluate(Request(p, data, split, groups=groups, ties=ties))


def hits(ev, k):
    return get(f"hits@{k}").compute(ev.table)


# ---- entities and answers --------------------------------------------------------------------------------------


def test_split_answer_never_on_the_comma(data):
    ents = read_entities(data / "entities.txt")
    assert split_answer("Girl, Interrupted, Alien", ents) == ([E["Girl, Interrupted"], E["Alien"]], 0)
    assert split_answer("Alien, Aliens", ents) == ([E["Alien"], E["Aliens"]], 0)
    assert split_answer("Dance, Girl, Dance, Girl, Interrupted", ents) == ([E["Dance, Girl, Dance"],
                                                                           E["Girl, Interrupted"]], 0)
    assert split_answer("Alien", ents) == ([E["Alien"]], 0)
    # exact text first, else the same text ignoring case (the first such entity in file order)
    assert split_answer("Will Arnett", ents) == ([E["Will Arnett"]], 0)
    assert split_answer("TITANIC", ents) == ([E["Titanic"]], 0)
    # parts that match nothing are counted, not guessed; the rest still splits
    assert split_answer("Alien, Nope, Girl, Interrupted", ents) == ([E["Alien"], E["Girl, Interrupted"]], 1)
    assert split_answer("Nope, Nada", ents) == ([], 2)


def _split_exhaustively(answer: str, ents) -> tuple[list[str], int]:
    """The rule of split_answer by brute force: every piece of every length tried, the path copied at each step."""
    parts = answer.split(", ")
    n = len(parts)
    best = {n: (0, 0, [])}
    for i in range(n - 1, -1, -1):
        choice = None
        for j in range(n, i, -1):
            piece = ", ".join(parts[i:j])
            eid = ents.by_text.get(piece) or ents.by_lower.get(piece.lower())
            if eid is not None:
                cand = (best[j][0], best[j][1] + 1, [eid, *best[j][2]])
                if choice is None or cand[:2] < choice[:2]:
                    choice = cand
        skip = (best[i + 1][0] + 1, best[i + 1][1], best[i + 1][2])
        best[i] = skip if choice is None or skip[:2] < choice[:2] else choice
    return list(dict.fromkeys(best[0][2])), best[0][0]


@pytest.fixture(params=["dicts", "compact"])
def entity_form(request, monkeypatch):
    """Both forms of the entity set: plain dicts (the release's size) and the compact one of a long list."""
    if request.param == "compact":
        from dialeval.formats import movie

        monkeypatch.setattr(movie, "COMPACT_FROM", 0)
    return request.param


def test_split_answer_equals_the_exhaustive_search(tmp_path, entity_form):
    import random

    rng = random.Random(5)
    words = ["a", "A", "b", "c", "ΣΑΣ", "σας", "x y", " ", "a,", ",", "İ", "i̇"]
    for trial in range(300):
        texts = [", ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 8))]
        p = tmp_path / f"e{trial}.txt"
        p.write_text("\n".join(texts) + "\n", encoding="utf-8")
        ents = read_entities(p)
        for _ in range(10):
            answer = ", ".join(rng.choice(words + texts) for _ in range(rng.randint(0, 7)))
            assert split_answer(answer, ents) == _split_exhaustively(answer, ents), (texts, answer)


class _CountingDict(dict):
    calls = 0

    def get(self, key, default=None):
        type(self).calls += 1
        return super().get(key, default)


def test_split_answer_is_linear(data):
    """Only pieces as long as some entity are looked up: a fixed number per part, whatever the answer's length."""
    ents = read_entities(data / "entities.txt")
    assert ents.part_counts == (3, 2, 1)  # "Dance, Girl, Dance", "Girl, Interrupted", the rest
    ents.by_text = _CountingDict(ents.by_text)
    for n in (250, 1000, 4000):
        _CountingDict.calls = 0
        ids, unmatched = split_answer(", ".join(["Alien", "Girl", "Interrupted", "nope"] * (n // 4)), ents)
        assert ids == [E["Alien"], E["Girl, Interrupted"]] and unmatched == n // 4
        assert _CountingDict.calls <= 3 * n


REAL_DEV_ANSWERS_SHA256 = "f3296453292f8f915ece49749369fc6b84ce54c3ec8083c617a962bbbdcd7ce9"
"""sha256 of ``split_answer`` (ids, unmatched parts) of every real dev answer of tasks 1-3, one JSON line each,
computed with the dict-only entity set before the compact one existed (issue 28)."""


@needs_movie
@pytest.mark.realdata
def test_real_dev_answers_unchanged(entity_form):
    import hashlib

    ents = read_entities(MOVIE / "entities.txt")
    assert type(ents.by_text).__name__ == ("TextLookup" if entity_form == "compact" else "dict")
    h = hashlib.sha256()
    n = 0
    for name in ("task1_qa_dev.txt", "task2_recs_dev.txt", "task3_qarecs_dev.txt"):
        for line in (MOVIE / name).read_text(encoding="utf-8").splitlines():
            if "\t" in line:
                h.update(json.dumps(split_answer(line.split("\t", 1)[1], ents)).encode() + b"\n")
                n += 1
    assert n == 34691 and h.hexdigest() == REAL_DEV_ANSWERS_SHA256


@needs_movie
@pytest.mark.realdata
def test_split_answer_equals_the_exhaustive_search_on_real_answers():
    ents = read_entities(MOVIE / "entities.txt")
    n = 0
    for name in ("task1_qa_dev.txt", "task2_recs_dev.txt", "task3_qarecs_dev.txt"):
        for line in (MOVIE / name).read_text(encoding="utf-8").splitlines():
            if "\t" in line:
                answer = line.split("\t", 1)[1]
                assert split_answer(answer, ents) == _split_exhaustively(answer, ents), answer
                n += 1
    assert n == 34691


def test_entities_stream_like_the_old_reader(tmp_path, entity_form):
    """A BOM is dropped; CR LF and stray CRs end a line; a line of spaces is an entity; blank lines keep numbering."""
    p = tmp_path / "entities.txt"
    p.write_bytes(b"\xef\xbb\xbfAlien\r\n\r\n  \nTitanic\r\r\nno newline\n\xc3\xa9t\xc3\xa9, \xc3\x89T\xc3\x89\nAlien")
    ents = read_entities(p)
    assert list(ents.ids) == ["e1", "e3", "e4", "e5", "e6", "e7"]
    assert list(ents.texts) == ["Alien", "  ", "Titanic", "no newline", "été, ÉTÉ", "Alien"]
    assert ents.texts[-2] == "été, ÉTÉ" and ents.texts[1:3] == ["  ", "Titanic"]
    assert ents.by_text.get("Alien") == "e1" and ents.by_lower.get("été, été") == "e6"  # the first in file order
    assert ents.by_text.get("alien") is None and ents.by_lower.get("Alien") is None and ents.part_counts == (2, 1)
    assert "e3" in ents.ids and "e2" not in ents.ids and ents.ids.columns()["e7"] == 5


@pytest.mark.parametrize("n", [5, 300_000])  # a dict below LineIds.DICT_MAX, arithmetic above
@pytest.mark.parametrize("gap", [False, True])
def test_line_ids_read_ids_exactly(n, gap):
    from dialeval.core.ranks import LineIds

    numbers = np.arange(1, n + 1) + (np.arange(n) >= 2) * (1 if gap else 0)  # with a gap: 1, 2, 4, 5, ...
    ids = LineIds("e", numbers)
    cols = ids.columns()
    assert ids[0] == "e1" and ids[2] == ("e4" if gap else "e3") and ids[-1] == f"e{numbers[-1]}" and len(cols) == n
    assert cols.get("e1") == 0 and cols[ids[-1]] == n - 1 and (ids[2] in cols) and ids == list(ids)
    for bad in ("e0", "e01", "e", "e+1", "e 1", "e1 ", "E1", "x1", "e١", "e-1", f"e{numbers[-1] + 1}", "e" + "9" * 5000,
                1, None, ("e1",)):
        assert bad not in ids and cols.get(bad, "none") == "none", bad
    assert ("e3" in ids) is not gap


@pytest.mark.parametrize("raw, needle", [
    (b"\xff\xfeA\x00", "UTF-16"), (b"\x1f\x8b\x08\x00", "gzip"), (b"Alien\n\x00\x01", "binary"),
    (b"Alien\nCaf\xe9\n", "not UTF-8 text at line 2"),
])
def test_unreadable_entity_lists_are_usage_errors(tmp_path, raw, needle):
    from dialeval.core.errors import UnreadableInput

    p = tmp_path / "entities.txt"
    p.write_bytes(raw)
    with pytest.raises(UnreadableInput, match=needle):
        read_entities(p)


def test_entity_ids_are_line_numbers(tmp_path):
    p = tmp_path / "entities.txt"
    p.write_text("A\n\nB\n")
    ents = read_entities(p)
    assert ents.ids == ["e1", "e3"] and ents.texts == ["A", "B"]


def test_normalize_text():
    assert normalize_text("The Lord of the Rings: The Return of the King") == "lord of rings return of king"
    assert normalize_text("  Girl,  Interrupted! ") == "girl interrupted"
    assert normalize_text("An American in Paris") == "american in paris"
    assert normalize_text("Amélie") == "amélie"


# ---- ids and gold -------------------------------------------------------------------------------------------------


def test_item_ids_turns_and_gold(data):
    t1 = load_task(data, 1, "test", [])
    assert t1.item_ids == ["task1_qa_test:1:1", "task1_qa_test:2:1", "task1_qa_test:3:1"]
    assert len(t1.candidates) == len(ENTITIES) and t1.candidates[0] == "e1"
    assert t1.gold[0] == {E["Girl, Interrupted"], E["Alien"]}
    t3 = load_task(data, 3, "test", [])
    assert t3.item_ids[:4] == ["task3_qarecs_test:1:1", "task3_qarecs_test:1:2", "task3_qarecs_test:1:3",
                               "task3_qarecs_test:2:1"]
    assert t3.turns == [1, 2, 3, 1, 2, 3]
    assert t3.conversation_ids[2] == "task3_qarecs_test:1"


def test_reddit_candidates_and_gold(data):
    t4 = load_task(data, 4, "test", [])
    assert t4.candidates == ("c1", "c2", "c3", "c4", "reply")  # file candidates + the item's own reply
    assert t4.item_ids == ["task4_reddit_test:1:1", "task4_reddit_test:1:2", "task4_reddit_test:2:1"]
    # "Fair enough ." is also (twice) in the candidate file: those lines are gold as well
    assert t4.gold == [frozenset({"reply"}), frozenset({"reply", "c2", "c3"}), frozenset({"reply"})]


# ---- hits@k, hand computed ----------------------------------------------------------------------------------------


def test_hits_at_k_by_id(tmp_path, data):
    others = [e for e in E.values()]
    sub = ranked(
        # item 1: golds e1, e2; e2 at rank 3 -> hit@10 not hit@1
        ("task1_qa_test:1:1", ["e5", "e6", E["Alien"]]),
        # item 2: golds Aliens/The Abyss/Titanic; Titanic at rank 1
        ("task1_qa_test:2:1", [E["Titanic"], "e1"]),
        # item 3: gold Ridley Scott at rank 11 (every other entity first)
        ("task1_qa_test:3:1", [c for c in others if c != E["Ridley Scott"]][:10] + [E["Ridley Scott"]]),
    )
    ev = run(tmp_path, data, sub, groups=["1"])
    assert ev.valid, [p.format() for p in ev.problems]
    assert ev.table.gold_rank.tolist() == [3, 1, 11]
    assert hits(ev, 1) == pytest.approx(1 / 3)
    assert hits(ev, 10) == pytest.approx(2 / 3)
    assert hits(ev, 100) == pytest.approx(1.0)
    assert MovieDialog().metrics_for(ev) == ["hits@1", "hits@10", "hits@100"]
    assert ev.notes == [] and ev.signature_fields["gold"] == "id"


def test_text_candidates_exact_and_normalised(tmp_path, data):
    exact = ranked(("task1_qa_test:1:1", ["Winona Ryder", "Alien"]), ("task1_qa_test:2:1", ["Titanic"]),
                   ("task1_qa_test:3:1", ["Ridley Scott"]))
    ev = run(tmp_path, data, exact, groups=["1"])
    assert ev.valid and ev.table.gold_rank.tolist() == [2, 1, 1]
    assert "exact text" in ev.notes[0] and ev.signature_fields["gold"] == "id"
    # lower-case, no punctuation: compared as normalised text, and the report says so
    norm = ranked(("task1_qa_test:1:1", ["winona ryder", "girl interrupted"]), ("task1_qa_test:2:1", ["abyss"]),
                  ("task1_qa_test:3:1", ["james cameron", "RIDLEY SCOTT!"]))
    ev = run(tmp_path, data, norm, groups=["1"])
    assert ev.valid, [p.format() for p in ev.problems]
    assert ev.table.gold_rank.tolist() == [2, 1, 2]
    assert "normalised text" in ev.notes[0] and ev.signature_fields["gold"] == "normalised-text"
    assert [p.code for p in ev.problems] == ["text-normalised"]


def test_normalised_duplicates_merge(tmp_path, data):
    # "will arnett" and "Will Arnett" are two entities but one normalised text: one candidate, best rank kept
    sub = ranked(("task1_qa_test:3:1", ["Will Arnett", "will arnett!", "x-files", "ridley scott"]))
    ev = run(tmp_path, data, sub, groups=["1"])
    errors = [p for p in ev.problems if p.severity == "error"]
    assert [p.code for p in errors] == ["unknown-candidate"]  # "x-files" is no entity, even normalised
    sub = ranked(("task1_qa_test:3:1", ["Will Arnett", "will arnett!", "ridley scott"]))
    ev = run(tmp_path, data, sub, groups=["1"])
    assert ev.valid and ev.table.gold_rank.tolist()[2] == 2


def test_scores_json_with_ties_and_text_keys(tmp_path, data):
    doc = {"format": "scores", "items": {
        "task1_qa_test:1:1": {"Alien": 0.5, "Winona Ryder": 0.5, "Titanic": 0.9},  # gold tied with one, below one
        "task1_qa_test:2:1": {E["Titanic"]: 1.0},
        "task1_qa_test:3:1": {E["Ridley Scott"]: 0.0, "e1": 0.0},
    }}
    for ties, ranks in (("pessimistic", [3, 1, 2]), ("optimistic", [2, 1, 1])):
        ev = run(tmp_path, data, doc, groups=["1"], ties=ties)
        assert ev.valid and ev.table.gold_rank.tolist() == ranks
    ev = run(tmp_path, data, doc, groups=["1"], ties="expected")
    assert hits(ev, 1) == pytest.approx((0 + 1 + 0.5) / 3)


def test_npy_matrix(tmp_path, data):
    m = np.zeros((3, len(ENTITIES)), np.float32)
    m[0, 1] = 1.0  # Alien: gold of item 1, rank 1
    m[1, 0] = 2.0  # item 2: a non-gold first,
    m[1, 7] = 1.0  # Titanic second
    m[2] = np.arange(len(ENTITIES))  # Ridley Scott (e12) gets the second-highest score
    ev = run(tmp_path, data, m, groups=["1"], name="sub.npy")
    assert ev.valid and ev.table.gold_rank.tolist() == [1, 2, 2]


def test_task3_by_turn(tmp_path, data):
    sub = ranked(
        ("task3_qarecs_test:1:1", [E["Titanic"]]), ("task3_qarecs_test:1:2", [E["James Cameron"]]),
        ("task3_qarecs_test:1:3", ["e1"]),
        ("task3_qarecs_test:2:1", ["e1"]), ("task3_qarecs_test:2:2", [E["James Cameron"]]),
        ("task3_qarecs_test:2:3", [E["Alien"]]),
    )
    ev = run(tmp_path, data, sub, groups=["3"])
    assert hits(ev, 1) == pytest.approx(4 / 6)
    subsets = MovieDialog().subsets(ev.table)
    assert [label for label, _ in subsets] == ["turn 1", "turn 2", "turn 3"]
    by_turn = {label: get("hits@1").compute(ev.table.take(mask)) for label, mask in subsets}
    assert by_turn == {"turn 1": 0.5, "turn 2": 1.0, "turn 3": 0.5}
    assert groups_by_turn(ev.table)[0][1].tolist() == [True, False, False, True, False, False]


def test_task1_has_no_turn_breakdown(tmp_path, data):
    ev = run(tmp_path, data, ranked(("task1_qa_test:1:1", ["e1"])), groups=["1"])
    assert MovieDialog().subsets(ev.table) == []


def test_reddit_hits(tmp_path, data):
    sub = ranked(
        ("task4_reddit_test:1:1", ["c1", "reply"]),
        ("task4_reddit_test:1:2", ["c3", "c1"]),  # a candidate line with the reply's text is a hit
        ("task4_reddit_test:2:1", ["I loved it", "MORTAL KOMBAT !", "Meh ."]),  # texts: the reply's text is 'reply'
    )
    ev = run(tmp_path, data, sub, groups=["4"])
    assert ev.valid, [p.format() for p in ev.problems]
    assert ev.table.gold_rank.tolist() == [2, 1, 3]
    assert ev.table.n_candidates.tolist() == [5, 5, 5]


def test_all_tasks_in_one_file(tmp_path, data):
    sub = ranked(("task1_qa_test:2:1", [E["Titanic"]]), ("task3_qarecs_test:1:1", [E["Titanic"]]),
                 ("task4_reddit_test:2:1", ["reply"]))
    ev = run(tmp_path, data, sub)
    assert ev.groups == ["1", "3", "4"] and len(ev.table) == 3 + 6 + 3
    assert {p.code for p in ev.problems} == {"missing-dialog"}
    ev = run(tmp_path, data, sub, groups=["4"])  # other tasks' items: ignored, not errors, not "missing"
    assert ev.valid and len(ev.table) == 3
    assert all("task1" not in p.message for p in ev.problems)


# ---- bad input ----------------------------------------------------------------------------------------------------


def test_answer_matching_no_entity_is_a_warning_with_file_and_line(tmp_path, data):
    (data / "task1_qa_test.txt").write_text("1 q?\tAlien\n1 q2?\tAlien, Not An Entity\n1 q3?\tNothing Here\n")
    ev = run(tmp_path, data, ranked(("task1_qa_test:2:1", ["e2"]), ("task1_qa_test:3:1", ["e2"])), groups=["1"])
    warns = [p for p in ev.problems if p.code == "answer-not-entity"]
    assert len(warns) == 1
    w = warns[0]
    assert w.severity == "warning" and w.file == "task1_qa_test.txt"
    assert "line 2" in w.message and "lines 2, 3" in w.message and "1 of them match no entity" in w.message
    assert "Not An Entity" not in w.message and "Nothing Here" not in w.message  # answers are never echoed
    assert "\n" not in w.format()
    assert ev.table.gold_rank.tolist() == [0, 1, 0]  # item 3 has no gold: a miss for every system


def test_unknown_item_and_candidate(tmp_path, data):
    ev = run(tmp_path, data, ranked(("task1_qa_test:99:1", ["e1"]), ("task1_qa_test:1:1", ["e999"])), groups=["1"])
    errors = [p for p in ev.problems if p.severity == "error"]
    assert [p.code for p in errors] == ["unknown-dialog", "unknown-candidate"]
    assert all("\n" not in p.format() for p in errors)


def test_usage_errors(tmp_path, data):
    with pytest.raises(UsageError, match="tasks are 1-4"):
        run(tmp_path, data, [], groups=["5"])
    with pytest.raises(UsageError, match="no split 'dev'"):
        run(tmp_path, data, [], split="dev")
    (data / "task4_reddit_cand-test.txt").unlink()
    with pytest.raises(UsageError, match="no Reddit candidate file"):
        run(tmp_path, data, [], groups=["4"])
    assert run(tmp_path, data, ranked(("task1_qa_test:1:1", ["e1"])), groups=["1"]).valid  # task 4 not needed


def test_split_inferred_when_only_one(tmp_path, data):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(ranked(("task1_qa_test:1:1", ["e1"]))))
    ev = MovieDialog().evaluate(Request(p, data, None, groups=["1"]))
    assert ev.splits == ["test"]


def test_registered(data):
    from dialeval.benchmarks import registry

    b = registry.get("movie-dialog")
    assert b.splits(data) == ["test"]


# ---- real data ----------------------------------------------------------------------------------------------------


@needs_movie
@pytest.mark.realdata
def test_real_dev_files(tmp_path):
    probs = []
    sizes = {t: len(load_task(MOVIE, t, "dev", probs)) for t in (1, 2, 3)}
    assert sizes == {1: 9968, 2: 10000, 3: 14723}
    # seven task-1 dev answers have parts that are not in entities.txt (e.g. "20, 000 Leagues Under the Sea")
    assert [p.code for p in probs] == ["answer-not-entity"] and "7 answer(s)" in probs[0].message
    t1 = load_task(MOVIE, 1, "dev", [])
    assert len(t1.candidates) == 75542 and all(t1.gold)
    # answers with comma entities: more comma-separated parts than entities
    rows = [ln.split("\t")[1] for ln in (MOVIE / "task1_qa_dev.txt").read_text().splitlines() if "\t" in ln]
    assert sum(len(r.split(", ")) > len(g) for r, g in zip(rows, t1.gold, strict=True)) >= 80


@needs_movie
@pytest.mark.realdata
def test_real_perfect_and_text_submissions(tmp_path):
    from dialeval.formats.movie import load_entities

    t3 = load_task(MOVIE, 3, "dev", [])
    sub = ranked(*((i, sorted(g)) for i, g in zip(t3.item_ids, t3.gold, strict=True)))
    ev = run(tmp_path, MOVIE, sub, split="dev", groups=["3"])
    assert ev.valid and hits(ev, 1) == 1.0 and len(ev.table) == 14723
    assert [label for label, _ in MovieDialog().subsets(ev.table)] == ["turn 1", "turn 2", "turn 3"]
    # the same by exact entity text gives the same numbers
    ents, _ = load_entities(MOVIE)
    text = dict(zip(ents.ids, ents.texts, strict=True))
    sub = ranked(*((i, [text[c] for c in sorted(g)]) for i, g in zip(t3.item_ids, t3.gold, strict=True)))
    ev = run(tmp_path, MOVIE, sub, split="dev", groups=["3"])
    assert ev.valid and hits(ev, 1) == 1.0


@needs_movie
@pytest.mark.realdata
def test_real_reddit_candidate_file(tmp_path):
    from dialeval.formats.movie import load_reddit_candidates

    path, (ids, texts, _, _) = load_reddit_candidates(MOVIE, "dev")
    assert path.name == "task4_reddit_cand-valid.txt" and len(ids) == 10000 and ids[-1] == "c10000"


def test_id_only_score_document_needs_no_text_pass(tmp_path, data):
    from dialeval.benchmarks.movie_dialog import load_task
    from dialeval.formats.movie import ID_PATTERN
    from dialeval.formats.textnames import only_ids

    def _only_ids(raw: bytes, head: bytes) -> bool:
        return only_ids(raw, head, ID_PATTERN, lambda: [load_task(data, 1, "test", []).candidates])

    ids_doc = json.dumps({"format": "scores", "items": {"task1_qa_test:1:1": {"e2": 1.0, "e5": 0.5}}}).encode()
    text_doc = json.dumps({"format": "scores", "items": {"task1_qa_test:1:1": {"Alien": 1.0}}}).encode()
    assert _only_ids(ids_doc, b"{") is True
    assert _only_ids(text_doc, b"{") is False
    assert _only_ids(json.dumps(ranked(("x", ["e1", "reply"]))).encode(), b"[") is True
    assert _only_ids(json.dumps(ranked(("x", ["e1", "300"]))).encode(), b"[") is False
