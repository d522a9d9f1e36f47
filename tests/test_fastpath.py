"""The typed fast paths never decide differently from the full checker.

For every file of the malformed corpus the result-file fast path must bail out (None) exactly when the
full checker reports an error, and on valid files both must give the same gold ranks; the test-file fast
path must give the same index as the generic parse.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_malformed import CASES, materialize

from dialeval.benchmarks.dstc6.challenge import load_split, parse_task_index
from dialeval.benchmarks.dstc6.fastpath import check_result_fast, decode_test_index
from dialeval.benchmarks.dstc6.validate import check_result_file
from dialeval.formats.dstc6 import Challenge
from dialeval.formats.jsonio import load_json_file


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*.json")) if path.is_dir() else [path]


@pytest.mark.parametrize("case", [c for c in CASES if c.key_edit is None], ids=lambda c: c.id)
def test_fast_path_agrees_with_full_checker(case, tmp_path, tiny_shared):
    ch = tiny_shared
    sub = materialize(case, ch, tmp_path)
    split = load_split(Challenge(ch.root), "tst1")
    tasks = set(split.tasks)
    for f in _files(sub):
        raw = f.read_bytes()
        fast = check_result_fast(raw, split, {}, f.name, None, tasks)
        try:
            data = load_json_file(f)
        except Exception:  # not JSON at all: the fast path must not have accepted it
            assert fast is None
            continue
        full = check_result_file(data, f.name, split, {}, None, tasks)
        has_errors = any(p.severity == "error" for p in full.problems)
        assert (fast is None) == has_errors, case.id
        if fast is not None:
            assert fast[0] == full.gold_rank


def test_valid_submission_takes_the_fast_path_with_identical_ranks(tmp_path, tiny_shared):
    import json

    ch = tiny_shared
    split = load_split(Challenge(ch.root), "tst1")
    sub = []
    for t in ch.tasks:
        for it in ch.items[t]:
            ids = [c.candidate_id for c in it.candidates][::-1]
            sub.append({"dialog_id": it.dialog_id, "lst_candidate_id": [{"candidate_id": c, "rank": r}
                                                                       for r, c in enumerate(ids[:3], 1)]})
    raw = json.dumps(sub).encode()
    fast = check_result_fast(raw, split, {}, "sub.json", None, set(split.tasks))
    full = check_result_file(sub, "sub.json", split, {}, None, set(split.tasks))
    assert fast is not None and not full.problems
    assert fast[0] == full.gold_rank and any(r == 0 for r in fast[0].values()) and any(r > 0 for r in fast[0].values())


def test_test_file_fast_index_matches_generic_parse(tiny_shared):
    ch = tiny_shared
    for t in ch.tasks:
        path = ch.split_dir / ch.file_name(t)
        fast = decode_test_index(path.read_bytes())
        generic = parse_task_index(t, path)
        assert fast is not None
        assert (fast[0], fast[1], fast[2]) == (generic.dialog_ids, generic.candidate_ids, generic.conversation_ids)
