"""What the scorer needs from a challenge split: the item index of its test files and its answer keys.

Test files are read once into a compact :class:`TaskIndex` (ids only, no utterances) and answer keys into
an :class:`AnswerKey`. Both are organizer files: a malformed one is a usage error (exit 2) whose message
names the file and a JSON pointer, and never a gold id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.core.problems import Problem
from dialeval.files.read import not_a_folder, read_bytes
from dialeval.formats.dstc6 import Challenge, Split
from dialeval.formats.jsonio import parse_json_bytes


@dataclass
class TaskIndex:
    """The items of one test file: ids, candidate ids and (optional) conversation ids."""

    task: int
    path: Path
    dialog_ids: list[str]
    candidate_ids: list[tuple[str, ...]]  # per item, in file order (tuples: a third of a dict's memory)
    conversation_ids: list[str]
    position: dict[str, int] = field(default_factory=dict)  # dialog id -> item index

    def __post_init__(self):
        if not self.position:
            self.position = {d: i for i, d in enumerate(self.dialog_ids)}


@dataclass
class AnswerKey:
    """Gold candidate per dialog of one test file; ``None`` where the key item has no rank-1 entry."""

    task: int
    path: Path
    dialog_ids: list[str]  # key order; the denominator of every metric
    gold: dict[str, str | None]


def open_challenge(root: str | Path, keys: str | Path | None = None) -> Challenge:
    """A challenge directory in the DSTC6 layout (the caller decides which: no hidden default here)."""
    root = Path(root)
    if not root.is_dir():
        raise not_a_folder(root, "challenge directory")
    keys_root = Path(keys) if keys else None
    if keys_root is not None and not keys_root.is_dir():
        raise not_a_folder(keys_root, "answer-key directory")
    return Challenge(root=root, keys_root=keys_root)


def _bad(path: Path, pointer: str, message: str) -> UsageError:
    return UsageError(f"{path}: invalid test file at {pointer or '/'}: {message}")


def load_task_index(task: int, path: Path) -> TaskIndex:
    """A test file's TaskIndex: from the index cache when the file is unchanged, else parsed and cached."""
    from dialeval.files import cache

    known = cache.known_digest(path)  # this very file was read and hashed by an earlier run
    if known is not None:
        cached = cache.load_index(path, known)
        if cached is not None:
            dialog_ids, cand_lists, conversation_ids = cached
            return TaskIndex(task, path, dialog_ids, [tuple(c) for c in cand_lists], conversation_ids)
    before = cache.stat_key(path)
    raw = read_bytes(path, what="a test JSON file")
    digest = cache.content_digest(raw)  # entries are keyed by the very bytes parsed below
    cache.remember_digest(path, digest, before)  # and the data identity reuses it (next runs too)
    cached = cache.load_index(path, digest)
    if cached is not None:
        dialog_ids, cand_lists, conversation_ids = cached
        return TaskIndex(task, path, dialog_ids, [tuple(c) for c in cand_lists], conversation_ids)
    index = parse_task_index(task, path, raw)
    del raw
    cache.store_index(path, (index.dialog_ids, index.candidate_ids, index.conversation_ids), digest)
    return index


def parse_task_index(task: int, path: Path, raw: bytes | None = None) -> TaskIndex:
    """Read a test file (or its bytes ``raw``) into a TaskIndex, checking the structure the scorer relies on."""
    from dialeval.benchmarks.dstc6.fastpath import decode_test_index

    if raw is None:
        raw = read_bytes(path)
    fast = decode_test_index(raw)
    if fast is not None:
        index = TaskIndex(task, path, *fast)
        if len(index.position) == len(index.dialog_ids) and all(len(set(c)) == len(c) for c in index.candidate_ids):
            return index
    # Malformed (or with repeated ids): the generic parse finds the first problem and its pointer.
    data = parse_json_bytes(raw, str(path))
    del raw
    if not isinstance(data, list):
        raise _bad(path, "", "the top level must be an array of items")
    dialog_ids: list[str] = []
    candidate_ids: list[tuple[str, ...]] = []
    conversation_ids: list[str] = []
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise _bad(path, f"/{i}", "item is not an object")
        did = item.get("dialog_id")
        cands = item.get("candidates")
        if not isinstance(did, str):
            raise _bad(path, f"/{i}/dialog_id", "missing or not a string")
        if not isinstance(cands, list) or not cands:
            raise _bad(path, f"/{i}/candidates", "missing, empty or not an array")
        ids: dict[str, int] = {}
        for j, c in enumerate(cands):
            cid = c.get("candidate_id") if isinstance(c, dict) else None
            if not isinstance(cid, str):
                raise _bad(path, f"/{i}/candidates/{j}/candidate_id", "missing or not a string")
            if cid in ids:
                raise _bad(path, f"/{i}/candidates/{j}/candidate_id", "duplicate candidate id in the item")
            ids[cid] = j
        conv = item.get("conversation_id", did)
        if not isinstance(conv, str):
            raise _bad(path, f"/{i}/conversation_id", "not a string")
        dialog_ids.append(did)
        candidate_ids.append(tuple(ids))
        conversation_ids.append(conv)
    index = TaskIndex(task, path, dialog_ids, candidate_ids, conversation_ids)
    if len(index.position) != len(dialog_ids):
        seen: set[str] = set()
        for i, d in enumerate(dialog_ids):
            if d in seen:
                raise _bad(path, f"/{i}/dialog_id", "duplicate dialog id in the file")
            seen.add(d)
    return index


def load_answer_key(task: int, path: Path, index: TaskIndex) -> tuple[AnswerKey, list[Problem]]:
    """Read an answer key; items without a rank-1 entry are kept with gold None and reported as warnings.

    A key that references an unknown dialog, or whose gold is not among the item's candidates, is an
    organizer error (exit 2); the message gives the pointer, never the gold id.
    """
    if not os.path.lexists(path):
        raise UsageError(
            f"answer key {path} not found (keys sit beside the test files as <stem>.answers.json, "
            "or in the directory given with --keys)"
        )
    raw = read_bytes(path, what="an answer-key JSON file")  # refuses a FIFO or a device before reading
    from dialeval.files import cache

    cache.note_digest(path, cache.content_digest(raw))  # the data identity hashes the bytes read, once
    from dialeval.benchmarks.dstc6.fastpath import decode_result

    items = decode_result(raw)
    if items is not None:  # well-typed (the usual case): structs, no generic JSON objects
        del raw
        entries = ((it.dialog_id, [(e.candidate_id, e.rank) for e in it.lst_candidate_id]) for it in items)
    else:
        entries = _generic_key_entries(parse_json_bytes(raw, str(path)), path)
    gold: dict[str, str | None] = {}
    order: list[str] = []
    warnings: list[Problem] = []
    for i, (did, lst) in enumerate(entries):
        if did in gold:
            raise UsageError(f"answer key {path}: /{i}/dialog_id repeats an earlier item")
        pos = index.position.get(did)
        if pos is None:
            raise UsageError(f"answer key {path}: /{i}/dialog_id is not an item of test file {index.path.name}")
        g = next((cid for cid, rank in lst if rank == 1 and not isinstance(rank, bool)), None)
        if g is None:
            warnings.append(
                Problem(
                    "key-without-gold",
                    f"/{i}",
                    "answer-key item has no rank-1 entry: scored as a miss (the official scorer would count a "
                    "false hit whenever the submission leaves a top-k slot empty)",
                    "warning",
                    path.name,
                )
            )
        elif not isinstance(g, str) or g not in index.candidate_ids[pos]:
            raise UsageError(f"answer key {path}: /{i}: the rank-1 entry is not one of the item's candidates")
        else:
            g = index.candidate_ids[pos][index.candidate_ids[pos].index(g)]  # share the index's string object
        did = index.dialog_ids[pos]  # likewise: the key's own strings can then be freed (1M-item splits)
        gold[did] = g
        order.append(did)
    if not order:
        raise UsageError(f"answer key {path} is empty: nothing to score against (the official scorer divides by zero)")
    return AnswerKey(task, path, order, gold), warnings


def _generic_key_entries(data, path: Path):
    """``(dialog_id, [(candidate_id, rank), ...])`` per item of a parsed key that is not well-typed."""
    if not isinstance(data, list):
        raise UsageError(f"answer key {path}: the top level must be an array")
    for i, item in enumerate(data):
        did = item.get("dialog_id") if isinstance(item, dict) else None
        lst = item.get("lst_candidate_id") if isinstance(item, dict) else None
        if not isinstance(did, str) or not isinstance(lst, list):
            raise UsageError(f"answer key {path}: item /{i} is not {{dialog_id, lst_candidate_id}}")
        yield did, [(e.get("candidate_id"), e.get("rank")) for e in lst if isinstance(e, dict)]


@dataclass
class LoadedSplit:
    """A split ready for scoring: test-file indexes and answer keys for the selected tasks."""

    name: str
    split: Split
    tasks: list[int]
    indexes: dict[int, TaskIndex]
    keys: dict[int, AnswerKey]
    key_warnings: list[Problem]
    dialog_task: dict[str, int]  # dialog id -> task, across the split's files


def load_split(challenge: Challenge, name: str, tasks: list[int] | None = None, with_keys: bool = True) -> LoadedSplit:
    """Index a split's test files (all of them, to map any submitted id) and load the selected keys."""
    split = challenge.split(name)
    selected = sorted(split.files) if not tasks else sorted(tasks)
    missing = [t for t in selected if t not in split.files]
    if missing:
        raise UsageError(f"split {name} has no test file for task(s) {', '.join(map(str, missing))}")
    indexes: dict[int, TaskIndex] = {}
    dialog_task: dict[str, int] = {}
    for t, tf in sorted(split.files.items()):
        idx = load_task_index(t, tf.path)
        indexes[t] = idx
        for d in idx.dialog_ids:
            if d in dialog_task:
                raise UsageError(f"split {name}: dialog id repeated across test files (task {dialog_task[d]} and {t})")
            dialog_task[d] = t
    keys: dict[int, AnswerKey] = {}
    warnings: list[Problem] = []
    if with_keys:
        for t in selected:
            key, w = load_answer_key(t, split.key_path(t), indexes[t])
            keys[t] = key
            warnings.extend(w)
    return LoadedSplit(name, split, selected, indexes, keys, warnings, dialog_task)
