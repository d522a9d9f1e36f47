"""Fast paths: decode straight into typed structs, prove a file valid, or hand it to the full checker.

Decoding a test file into structs that name only the ids skips every utterance string, and decoding a
result file into small structs instead of dicts halves its memory; msgspec's typed decoding also enforces
the JSON types (a boolean or a float is not an int, no unknown keys), which are most of the schema.

The rule that keeps these paths honest: a fast path either proves the file fully valid (every check of
:func:`dialeval.benchmarks.dstc6.validate.check_result_file` that yields an error passes) and returns the same gold ranks,
or returns None and the caller runs the full checker, which reports every problem with its pointer.
Invalid submissions are thus always explained by one implementation, and ``tests/test_fastpath.py`` checks
both paths agree on the malformed corpus.
"""

from __future__ import annotations

import msgspec


class _Entry(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    candidate_id: str
    rank: int


class _ResultItem(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    dialog_id: str
    lst_candidate_id: list[_Entry]


class _CandidateId(msgspec.Struct, gc=False):
    candidate_id: str


class _TestItem(msgspec.Struct, gc=False):
    dialog_id: str
    candidates: list[_CandidateId]
    conversation_id: str | None = None


_RESULT = msgspec.json.Decoder(list[_ResultItem])
_TEST = msgspec.json.Decoder(list[_TestItem])


def decode_test_index(raw: bytes):
    """``(dialog_ids, candidate id tuples, conversation ids)`` of a well-formed test file, else None.

    Duplicate ids are not checked here (the caller does); utterances are never decoded.
    """
    try:
        items = _TEST.decode(raw)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # anything odd: the full path explains it
        return None
    dialog_ids = [it.dialog_id for it in items]
    cands = [tuple(c.candidate_id for c in it.candidates) for it in items]
    if any(not c for c in cands):
        return None
    convs = [it.conversation_id if it.conversation_id is not None else it.dialog_id for it in items]
    return dialog_ids, cands, convs


def decode_result(raw: bytes):
    """The items of a result file whose JSON types are right, as structs; None otherwise."""
    try:
        return _RESULT.decode(raw)
    except (msgspec.MsgspecError, ValueError, RecursionError):  # anything odd: the full path explains it
        return None


def check_result_fast(raw: bytes, split, seen: dict[str, str], file: str, file_task, score_tasks):
    """Gold ranks and counts for a fully valid result file, or None (then run the full checker)."""
    items = decode_result(raw)
    return None if items is None else check_result_items(items, split, seen, file, file_task, score_tasks)


_RANKS: list[frozenset[int]] = [frozenset()]


def _one_to(m: int) -> frozenset[int]:
    """``{1, ..., m}`` (made once per m)."""
    while len(_RANKS) <= m:
        _RANKS.append(_RANKS[-1] | {len(_RANKS)})
    return _RANKS[m]


def check_result_items(items, split, seen: dict[str, str], file: str, file_task, score_tasks):
    """:func:`check_result_fast` on decoded items. On success ``seen`` gains the file's dialog ids; on None
    it is left untouched."""
    tasks_of = split.dialog_task
    indexes = split.indexes
    keys = split.keys
    mine: dict[str, int] = {}
    gold_rank: dict[str, int] = {}
    other = 0
    for i, item in enumerate(items):
        did = item.dialog_id
        task = tasks_of.get(did)
        if task is not None and task not in score_tasks and file_task is None:  # outside --task: left out unchecked
            other += 1
            continue
        if task is None or (file_task is not None and task != file_task) or did in seen or did in mine:
            return None
        mine[did] = i
        entries = item.lst_candidate_id
        m = len(entries)
        if not m:
            return None
        index = indexes[task]
        cands = index.candidate_ids[index.position[did]]
        if m > len(cands):
            return None
        # the ranks are exactly 1..m (no repeats, no gaps), the candidate ids distinct and the item's own
        ids = {e.candidate_id for e in entries}
        if len(ids) != m or {e.rank for e in entries} != _one_to(m) or not ids.issubset(cands):
            return None
        if task not in score_tasks:
            other += 1
        elif task in keys:
            gold = keys[task].gold.get(did)
            r = 0
            if gold is not None:
                for e in entries:
                    if e.candidate_id == gold:
                        r = e.rank
                        break
            gold_rank[did] = r
    for did, i in mine.items():
        seen[did] = f"{file}#/{i}"
    return gold_rank, other
