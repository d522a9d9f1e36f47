"""The generic item-set reader: DSTC6 result format keyed by item ids, JSON scores, .npy/.csv matrices.

Items are built by hand (two groups, per-item and shared candidate lists, several golds), so every
expected rank and every problem is known.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from dialeval.benchmarks.items import ItemSet, score_items
from dialeval.core.errors import UsageError
from dialeval.formats.scores import open_npy_rows, read_csv_matrix

SECRET = "gold-answer-7f3"  # a gold id that must never show up in a message


def sets():
    # group A: per-item candidate lists (DSTC6-like); group B: one shared list (Movie Dialog-like), several golds
    a = ItemSet(
        "A",
        ["A:1", "A:2", "A:3"],
        [("x", SECRET, "y"), ("p", "q", "r", "s"), ("m", "n")],
        [frozenset({SECRET}), frozenset({"s"}), frozenset({"m"})],
        conversation_ids=["c1", "c1", "c2"],
        turns=[1, 2, 1],
    )
    b = ItemSet("B", ["B:1", "B:2"], ("e1", "e2", "e3", "e4", "e5"), [frozenset({"e2", "e4"}), frozenset({"e5"})])
    return [a, b]


def run(tmp_path, doc, name="sub.json", **kw):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    kw.setdefault("ties", "pessimistic")
    kw.setdefault("scoring", True)
    return score_items(p, kw.pop("item_sets", None) or sets(), benchmark="bench", split="test", **kw)


def ranked(iid, *cids):
    return {"dialog_id": iid, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(cids, 1)]}


def no_secret(problems):
    assert all(SECRET not in p.format() for p in problems)


def test_ranked_form_gold_ranks_groups_and_columns(tmp_path):
    doc = [
        ranked("A:1", "y", SECRET, "x"),
        ranked("A:2", "s"),
        ranked("A:3", "n"),  # partial top-1 without the gold: a miss
        ranked("B:1", "e1", "e3", "e4", "e2"),  # best gold at rank 3
        ranked("B:2", "e5"),
    ]
    table, problems, info = run(tmp_path, doc, nested=(2,))
    assert problems == []
    assert info["format"] == "dstc6-result" and info["kind"] == "file" and len(info["sha256"]) == 64
    assert table.item_id.tolist() == ["A:1", "A:2", "A:3", "B:1", "B:2"]
    assert table.group.tolist() == ["A", "A", "A", "B", "B"]
    assert table.gold_rank.tolist() == [2, 1, 0, 3, 1]
    assert table.n_candidates.tolist() == [3, 4, 2, 5, 5]
    assert table.conversation_id.tolist() == ["c1", "c1", "c2", "B:1", "B:2"]
    assert table.turn.tolist() == [1, 2, 1, 0, 0]
    assert table.split.tolist() == ["test"] * 5 and set(table.benchmark.tolist()) == {"bench"}
    # among the first 2 candidates: A:1's gold is 2nd of (x, gold) but x is ranked below it -> 1;
    # A:2's gold (s) is not among the first two -> 0; B:1: e2 among (e1, e2), e1 above it -> 2
    assert table.nested[2][0].tolist() == [1, 0, 0, 2, 0]


def test_ranked_form_every_problem_at_once_with_pointers(tmp_path):
    doc = [
        ranked("A:1", "x", "nope"),
        {"dialog_id": "A:2", "lst_candidate_id": [{"candidate_id": "p", "rank": 1}, {"candidate_id": "p", "rank": 2}]},
        {"dialog_id": "A:3", "lst_candidate_id": [{"candidate_id": "m", "rank": 1}, {"candidate_id": "n", "rank": 1}]},
        {"dialog_id": "B:1", "lst_candidate_id": [{"candidate_id": "e1", "rank": 1}, {"candidate_id": "e2", "rank": 3}]},
        {"dialog_id": "B:2", "lst_candidate_id": [{"candidate_id": "e1", "rank": 9}, {"candidate_id": "e2", "rank": 1.0}]},
        ranked("A:1", "x"),
        ranked("Z:9", "x"),
        {"dialog_id": 5, "lst_candidate_id": "x", "extra": 1},
        "item",
        {"dialog_id": "A:2"},
        {"dialog_id": "A:3", "lst_candidate_id": []},
        {"dialog_id": "B:1", "lst_candidate_id": [{"candidate_id": 3, "rank": True, "why": 0}, 7]},
    ]
    _, problems, _ = run(tmp_path, doc)
    got = [(p.code, p.pointer) for p in problems]
    assert got == [
        ("unknown-candidate", "/0/lst_candidate_id/1/candidate_id"),
        ("duplicate-candidate", "/1/lst_candidate_id/1/candidate_id"),
        ("duplicate-rank", "/2/lst_candidate_id/1/rank"),
        ("rank-gap", "/3/lst_candidate_id"),
        ("rank-out-of-range", "/4/lst_candidate_id/0/rank"),
        ("rank-not-integer", "/4/lst_candidate_id/1/rank"),
        ("duplicate-dialog", "/5/dialog_id"),
        ("unknown-dialog", "/6/dialog_id"),
        ("unknown-key", "/7/extra"),
        ("wrong-type", "/7/dialog_id"),
        ("wrong-type", "/7/lst_candidate_id"),
        ("item-not-object", "/8"),
        ("missing-key", "/9"),
        ("duplicate-dialog", "/9/dialog_id"),
        ("duplicate-dialog", "/10/dialog_id"),
        ("empty-ranking", "/10/lst_candidate_id"),
        ("duplicate-dialog", "/11/dialog_id"),
        ("unknown-key", "/11/lst_candidate_id/0/why"),
        ("wrong-type", "/11/lst_candidate_id/0/candidate_id"),
        ("rank-not-integer", "/11/lst_candidate_id/0/rank"),
        ("item-not-object", "/11/lst_candidate_id/1"),
    ]
    assert all(p.severity == "error" and p.file == "sub.json" for p in problems)
    assert "rank 9 is outside 1..5" in problems[4].message
    no_secret(problems)


def test_missing_items_are_warnings_and_misses(tmp_path):
    table, problems, _ = run(tmp_path, [ranked("A:1", SECRET)])
    assert table.gold_rank.tolist() == [1, 0, 0, 0, 0]
    assert [(p.code, p.severity) for p in problems] == [("task-hint", "warning")] + [("missing-dialog", "warning")] * 4
    assert "--task A scores just those" in problems[0].message  # only group A is ranked
    assert "B:2" in problems[-1].message
    no_secret(problems)


def test_many_missing_items_are_summarised(tmp_path):
    big = ItemSet("G", [f"g:{i}" for i in range(50)], ("a", "b"), [frozenset({"a"})] * 50)
    _, problems, _ = run(tmp_path, [ranked("g:0", "a")], item_sets=[big])
    assert len(problems) == 21
    assert "49 items of split test" in problems[-1].message


def test_validation_only_needs_no_gold(tmp_path):
    s = [ItemSet(x.group, x.item_ids, x.candidates, None) for x in sets()]
    table, problems, _ = run(tmp_path, [ranked("A:1", "x"), ranked("B:1", "e9")], item_sets=s, scoring=False)
    assert table is None
    assert [p.code for p in problems if p.severity == "error"] == ["unknown-candidate"]


def test_scores_form_multi_gold_and_nested(tmp_path):
    doc = {"format": "scores", "items": {
        "A:1": {"x": 0.1, SECRET: 0.9, "y": 0.5},
        "A:2": {"p": 4, "q": 3, "r": 2, "s": 1},
        "A:3": {"m": -1.5, "n": -2.5},
        "B:1": {"e1": 1, "e2": 0.2, "e3": 0.3, "e4": 0.8, "e5": 0.0},  # best gold e4 second
        "B:2": {"e1": 0, "e2": 0, "e3": 0, "e4": 0, "e5": 0},
    }}
    for policy, rank, ties in (("pessimistic", [1, 4, 1, 2, 5], [0] * 5), ("expected", [1, 4, 1, 2, 1], [0, 0, 0, 0, 4])):
        table, problems, info = run(tmp_path, doc, ties=policy, nested=(2, 4))
        assert problems == [] and info["format"] == "scores"
        assert table.gold_rank.tolist() == rank and table.ties.tolist() == ties
    # first 2: A:1 gold beats x; A:2 gold (s) outside; A:3 first; B:1 e2 behind e1; B:2 gold outside
    assert table.nested[2][0].tolist() == [1, 0, 1, 2, 0]
    # first 4: B:1 best gold e4 behind e1 -> 2
    assert table.nested[4][0].tolist() == [1, 4, 1, 2, 0]


def test_scores_form_problems(tmp_path):
    doc = (
        '{"format": "scores", "items": {"A:1": {"x": "1", "y": true, "' + SECRET + '": NaN}, "A/2": {"p": 1},'
        ' "A:3": [1, 2], "B:1": {"e1": null, "e2": -Infinity}}}'
    )
    _, problems, _ = run(tmp_path, doc)
    got = [(p.code, p.pointer) for p in problems]
    assert got == [
        ("score-not-number", "/items/A:1/x"),
        ("score-not-number", "/items/A:1/y"),
        ("score-not-finite", f"/items/A:1/{SECRET}"),
        ("wrong-type", "/items/A:3"),
        ("score-not-number", "/items/B:1/e1"),
        ("score-not-finite", "/items/B:1/e2"),
    ]
    # messages never name a candidate the submission did not write; this one scored the gold id itself
    assert all(SECRET not in p.message for p in problems)


def test_scores_form_cross_file_problems(tmp_path):
    doc = {"format": "scores", "items": {"A:1": {"x": 1, "zz": 2}, "Q:1": {"x": 1}, "B:1": {"e1": 1e308}}}
    _, problems, _ = run(tmp_path, doc)
    errors = [(p.code, p.pointer) for p in problems if p.severity == "error"]
    assert errors == [("unknown-candidate", "/items/A:1/zz"), ("unknown-dialog", "/items/Q:1")]
    warnings = {p.code for p in problems if p.severity == "warning"}
    assert warnings == {"missing-dialog", "unscored-candidate"}
    no_secret(problems)


def test_scores_document_shape_problems(tmp_path):
    _, p1, _ = run(tmp_path, {"format": "ranks", "items": {}, "extra": 1})
    assert [(p.code, p.pointer) for p in p1] == [("wrong-type", "/format"), ("unknown-key", "/extra")]
    _, p2, _ = run(tmp_path, {"format": "scores"})
    assert [p.code for p in p2] == ["missing-key"]
    _, p3, _ = run(tmp_path, '"just a string"')
    assert [p.code for p in p3] == ["unknown-format"]


def test_matrix_needs_uniform_candidate_counts(tmp_path):
    np.save(tmp_path / "m.npy", np.zeros((5, 5)))
    _, problems, _ = score_items(tmp_path / "m.npy", sets(), benchmark="b", split="t", ties="expected", scoring=True)
    assert [p.code for p in problems] == ["wrong-shape"]
    assert "different numbers of candidates" in problems[0].message


def test_matrix_rows_follow_item_order_and_multi_gold(tmp_path):
    s = sets()[1]
    m = np.array([[5, 1, 2, 4, 3], [1, 2, 3, 4, 5]], dtype=np.float32)  # B:1 best gold e4 at rank 2; B:2 e5 first
    np.save(tmp_path / "m.npy", m)
    table, problems, info = score_items(tmp_path / "m.npy", [s], benchmark="b", split="t", ties="expected", scoring=True, nested=(2, 5))
    assert problems == [] and info["columns"] == 5
    assert table.gold_rank.tolist() == [2, 1]
    assert table.nested[2][0].tolist() == [2, 0]
    assert table.nested[5][0].tolist() == [2, 1]


def read_npy_matrix(path):
    """The header reader, then the size check the scorer makes before reading the data."""
    src, faults = open_npy_rows(path)
    if src is not None and src.size_fault() is not None:
        return None, [src.size_fault()]
    return src, faults


@pytest.mark.parametrize(
    "array,code,text",
    [
        (np.zeros((5, 5), dtype=bool), "wrong-dtype", "dtype bool"),
        (np.zeros((5, 5), dtype=complex), "wrong-dtype", "complex128"),
        (np.array([["a"] * 5] * 5), "wrong-dtype", "<U1"),
        (np.zeros(5), "wrong-shape", "not 2-D"),
        (np.zeros((2, 5, 1)), "wrong-shape", "not 2-D"),
    ],
)
def test_npy_wrong_dtype_or_shape(tmp_path, array, code, text):
    np.save(tmp_path / "m.npy", array)
    m, faults = read_npy_matrix(tmp_path / "m.npy")
    assert m is None and [f.code for f in faults] == [code] and text in faults[0].message


def test_npy_unreadable(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    assert [f.code for f in read_npy_matrix(tmp_path / "o.npy")[1]] == ["wrong-dtype"]
    np.save(tmp_path / "t.npy", np.zeros((100, 10)))
    raw = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(raw[:500])
    assert [f.code for f in read_npy_matrix(tmp_path / "t.npy")[1]] == ["unreadable-matrix"]
    (tmp_path / "x.npy").write_bytes(b"not numpy at all")
    assert [f.code for f in read_npy_matrix(tmp_path / "x.npy")[1]] == ["unreadable-matrix"]
    with pytest.raises(UsageError, match="no such file"):
        read_npy_matrix(tmp_path / "absent.npy")


def test_csv_matrix_problems_name_the_line(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("1,2,3\n4,5\n\n7,x,9\n\n")
    m, faults = read_csv_matrix(p)
    assert m is None
    assert [(f.code, f.pointer, f.message) for f in faults] == [
        ("wrong-shape", "/1", "line 2: 2 scores, but line 1 has 3"),
        ("wrong-shape", "/2", "line 3: empty line; expected a row of scores"),
        ("score-not-number", "/3/1", 'line 4, column 2: "x" is not a number'),
    ]  # the blank line at the end is no row: ignored
    p.write_text("")
    assert [f.code for f in read_csv_matrix(p)[1]] == ["empty-file"]
    p.write_text("1.5, -2e-3 ,7\n")
    m, faults = read_csv_matrix(p)
    assert faults == [] and m.tolist() == [[1.5, -0.002, 7.0]]


def test_unknown_tie_policy_and_directory_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="tie policy"):
        run(tmp_path, [], ties="random")
    with pytest.raises(UsageError, match="directory"):
        score_items(tmp_path, sets(), benchmark="b", split="t", ties="expected", scoring=True)


def _reference_ranks(m, gold_cols, policy):
    """Rank of the best gold per row, by the definitions (s above, t other non-gold tied), one row at a time."""
    ranks, ties = [], []
    for row, golds in zip(m.tolist(), gold_cols, strict=True):
        if not golds:
            ranks.append(0)
            ties.append(0)
            continue
        best = max(row[c] for c in golds)
        s = sum(1 for v in row if v > best)
        t = sum(1 for j, v in enumerate(row) if v == best and j not in golds)
        r, tt = {"pessimistic": (s + t + 1, 0), "optimistic": (s + 1, 0), "expected": (s + 1, t)}[policy]
        ranks.append(r)
        ties.append(tt)
    return ranks, ties


@pytest.mark.parametrize("policy", ["pessimistic", "optimistic", "expected"])
@pytest.mark.parametrize("width", [6, 80])
def test_npy_streamed_in_small_chunks_equals_row_by_row_ranks(tmp_path, monkeypatch, policy, width):
    # chunks of a few rows cross the boundary between the two item sets; scores on a coarse grid give many ties;
    # set B has rows with two golds and rows whose gold is not among the candidates
    from dialeval.formats import scores

    monkeypatch.setattr(scores, "CHUNK_ELEMENTS", 3 * width)
    rng = np.random.default_rng(7)
    cands = tuple(f"c{j}" for j in range(width))
    n_a, n_b = 11, 13
    gold_a = rng.integers(0, width, n_a)
    a = ItemSet("A", [f"A:{i}" for i in range(n_a)], cands, [frozenset({cands[g]}) for g in gold_a])
    gold_b = [frozenset(cands[j] for j in rng.choice(width, size=int(rng.integers(0, 3)), replace=False)) for _ in range(n_b)]
    b = ItemSet("B", [f"B:{i}" for i in range(n_b)], cands, gold_b)
    m = rng.integers(0, 4, size=(n_a + n_b, width)).astype(np.float32)
    np.save(tmp_path / "m.npy", m)
    table, problems, _ = score_items(tmp_path / "m.npy", [a, b], benchmark="b", split="t", ties=policy, scoring=True,
                                     nested=(2, 5))
    assert problems == []
    cols = [{int(g)} for g in gold_a] + [{cands.index(c) for c in g} for g in gold_b]
    assert (table.gold_rank.tolist(), table.ties.tolist()) == _reference_ranks(m, cols, policy)
    for n in (2, 5):
        r, t = _reference_ranks(m[:, :n], [{c for c in g if c < n} for g in cols], policy)
        assert (table.nested[n][0].tolist(), table.nested[n][1].tolist()) == (r, t)


def test_npy_non_finite_found_in_every_chunk_with_its_row(tmp_path, monkeypatch):
    from dialeval.formats import scores

    monkeypatch.setattr(scores, "CHUNK_ELEMENTS", 20)  # two rows of ten per chunk
    m = np.ones((9, 10), np.float32)
    m[0, 3], m[5, 0], m[8, 9] = np.nan, np.inf, -np.inf
    m[4, 1] = 3e38  # finite, but its square overflows: not a fault
    np.save(tmp_path / "m.npy", m)
    s = ItemSet("T", [f"t:{i}" for i in range(9)], tuple(f"c{j}" for j in range(10)), [frozenset({"c0"})] * 9)
    _, problems, _ = score_items(tmp_path / "m.npy", [s], benchmark="b", split="t", ties="expected", scoring=True)
    assert [(p.code, p.pointer) for p in problems] == [("score-not-finite", "/0/3"), ("score-not-finite", "/5/0"),
                                                      ("score-not-finite", "/8/9")]
    assert problems[1].message == "row 6, column 1: score inf is not a finite number"


def test_npy_fortran_order_big_endian_and_truncated(tmp_path):
    s = ItemSet("T", ["t:1", "t:2"], ("a", "b", "c"), [frozenset({"b"})] * 2)
    m = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    for name, arr in (("f.npy", np.asfortranarray(m)), ("be.npy", m.astype(">f8")), ("i.npy", (m * 2).astype(np.int16))):
        np.save(tmp_path / name, arr)
        table, problems, _ = score_items(tmp_path / name, [s], benchmark="b", split="t", ties="expected", scoring=True)
        assert problems == [] and table.gold_rank.tolist() == [2, 2], name
    raw = (tmp_path / "be.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(raw[:-4])
    _, problems, _ = score_items(tmp_path / "cut.npy", [s], benchmark="b", split="t", ties="expected", scoring=True)
    assert [p.code for p in problems] == ["unreadable-matrix"]


@pytest.mark.parametrize("extra", [b"", b"trailing bytes after the data"])
def test_npy_sha256_is_the_whole_files_while_streamed(tmp_path, monkeypatch, extra):
    import hashlib

    from dialeval.formats import scores

    monkeypatch.setattr(scores, "CHUNK_ELEMENTS", 30)  # many chunks, more than the buffers in rotation
    rng = np.random.default_rng(5)
    np.save(tmp_path / "m.npy", rng.random((40, 3)))
    with open(tmp_path / "m.npy", "ab") as fh:
        fh.write(extra)
    s = ItemSet("T", [f"t:{i}" for i in range(40)], ("a", "b", "c"), [frozenset({"a"})] * 40)
    table, problems, info = score_items(tmp_path / "m.npy", [s], benchmark="b", split="t", ties="expected", scoring=True)
    assert problems == [] and len(table) == 40
    assert info["sha256"] == hashlib.sha256((tmp_path / "m.npy").read_bytes()).hexdigest()
    # a file refused before its data is read is still identified
    _, problems, info = score_items(tmp_path / "m.npy", [s, s], benchmark="b", split="t", ties="expected", scoring=True)
    assert [p.code for p in problems] == ["wrong-shape"]
    assert info["sha256"] == hashlib.sha256((tmp_path / "m.npy").read_bytes()).hexdigest()


# ---- hardening: one checker, bounded problems, content faults are problems ----------------------------------


def test_ranked_form_unknown_item_rank_is_capped_fast_and_keys_get_a_suggestion(tmp_path):
    import time

    doc = [{"dialog_id": "Z:1", "lst_candidate_id": [{"candidate_id": "x", "rank": 10**9}, {"candidate_id": "y", "rank": 1}]},
           {"dialog_id": "A:1", "lst_candidate_id": [{"candidate_id": "x", "ranks": 1}]}]
    t = time.monotonic()
    _, problems, _ = run(tmp_path, doc)
    assert time.monotonic() - t < 2
    by_code = {p.code: p.message for p in problems}
    assert "rank 1000000000 is outside 1..5 (no item of split test has more candidates)" == by_code["rank-out-of-range"]
    assert 'did you mean "rank"?' in by_code["unknown-key"]
    assert "rank-gap" not in by_code


def test_problems_are_capped_per_code_with_one_line_without_a_code(tmp_path):
    doc = {"format": "scores", "items": {f"Z:{i}": {"x": 1.0} for i in range(100)}}
    _, problems, _ = run(tmp_path, doc)
    codes = [p.code for p in problems]
    assert codes.count("unknown-dialog") == 20
    marker = problems[-1]
    assert marker.code == "" and marker.message == "... 80 more problems not listed (unknown-dialog 80)"
    assert codes.count("missing-dialog") == 5  # the five items of the sets, each a warning


@pytest.mark.parametrize("content,code", [
    (b'\xef\xbb\xbf{"format": "scores", "items": {}}', "bad-encoding"),
    (b'{"format": "scores", "items": {}} and more', "not-json"),
    (b'{"format": "scores", "items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "json-too-deep"),
    (b"\x1f\x8b\x08\x00" + b"\x00" * 30, "wrong-file-type"),
    (b"", "empty-file"),
])
def test_unreadable_json_is_a_problem_not_a_usage_error(tmp_path, content, code):
    (tmp_path / "sub.json").write_bytes(content)
    _, problems, _ = score_items(tmp_path / "sub.json", sets(), benchmark="b", split="t", ties="expected", scoring=True)
    assert [p.code for p in problems if p.severity == "error"][:1] == [code]


def test_scores_json_duplicate_keys_and_huge_integers(tmp_path):
    raw = '{"format": "scores", "items": {"B:1": {"e1": 1, "e1": 2}, "B:2": {"e5": 1}, "B:1": {"e2": 3}}}'
    _, problems, _ = run(tmp_path, raw)
    assert [(p.code, p.pointer) for p in problems if p.severity == "error"] == [
        ("duplicate-candidate", "/items/B:1/e1"), ("duplicate-dialog", "/items/B:1")]
    raw = '{"format": "scores", "items": {"B:1": {"e1": 1' + "7" * 400 + ', "e2": -9223372036854775808}}}'
    _, problems, _ = run(tmp_path, raw)
    assert [(p.code, p.pointer) for p in problems if p.severity == "error"] == [("score-out-of-range", "/items/B:1/e1")]


def test_csv_quoted_crlf_and_bounded_by_what_the_split_can_hold(tmp_path):
    p = tmp_path / "m.csv"
    p.write_bytes(b'"1.5", 2 ,"3"\r\n4,5,6\r\n\r\n')
    m, faults = read_csv_matrix(p)
    assert faults == [] and m.tolist() == [[1.5, 2.0, 3.0], [4.0, 5.0, 6.0]]
    p.write_bytes(b"1," * 100_000 + b"1\n")
    m, faults = read_csv_matrix(p, max_columns=10)
    assert m is None and [f.message for f in faults] == ["100001 scores per line, but each item has 10 candidates"]
    p.write_bytes(b"1,2\n" * 50)
    m, faults = read_csv_matrix(p, max_rows=3)
    assert m is None and [f.message for f in faults] == ["50 lines, but the split has 3 items (one line per item, in order)"]


def test_npy_lying_header_is_judged_before_any_allocation(tmp_path):
    import struct

    body = b"{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 5), }"
    body += b" " * ((-(10 + len(body) + 1)) % 64) + b"\n"
    (tmp_path / "m.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body)
    _, problems, _ = score_items(tmp_path / "m.npy", [sets()[1]], benchmark="b", split="t", ties="expected", scoring=True)
    assert [p.code for p in problems] == ["wrong-shape"] and "1000000000000 rows" in problems[0].message
    (tmp_path / "m.npy").write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body[:20])
    src, faults = open_npy_rows(tmp_path / "m.npy")
    assert src is None and [f.code for f in faults] == ["unreadable-matrix"] and "inside its .npy header" in faults[0].message
