"""The malformed-submission corpus: every row of metrics.md §1's table, and then some.

Each case is a small edit of a perfect submission for the tiny challenge (conftest.py: tasks 1-3, four
items each with 7, 8, 10 and 9 candidates; item ``i`` of the submission is item ``i % 4`` of task
``i // 4 + 1``). For every case:

* strict mode reports exactly the expected errors, each with its code and JSON pointer, all at once;
* ``--lenient`` gives the official scorer's numbers, checked against an independent re-implementation of
  the official algorithm below, or an ``official-crash`` error where the official script would crash;
* the CLI, run as a subprocess, exits 0/1/2 as it should, never prints a traceback, prints usage errors
  on one line, leaves ``--out FILE`` either untouched (exit 2) or complete;
* for single-file cases, the fast path and the published JSON Schema agree on structural validity.
"""

from __future__ import annotations

import gzip
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import TinyChallenge, deepcopy, make_challenge, ranking, run_cli, write_json

from dialeval.api import score
from dialeval.core.errors import UsageError
from dialeval.core.schemacheck import schema_problems

NB = 10  # the official nb_candidate default


# ---- an independent re-implementation of the official DSTC6 scorer (metrics.md §1) -------------------
class OfficialCrash(Exception):
    pass


def official_slots(sub, nb: int = NB) -> dict:
    """Per dialog, ``nb`` slots; each entry writes its candidate id into slot ``int(rank) - 1``.

    Python list semantics give the quirks: later entries overwrite earlier ones, rank 0/-1 index from the
    end, ranks below -nb raise IndexError; ranks above nb are skipped; duplicate dialogs: the last wins.
    """
    if not isinstance(sub, list):
        raise OfficialCrash("top level is not a list")
    slots: dict = {}
    for item in sub:
        if not isinstance(item, dict):
            raise OfficialCrash("item is not an object")
        if "dialog_id" not in item:
            continue  # the script prints an error and skips the item
        if "lst_candidate_id" not in item:
            raise OfficialCrash("exit 1")
        arr = [None] * nb
        try:
            for e in item["lst_candidate_id"]:
                cid, r = e["candidate_id"], int(e["rank"])
                if r <= nb:
                    arr[r - 1] = cid
            slots[item["dialog_id"]] = arr
        except (TypeError, ValueError, KeyError, IndexError, OverflowError) as ex:
            raise OfficialCrash(repr(ex)) from None
    return slots


def key_gold(key: list) -> dict:
    return {it["dialog_id"]: next((e["candidate_id"] for e in it["lst_candidate_id"] if e["rank"] == 1), None) for it in key}


def official_hits(slots: dict, key: list) -> dict[str, list[float]]:
    """Per key item: hit@1/2/5 and reciprocal rank. A key item without gold is a miss (dialeval's one
    documented deviation; the script would count a false hit on an empty slot)."""
    gold = key_gold(key)
    if not gold:
        raise ZeroDivisionError("empty answer key")
    out: dict[str, list[float]] = {"p@1": [], "p@2": [], "p@5": [], "mrr": []}
    for d, g in gold.items():
        s = slots.get(d)
        ok = s is not None and g is not None
        for k in (1, 2, 5):
            out[f"p@{k}"].append(float(ok and g in s[:k]))
        out["mrr"].append(1.0 / (s.index(g) + 1) if ok and g in s else 0.0)
    return out


def mean(xs) -> float:
    return sum(xs) / len(xs)


# ---- the corpus ----------------------------------------------------------------------------------------
class Dir(dict):
    """A directory-layout submission: relative path -> content (bytes or JSON data)."""


@dataclass
class Case:
    id: str
    build: Callable[[TinyChallenge], object]  # -> JSON data, raw bytes, or a Dir
    strict: set[tuple[str, str]] | str  # error (code, pointer) pairs, or "usage:<text in the message>"
    lenient: set[str] | str = "score"  # "score", a set of official-crash pointers, "usage", or "same" (as strict)
    warnings: tuple[tuple[str, str], ...] = ()  # strict warnings that must be present (code, pointer)
    key_edit: Callable[[TinyChallenge], None] | None = None
    schema_valid: bool | None = None  # for single JSON files: what the published schema says
    message: str = ""  # text that one strict error message must contain


def E(i: int, j: int, field: str = "") -> str:
    return f"/{i}/lst_candidate_id/{j}" + (f"/{field}" if field else "")


def edit(fn: Callable[[list, TinyChallenge], object]):
    def build(ch: TinyChallenge):
        data = ch.perfect()
        fn(data, ch)  # edits in place (its return value is ignored)
        return data

    return build


def set_rank(i, j, value):
    def fn(d, ch):
        d[i]["lst_candidate_id"][j]["rank"] = value

    return edit(fn)


def raw(fn: Callable[[TinyChallenge], bytes]):
    return fn


def _dup_dialog(d, ch):
    again = deepcopy(d[0])
    ids = ch.gold_first(again["dialog_id"])
    again["lst_candidate_id"] = ranking(again["dialog_id"], ids[1:3] + ids[:1] + ids[3:])["lst_candidate_id"]
    d.append(again)  # item 12: gold at rank 3 (the official scorer keeps this one)


def _null_ids(d, ch):
    d[1]["dialog_id"] = None
    d[2]["lst_candidate_id"][1]["candidate_id"] = None


def _extra_keys(d, ch):
    d[0]["score"] = 0.9
    d[3]["lst_candidate_id"][2]["a/b~c"] = 1


def _gap(d, ch):
    d[4]["lst_candidate_id"] = d[4]["lst_candidate_id"][:2] + [dict(d[4]["lst_candidate_id"][2], rank=4)]


def _dup_candidate(d, ch):
    d[5]["lst_candidate_id"][3]["candidate_id"] = d[5]["lst_candidate_id"][1]["candidate_id"]


def _three_errors(d, ch):
    d[1]["lst_candidate_id"][3]["rank"] = 1  # tie with the gold
    d[6]["lst_candidate_id"][4]["candidate_id"] = "not-a-candidate"
    d[10]["lst_candidate_id"][0]["rank"] = True


def _dir_files(ch: TinyChallenge, moves=None, extra=None) -> Dir:
    files = Dir()
    for t in ch.tasks:
        files[f"tst1/{ch.answers_name(t)}"] = ch.perfect([t])
    if moves:
        moves(files, ch)
    files.update(extra or {})
    return files


def _other_task_in_file(files, ch):
    t1, t2 = f"tst1/{ch.answers_name(1)}", f"tst1/{ch.answers_name(2)}"
    files[t1].append(files[t2].pop(0))  # a task-2 dialog at /4 of the task-1 file


def _key_no_gold(ch: TinyChallenge):
    key = ch.key_json(2)
    key[1]["lst_candidate_id"][0]["rank"] = 2
    ch.write_key(2, key)


def _key_empty(ch: TinyChallenge):
    ch.write_key(3, [])


def _partial_no_gold(d, ch):
    # every item ranks only its first non-gold candidate: nothing may print a gold id
    for it in d:
        it["lst_candidate_id"] = it["lst_candidate_id"][1:2]
        it["lst_candidate_id"][0]["rank"] = 1


DEEP = 100_000

CASES = [
    # metrics.md §1, row by row
    Case("tie-on-gold", set_rank(1, 3, 1), {("duplicate-rank", E(1, 3, "rank"))}, schema_valid=True),
    Case("rank-0", set_rank(2, 0, 0), {("rank-out-of-range", E(2, 0, "rank"))}, schema_valid=False),
    Case("rank-minus-1", set_rank(4, 0, -1), {("rank-out-of-range", E(4, 0, "rank"))}, schema_valid=False),
    Case("rank-below-minus-nb", set_rank(5, 2, -20), {("rank-out-of-range", E(5, 2, "rank"))}, {E(5, 2, "rank")},
         schema_valid=False),
    Case("rank-above-nb", set_rank(2, 0, 11), {("rank-out-of-range", E(2, 0, "rank"))}, schema_valid=True),
    Case("rank-above-candidates", set_rank(0, 0, 9), {("rank-out-of-range", E(0, 0, "rank"))}, schema_valid=True),
    Case("rank-huge", set_rank(6, 1, 10**30), {("rank-out-of-range", E(6, 1, "rank"))}, schema_valid=True),
    Case("rank-string-1", set_rank(3, 0, "1"), {("rank-not-integer", E(3, 0, "rank"))}, schema_valid=False),
    Case("rank-float-1.7", set_rank(7, 0, 1.7), {("rank-not-integer", E(7, 0, "rank"))}, schema_valid=False),
    Case("rank-string-1.0", set_rank(8, 0, "1.0"), {("rank-not-integer", E(8, 0, "rank"))}, {E(8, 0, "rank")},
         schema_valid=False),
    Case("unknown-candidate", edit(lambda d, ch: d[8]["lst_candidate_id"][4].update(candidate_id="not-a-candidate")),
         {("unknown-candidate", E(8, 4, "candidate_id"))}, schema_valid=True),
    Case("duplicate-dialog", edit(_dup_dialog), {("duplicate-dialog", "/12/dialog_id")}, schema_valid=True),
    Case("no-dialog-id", edit(lambda d, ch: d[9].pop("dialog_id")), {("missing-key", "/9")},
         warnings=(("missing-dialog", ""),), schema_valid=False),
    Case("no-lst-candidate-id", edit(lambda d, ch: d[10].pop("lst_candidate_id")), {("missing-key", "/10")}, {"/10"},
         schema_valid=False),
    Case("empty-ranking", edit(lambda d, ch: d[11].update(lst_candidate_id=[])),
         {("empty-ranking", "/11/lst_candidate_id")}, schema_valid=False),
    Case("key-without-gold", lambda ch: ch.perfect(), set(), warnings=(("key-without-gold", "/1"),),
         key_edit=_key_no_gold, schema_valid=True),
    Case("key-empty", lambda ch: ch.perfect(), "usage:is empty", "usage", key_edit=_key_empty),
    # structure and encoding
    Case("top-level-object", lambda ch: {"items": ch.perfect()}, {("not-a-list", "")}, {""}, schema_valid=False),
    Case("item-not-object", edit(lambda d, ch: d.insert(0, 7)), {("item-not-object", "/0")}, {"/0"},
         schema_valid=False),
    # a broken file is the participant's fault: a problem with a code and a position (exit 1), never exit 2
    Case("not-json", raw(lambda ch: b'[{"dialog_id": "x",\n  "lst_candidate_id" []}]'), {("not-json", "")}, "same",
         message="line 2 column 22"),
    Case("empty-file", raw(lambda ch: b""), {("empty-file", "")}, "same", message="empty"),
    Case("non-utf8", raw(lambda ch: b'[{"dialog_id": "\xff\xfe", "lst_candidate_id": []}]'), {("bad-encoding", "")},
         "same", message="not UTF-8"),
    Case("deeply-nested", raw(lambda ch: b"[" * DEEP + b"]" * DEEP), {("json-too-deep", "")}, "same",
         message="nested too deeply"),
    Case("utf8-bom", raw(lambda ch: b"\xef\xbb\xbf" + json.dumps(ch.perfect()).encode()), {("bad-encoding", "")}, "same",
         message="UTF-8 BOM"),
    Case("utf16", raw(lambda ch: json.dumps(ch.perfect()).encode("utf-16")), {("bad-encoding", "")}, "same",
         message="UTF-16"),
    Case("gzip", raw(lambda ch: gzip.compress(json.dumps(ch.perfect()).encode(), mtime=0)), {("wrong-file-type", "")},
         "same", message="gzip-compressed"),
    Case("zip", raw(lambda ch: b"PK\x03\x04" + bytes(40)), {("wrong-file-type", "")}, "same", message="ZIP archive"),
    Case("json-lines", raw(lambda ch: "\n".join(json.dumps(it) for it in ch.perfect()).encode()), {("json-lines", "")},
         "same", message="one JSON list"),
    Case("truncated", raw(lambda ch: json.dumps(ch.perfect()).encode()[:700]), {("truncated-json", "")}, "same",
         message="truncated"),
    Case("integer-5000-digits", raw(lambda ch: json.dumps(ch.perfect()).replace('"rank": 2}', '"rank": ' + "7" * 5000 + "}", 1).encode()),
         {("not-json", "")}, "same", message="not a readable JSON"),
    Case("rank-nan", raw(lambda ch: json.dumps(ch.perfect()).replace('"rank": 2}', '"rank": NaN}', 1).encode()),
         {("rank-not-integer", E(0, 1, "rank"))}, {E(0, 1, "rank")}),
    Case("rank-bool", set_rank(0, 0, True), {("rank-not-integer", E(0, 0, "rank"))}, schema_valid=False),
    Case("rank-null", set_rank(1, 0, None), {("rank-not-integer", E(1, 0, "rank"))}, {E(1, 0, "rank")},
         schema_valid=False),
    Case("rank-nested-900", set_rank(0, 0, json.loads("[" * 900 + "]" * 900)), {("rank-not-integer", E(0, 0, "rank"))},
         {E(0, 0, "rank")}, schema_valid=False),
    Case("null-ids", edit(_null_ids), {("wrong-type", "/1/dialog_id"), ("wrong-type", E(2, 1, "candidate_id"))},
         warnings=(("missing-dialog", ""),), schema_valid=False),
    Case("dialog-id-array", edit(lambda d, ch: d[3].update(dialog_id=[d[3]["dialog_id"]])),
         {("wrong-type", "/3/dialog_id")}, {"/3/dialog_id"}, schema_valid=False),
    Case("extra-keys", edit(_extra_keys), {("unknown-key", "/0/score"), ("unknown-key", E(3, 2, "a~1b~0c"))},
         schema_valid=False),
    Case("entry-without-rank", edit(lambda d, ch: d[6]["lst_candidate_id"][2].pop("rank")),
         {("missing-key", E(6, 2))}, {E(6, 2)}, schema_valid=False),
    Case("rank-gap", edit(_gap), {("rank-gap", "/4/lst_candidate_id")}, schema_valid=True),
    Case("duplicate-candidate", edit(_dup_candidate), {("duplicate-candidate", E(5, 3, "candidate_id"))},
         schema_valid=True),
    Case("unknown-dialog", edit(lambda d, ch: d[7].update(dialog_id="no-such-dialog")),
         {("unknown-dialog", "/7/dialog_id")}, warnings=(("missing-dialog", ""),), schema_valid=True),
    Case("lone-surrogate-id", raw(lambda ch: json.dumps(ch.perfect()).replace(ch.all_items()[0].dialog_id, "a\\udc80b").encode()),
         {("unknown-dialog", "/0/dialog_id")}, schema_valid=True),
    Case("three-errors", edit(_three_errors), {("duplicate-rank", E(1, 3, "rank")),
                                                ("unknown-candidate", E(6, 4, "candidate_id")),
                                                ("rank-not-integer", E(10, 0, "rank"))}, schema_valid=False),
    Case("partial-without-gold", edit(_partial_no_gold), set(), schema_valid=True),
    # the directory layout
    Case("dir-valid", lambda ch: _dir_files(ch), set()),
    Case("dir-other-task-dialog", lambda ch: _dir_files(ch, _other_task_in_file),
         {("unknown-dialog", "/4/dialog_id")}, warnings=(("missing-dialog", ""),)),
    Case("dir-unknown-file", lambda ch: _dir_files(ch, extra={"tst1/extra.json": []}), {("unknown-file", "")}),
    Case("dir-not-json-file", lambda ch: _dir_files(ch, extra={f"tst1/{ch.answers_name(3)}": b"[1, 2"}),
         {("truncated-json", "")}, "same", message="truncated"),
]
CASE_IDS = [c.id for c in CASES]
BY_ID = {c.id: c for c in CASES}


def materialize(case: Case, ch: TinyChallenge, where: Path) -> Path:
    """Write the case's submission under ``where``; return the path to score."""
    data = case.build(ch)
    if isinstance(data, Dir):
        root = where / "sub"
        for rel, content in data.items():
            write_json(root / rel, content)
        return root
    return write_json(where / "sub.json", data)


@pytest.fixture
def setup(request, tmp_path, tiny_shared):
    """(case, challenge, submission path) with the case's key edit applied to a private challenge."""
    case: Case = request.param
    ch = tiny_shared
    if case.key_edit is not None:
        ch = make_challenge(tmp_path / "challenge")
        case.key_edit(ch)
    return case, ch, materialize(case, ch, tmp_path)


def run_score(ch: TinyChallenge, sub: Path, **kw):
    return score(sub, split="tst1", challenge=ch.root, **kw)


def parametrize_cases(cases=CASES):
    return pytest.mark.parametrize("setup", cases, ids=[c.id for c in cases], indirect=True)


# ---- strict mode -----------------------------------------------------------------------------------------
@parametrize_cases()
def test_strict_reports_every_expected_error(setup):
    case, ch, sub = setup
    if isinstance(case.strict, str):
        with pytest.raises(UsageError, match=case.strict.split(":", 1)[1]):
            run_score(ch, sub)
        return
    report = run_score(ch, sub)
    got = {(p.code, p.pointer) for p in report.errors}
    assert got == case.strict, [p.format() for p in report.errors]
    if case.message:
        assert any(case.message in p.message for p in report.errors), [p.message for p in report.errors]
    warnings = {(p.code, p.pointer) for p in report.warnings}
    for w in case.warnings:
        assert w in warnings
    assert report.valid == (not case.strict)
    if case.strict:
        assert report.records == []  # an invalid submission is not scored
    else:
        assert report.records and all(math.isfinite(r["value"]) for r in report.records)


def test_all_problems_of_a_file_are_reported_at_once(tmp_path, tiny_shared):
    sub = materialize(BY_ID["three-errors"], tiny_shared, tmp_path)
    report = run_score(tiny_shared, sub)
    assert len(report.errors) == 3
    assert {p.code for p in report.errors} == {"duplicate-rank", "unknown-candidate", "rank-not-integer"}
    assert all(p.file == "sub.json" for p in report.errors)


def test_missing_items_are_warnings_and_misses(tmp_path, tiny_shared):
    data = tiny_shared.perfect()
    del data[4:6]  # two task-2 items
    report = run_score(tiny_shared, write_json(tmp_path / "sub.json", data))
    assert report.valid and not report.errors
    assert [p.code for p in report.warnings] == ["missing-dialog", "missing-dialog"]
    assert report.value("p@1", "tst1", 2) == 0.5
    assert report.value("p@5", "tst1", 1) == 1.0
    assert report.value("p@1", "tst1", "all") == pytest.approx(10 / 12, abs=1e-6)


def test_directory_file_problems_name_the_file(tmp_path, tiny_shared):
    sub = materialize(BY_ID["dir-other-task-dialog"], tiny_shared, tmp_path)
    (err,) = run_score(tiny_shared, sub).errors
    assert err.file == f"tst1/{tiny_shared.answers_name(1)}"
    sub2 = materialize(BY_ID["dir-unknown-file"], tiny_shared, tmp_path / "b")
    (err2,) = run_score(tiny_shared, sub2).errors
    assert err2.file == "tst1/extra.json"


def test_key_without_gold_is_a_miss_not_a_false_hit(tmp_path):
    ch = make_challenge(tmp_path / "challenge")
    _key_no_gold(ch)
    data = ch.perfect()
    data[5]["lst_candidate_id"] = data[5]["lst_candidate_id"][1:2]  # leaves slots 2..10 empty
    data[5]["lst_candidate_id"][0]["rank"] = 1
    sub = write_json(tmp_path / "sub.json", data)
    for lenient in (False, True):
        report = run_score(ch, sub, lenient=lenient)
        assert report.valid
        assert report.value("p@5", "tst1", 2) == 0.75  # the official script would say 1.0
        kw = [p for p in report.warnings if p.code == "key-without-gold"]
        assert [(p.pointer, p.file) for p in kw] == [("/1", ch.answers_name(2))]


# ---- lenient mode vs the reference implementation --------------------------------------------------------
def reference_values(case_data, ch: TinyChallenge, nb: int = NB) -> dict[tuple, float]:
    """{(task|'all', metric): value} from the reference scorer; raises OfficialCrash."""
    hits: dict[int, dict[str, list[float]]] = {}
    if isinstance(case_data, Dir):
        by_task = {f"tst1/{ch.answers_name(t)}": t for t in ch.tasks}
        slots_per_task = {by_task[rel]: official_slots(json.loads(json.dumps(c)) if not isinstance(c, bytes)
                                                       else json.loads(c), nb)
                          for rel, c in case_data.items() if rel in by_task}
        for t in ch.tasks:
            hits[t] = official_hits(slots_per_task.get(t, {}), ch.key_json(t))
    else:
        parsed = json.loads(case_data) if isinstance(case_data, bytes) else case_data
        slots = official_slots(parsed, nb)
        for t in ch.tasks:
            hits[t] = official_hits(slots, ch.key_json(t))
    out = {}
    for m in ("p@1", "p@2", "p@5", "mrr"):
        for t in ch.tasks:
            out[(t, m)] = mean(hits[t][m])
        out[("all", m)] = mean([x for t in ch.tasks for x in hits[t][m]])
    return out


@parametrize_cases()
def test_lenient_matches_the_official_algorithm(setup):
    case, ch, sub = setup
    if case.lenient == "usage":
        with pytest.raises(UsageError):
            run_score(ch, sub, lenient=True)
        return
    report = run_score(ch, sub, lenient=True)
    if case.lenient == "same":  # not JSON at all: the same problem as in strict mode
        assert not report.valid and report.records == []
        assert {(p.code, p.pointer) for p in report.errors} == case.strict
        return
    data = case.build(ch)
    if case.lenient == "score":
        ref = reference_values(data, ch)
        assert report.valid, [p.format() for p in report.errors]
        got = {(k, m): report.value(m, "tst1", k) for (k, m) in ref}
        assert got == pytest.approx(ref, abs=1e-6)
        assert all(p.severity == "warning" for p in report.problems)
    else:
        with pytest.raises(OfficialCrash):
            reference_values(data, ch)
        assert not report.valid and report.records == []
        assert {p.code for p in report.errors} == {"official-crash"}
        assert {p.pointer for p in report.errors} == case.lenient


def test_lenient_quirks_are_listed(tmp_path, tiny_shared):
    sub = materialize(BY_ID["rank-0"], tiny_shared, tmp_path)
    report = run_score(tiny_shared, sub, lenient=True)
    quirks = [p for p in report.warnings if p.code == "official-quirk"]
    # item 2 has 10 candidates: rank 0 lands in slot 10, then the entry ranked 10 takes that slot over
    assert [q.pointer for q in quirks] == [E(2, 0, "rank"), E(2, 9, "rank")]
    assert "slot 10" in quirks[0].message and "later entry takes it" in quirks[1].message
    assert report.value("p@5", "tst1", 1) == 0.75 and report.value("mrr", "tst1", 1) == 0.75


@pytest.mark.parametrize("limit", [3, 5, 10, 12])
def test_lenient_candidate_limit_matches_reference(tmp_path, tiny_shared, limit):
    rng = random.Random(limit)
    data = []
    for it in tiny_shared.all_items():
        ids = tiny_shared.candidate_ids(it.dialog_id)
        rng.shuffle(ids)
        data.append(ranking(it.dialog_id, ids))
    sub = write_json(tmp_path / "sub.json", data)
    report = run_score(tiny_shared, sub, lenient=True, candidate_limit=limit)
    ref = reference_values(data, tiny_shared, nb=limit)
    got = {(k, m): report.value(m, "tst1", k) for (k, m) in ref}
    assert got == pytest.approx(ref, abs=1e-6)
    if limit == 12:  # every rank fits: lenient agrees with strict
        strict = run_score(tiny_shared, sub)
        assert strict.records == [
            dict(r, signature=r["signature"].replace("mode:lenient|nc:12", "mode:strict|nc:all")) for r in report.records
        ]


# ---- the published schema agrees with the fast path on structural validity -------------------------------
STRUCTURAL = {"not-a-list", "item-not-object", "missing-key", "unknown-key", "wrong-type", "empty-ranking",
              "rank-not-integer"}


def _at(data, pointer: str):
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


SCHEMA_CASES = [c for c in CASES if c.schema_valid is not None]


@parametrize_cases(SCHEMA_CASES)
def test_schema_and_fast_path_agree(setup):
    case, ch, sub = setup
    data = json.loads(sub.read_bytes())
    schema_ok = not schema_problems(data, "dstc6-result")
    report = run_score(ch, sub)
    structural = [p for p in report.errors if p.code in STRUCTURAL]
    below_one = [p for p in report.errors if p.code == "rank-out-of-range" and _at(data, p.pointer) < 1]
    fast_ok = not structural and not below_one
    assert schema_ok == fast_ok == case.schema_valid


# ---- the command line over the whole corpus -------------------------------------------------------------
SENTINEL = "previous report\n"


def _expected_exit(case: Case, lenient: bool) -> int:
    want = case.lenient if lenient else case.strict
    if want == "usage" or (isinstance(want, str) and want.startswith("usage")):
        return 2
    if lenient:
        return 0 if want == "score" else 1  # "same" and official crashes are invalid
    return 1 if want else 0


@parametrize_cases()
def test_cli_exit_codes_and_output(setup, tmp_path):
    case, ch, sub = setup
    gold_ids = set(ch.gold.values())
    # strict: table/problems on stderr, report to --out (pre-existing content must survive a usage error)
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    out.write_text(SENTINEL)
    r = run_cli("score", sub, "--challenge", ch.root, "--split", "tst1", "--out", out, "--max-problems", "100")
    want = _expected_exit(case, lenient=False)
    _common_cli_checks(r, want)
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.json"]  # no temp file left behind
    if want == 2:
        assert out.read_text() == SENTINEL
    else:
        rep = json.loads(out.read_text())
        assert not schema_problems(rep, "score-report")
        assert rep["valid"] == (want == 0)
        assert {(p["code"], p["pointer"]) for p in rep["problems"] if p["severity"] == "error"} == case.strict
    # lenient: JSON on stdout
    r2 = run_cli("score", sub, "--challenge", ch.root, "--split", "tst1", "--lenient", "--json")
    want2 = _expected_exit(case, lenient=True)
    _common_cli_checks(r2, want2)
    if want2 != 2:
        rep2 = json.loads(r2.stdout)
        assert not schema_problems(rep2, "score-report")
        assert rep2["valid"] == (want2 == 0)
        if want2 == 1:
            want_codes = {c for c, _ in case.strict} if case.lenient == "same" else {"official-crash"}
            assert {p["code"] for p in rep2["problems"] if p["severity"] == "error"} == want_codes
    if case.id in ("partial-without-gold", "key-without-gold", "empty-ranking"):
        # the submission names no gold id (or the key has none), so nothing printed may contain one
        for text in (r.stdout, r.stderr, r2.stdout, r2.stderr):
            assert not any(g in text for g in gold_ids)


def _common_cli_checks(r, want: int) -> None:
    assert r.returncode == want, (r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stdout + r.stderr
    if want == 2:
        assert r.stdout == ""
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("dialeval: error: "), r.stderr[:500]
        assert len(lines[0]) < 400


def test_cli_not_json_message_has_line_and_column(tmp_path, tiny_shared):
    sub = materialize(BY_ID["not-json"], tiny_shared, tmp_path)
    r = run_cli("validate", sub, "--challenge", tiny_shared.root, "--split", "tst1")
    assert r.returncode == 1  # the participant's file: invalid, not a usage error
    assert "sub.json: not valid JSON at line 2 column 22" in r.stderr and "Traceback" not in r.stderr
    assert "missing-dialog" not in r.stderr  # no per-item noise after a file-level error


def test_cli_validate_needs_no_keys(tmp_path):
    keys = tmp_path / "keys"
    ch = make_challenge(tmp_path / "challenge", keys_dir=keys)
    good = write_json(tmp_path / "good.json", ch.perfect())
    bad = materialize(BY_ID["three-errors"], ch, tmp_path)
    assert run_cli("validate", good, "--challenge", ch.root, "--split", "tst1").returncode == 0
    r = run_cli("validate", bad, "--challenge", ch.root, "--split", "tst1", "--json")
    assert r.returncode == 1
    assert json.loads(r.stdout)["counts"]["errors"] == 3
    # score without keys is an organizer error (exit 2, one line); with --keys it works
    r = run_cli("score", good, "--challenge", ch.root, "--split", "tst1")
    assert r.returncode == 2 and "answer key" in r.stderr and r.stderr.count("\n") == 1
    assert run_cli("score", good, "--challenge", ch.root, "--split", "tst1", "--keys", keys).returncode == 0


def test_schema_cannot_see_integral_floats(tmp_path, tiny_shared):
    """The one known disagreement: JSON Schema's data model treats 1.0 as the integer 1, so the published
    schema accepts ``"rank": 1.0``; the strict fast path rejects it (rank-not-integer), as the format says."""
    data = tiny_shared.perfect()
    data[0]["lst_candidate_id"][0]["rank"] = 1.0
    assert schema_problems(data, "dstc6-result") == []
    report = run_score(tiny_shared, write_json(tmp_path / "sub.json", data))
    assert [(p.code, p.pointer) for p in report.errors] == [("rank-not-integer", E(0, 0, "rank"))]


def test_integral_float_past_64_bits_is_not_an_integer(tmp_path, tiny_shared):
    """``1e19`` is a number with an exponent like ``1.0``: rank-not-integer, not an out-of-range integer."""
    data = tiny_shared.perfect()
    data[0]["lst_candidate_id"][0]["rank"] = 1e19
    report = run_score(tiny_shared, write_json(tmp_path / "sub.json", data))
    assert [(p.code, p.pointer) for p in report.errors] == [("rank-not-integer", E(0, 0, "rank"))]


def test_reversed_task_range_is_a_usage_error():
    """``--task 5-3`` is refused instead of silently meaning every task."""
    from dialeval.commands.score import _tasks

    assert _tasks(("3-5",)) == [3, 4, 5]
    with pytest.raises(UsageError):
        _tasks(("5-3",))


def test_schema_command_refuses_a_path_for_a_name():
    """Only published names are printed; a path that happens to reach a schema file is an unknown name."""
    r = run_cli("schema", "../schemas/dstc6-result")
    assert r.returncode == 2 and "unknown schema" in r.stderr and r.stderr.count("\n") == 1
    r = run_cli("schema", "dstc6-result")
    assert r.returncode == 0 and json.loads(r.stdout)["$schema"].startswith("https://json-schema.org/")
    # before: `schema --list team` printed the list and dropped the name without a word
    r = run_cli("schema", "--list", "team")
    assert (r.returncode, r.stdout) == (2, "") and r.stderr == ("dialeval: error: give a schema NAME or --list, not "
                                                                 "both (dialeval schema team prints it)\n")


def test_lenient_reports_non_string_dialog_ids(tmp_path, tiny_shared):
    sub = tiny_shared.perfect()
    sub[0] = {**sub[0], "dialog_id": 5}
    path = write_json(tmp_path / "sub.json", sub)
    report = run_score(tiny_shared, path, lenient=True)
    quirks = [p for p in report.warnings if p.code == "official-quirk" and p.pointer == "/0/dialog_id"]
    assert len(quirks) == 1 and "integer" in quirks[0].message
    assert report.valid and report.value("p@1", "tst1", tiny_shared.tasks[0]) < 1.0  # that item is a miss
