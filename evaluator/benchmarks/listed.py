"""Listed rankings (:mod:`dialeval.formats.listed`) checked against item sets and turned into a rank table.

For a benchmark declaring :attr:`~dialeval.benchmarks.itemset.ItemSetBenchmark.listed` (DSTC7, DSTC8). An item
set's ``candidates`` are sets (a frozenset per item, one shared pool, or :class:`AnyId`); its ``gold`` the correct ids
of each item, in the order an answer key lists them.

Strict: an id outside the item's candidates, an id listed twice, an item ranked twice or unknown is an error; an
empty ranking, or one longer than the item set's ``longest``, is an error; a ranking listing fewer than
``min(form.complete, the item's candidates)`` of them (``none_id`` is no candidate here) and scores that rise
along the list are warnings; an item not ranked scores 0 and is a warning. Lenient (an official scorer's reading):
ids are kept as written, duplicates and unknown ids are kept (the last ranking of an item wins) and nothing else
is checked. No message names a correct id: messages echo what the submission itself contains.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dialeval.benchmarks.base import Option
from dialeval.core.errors import UsageError
from dialeval.core.problems import Capped, Problem, short
from dialeval.files.read import file_sha256, read_bytes
from dialeval.formats.listed import key, listed_ids, read_answer_key, read_id_list, read_listed

if TYPE_CHECKING:
    from dialeval.benchmarks.items import ItemSet
    from dialeval.core.ranks import RankTable
    from dialeval.formats.listed import ItemFile, ListedForm


class AnyId:
    """The candidates of an item whose candidate set the data do not list (DSTC7 subtask 2's pool without its
    file): every id is one of them, and there are ``n``."""

    def __init__(self, n: int):
        self.n = n

    def __contains__(self, _id) -> bool:
        return True

    def issuperset(self, _ids) -> bool:
        return True

    def __len__(self) -> int:
        return self.n


CONTEXTS = Option("contexts", "dstc8: examples that count: all (the official scorer), mixed (the NOESIS II baseline's "
                  "is_valid_query) or with-positive.", "choice", ("mixed", "with-positive", "all"), "all")
"""Which items a listed ranking's numbers count, for a form whose answer may be ``none_id`` (DSTC8): ``all`` (the
official scorer: every item of the ground truth), ``mixed`` (the NOESIS II baseline's ``subtask1/answer_selection/
metrics.py``, which skips a query without a positive or without a negative, so every item whose answer is none)
or ``with-positive`` (items with a correct candidate). The same flag, kind and choices as Douban's ``--contexts``."""


def kept_contexts(table: RankTable, sets: list[ItemSet], contexts: str, form: ListedForm) -> tuple[RankTable, str]:
    """(the table's rows that ``contexts`` counts, the note saying how many items it left out and why)."""
    left: dict[str, str] = {}
    for x in sets:
        for i, (iid, gold) in enumerate(zip(x.item_ids, x.gold or (), strict=False)):
            if form.none_id in gold:
                left[iid] = "without a correct candidate"
            elif contexts == "mixed" and set(x.candidates_of(i)) - {form.none_id} <= set(gold):
                left[iid] = "without a wrong candidate"
    keep = ~np.isin(table.item_id, list(left))
    why = {w: sum(1 for v in left.values() if v == w) for w in dict.fromkeys(left.values())}
    tail = "; " + ", ".join(f"{n:,} {w}" for w, n in why.items()) + " left out" if why else "; none left out"
    return table.take(keep), f"contexts {contexts}: {int(keep.sum()):,} of {len(table):,} {form.noun}s scored{tail}"


def one_file(files: list, submission: Path, form: ListedForm, data: Path):
    """The one data file a listed submission answers, of ``files`` (each with ``.path`` and item ``.ids``) that fit
    it by name: when several do, those holding an item it names; a usage error unless one remains."""
    if len(files) > 1:
        named = listed_ids(read_bytes(submission, what="a submission"), form)
        files = [f for f in files if named.intersection(f.ids)] or files
    if len(files) != 1:
        found = ", ".join(f.path.name for f in files[:4]) or "none"
        raise UsageError(f"{data}: {len(files)} data files fit {submission.name} (found: {found}): give --data FILE "
                         "or --split")
    return files[0]


def side_file(given: str | None, folder: Path, word: str) -> Path | None:
    """The file an option names, else the one file in ``folder`` whose name holds ``word`` (a usage error when
    several do), else None."""
    if given:
        return Path(given)
    beside = sorted(p for p in folder.iterdir() if word in p.name.lower() and not p.is_dir())
    if len(beside) > 1:
        raise UsageError(f"{folder}: {len(beside)} {word} files ({beside[0].name}, ...): name one with --{word}")
    return beside[0] if beside else None


def shared_pool(path: Path | None, form: ListedForm, candidates: list, correct, size: int, noun: str):
    """(the candidates every item shares, a note or None): a pool file's ids (:func:`read_id_list`), else every id
    the items list (``candidates``, and their ``correct`` ids), else, where they list none, any of ``size`` ids
    (unchecked, as the note says)."""
    if path is not None:
        return read_id_list(path, form, "a candidate pool file"), None
    if any(candidates):
        return frozenset().union(*candidates, *correct), None
    return AnyId(size), (f"{noun}: the data file lists no candidates, and no pool file is given (--pool): the pool "
                         "file is not read, so ranked ids are not checked against the pool")


def answer_key(ids: list[str], given, keys: dict | None, keys_path, data_path, noun: str = "item",
               as_written: bool = False) -> tuple[list, list]:
    """(the items scored, each one's correct ids): from ``keys`` (item id -> ids as an answer key file lists them)
    when given, else the data's own ``given`` (None: the data withhold them). The key's ids are stripped, empty and
    repeated ones dropped, and every item of the data needs a line; ``as_written`` (an official scorer's reading):
    the key's items and ids, as written. What is missing is a usage error."""
    if keys is not None and as_written:
        return list(keys), [keys[e] for e in keys]
    if keys is None:
        if given is None:
            raise UsageError(f"{data_path}: the correct answers are withheld (a test file): give --keys FILE")
        return ids, given
    missing = [e for e in ids if e not in keys]
    if missing:
        raise UsageError(f"{keys_path}: no line for {noun} {missing[0]} ({len(missing)} {noun}s in all)")
    return ids, [list(dict.fromkeys(g.strip() for g in keys[e] if g.strip())) for e in ids]


def answered_splits(files: list[tuple[str, ItemFile]], keys_path: Path, form: ListedForm) -> list[str]:
    """The splits whose data files (``(split, file)`` pairs) hold items the answer key at ``keys_path`` names, those
    of files withholding their answers (test files, which need it) first: a dev file may reuse the test's item ids.
    Where a hosted challenge's phases get the key (:meth:`~dialeval.benchmarks.base.Benchmark.key_splits`)."""
    named = set(read_answer_key(keys_path, form))
    hits: dict[str, bool] = {}  # split -> one of its files the key answers withholds its answers
    for split, df in files:
        if named.intersection(df.ids):
            hits[split] = hits.get(split, False) or df.correct is None
    return sorted([s for s, withheld in hits.items() if withheld] or hits)


def listed_gold(data: ItemFile, allowed: list, keys_path: Path | None, form: ListedForm, none_ok: bool,
                official=None) -> tuple[list, list]:
    """(each scored item's correct ids, the scored items' ids) of a data file (:func:`answer_key`: its own correct
    ids, or the answer key at ``keys_path``), keeping those among the item's candidates (``allowed``); an item with
    none is answered by ``form.none_id`` where ``none_ok``, else is a usage error. ``official`` (lenient: the
    official scorer's reading, e.g. ``str.upper``) rewrites each correct id, and the key's items are then taken as
    written (:func:`answer_key`'s ``as_written``)."""
    keys = read_answer_key(keys_path, form) if keys_path is not None else None
    ids, given = answer_key(data.ids, data.correct, keys, keys_path, data.path, form.noun, bool(keys) and bool(official))
    if keys is not None and official is not None:
        return [[official(g) for g in c] for c in given], ids
    out = []
    for e, c, a in zip(data.ids, given, allowed, strict=True):
        found = [official(g) if official else g for g in c if g in a and g != form.none_id]
        if not found and not none_ok:
            raise UsageError(f"{data.path}: {form.noun} {e} has no correct answer among its options")
        out.append(found or [form.none_id])
    return out, data.ids


def public_listed(files: dict[str, bytes], form: ListedForm, shared: str | None) -> dict[str, bytes]:
    """What participants may download of a listed benchmark's data files (:meth:`~dialeval.benchmarks.base.Benchmark.
    public_files`): each JSON data file (an array of items holding ``form.options``) without ``form.correct`` (the
    answers, where a file carries them), and a file whose name holds ``shared`` (the candidates every item shares,
    such as a pool, which name no answer) as it is; nothing else (an answer key or a run left beside the data)."""
    import json

    from dialeval.formats.jsonio import parse_json_bytes

    out = {}
    for name, raw in files.items():
        base = name.rpartition("/")[2]
        if shared and shared in base.lower():
            out[name] = raw
        elif base.endswith(".json"):
            items = parse_json_bytes(raw, name)
            if not isinstance(items, list) or not all(isinstance(e, dict) and form.options in e for e in items):
                continue  # not a data file (a run, an answer key as JSON): never published
            if any(form.correct in e for e in items):
                raw = (json.dumps([{k: v for k, v in e.items() if k != form.correct} for e in items],
                                  ensure_ascii=False, indent=1) + "\n").encode()
            out[name] = raw
    return out


def score_listed(submission: Path, sets: list[ItemSet], form: ListedForm, *, benchmark: str, scoring: bool,
                 strict: bool, values) -> tuple[RankTable | None, list[Problem], dict]:
    """(rank table, problems, submission info) of a listed-ranking submission; ``values(where, gold)`` gives an
    item's value columns from the 0-based first position of each of its correct ids (None: not listed)."""
    sub = Path(submission)
    fname = sub.name
    problems = Capped(file=fname)

    def add(code: str, ptr: str, message: str, severity: str = "error") -> None:
        if not problems.full(code, severity):  # past the cap a problem is counted, not built
            problems.append(Problem(code, ptr, message, severity, fname))

    at_of = {iid: (k, i) for k, s in enumerate(sets) for i, iid in enumerate(s.item_ids)}
    listed: dict[tuple[int, int], list] = {}
    where: dict[tuple[int, int], int] = {}
    numbers = long = 0
    for i, iid, ids, scores in read_listed(read_bytes(sub, what="a submission"), fname, form, add, strict):
        at = at_of.get(key(iid))
        if ids is None or at is None:
            if at is None and key(iid) is not None and strict:
                add("unknown-dialog", f"/{i}/{form.item}", f"{form.item} {short(iid)} is not an {form.noun} of the data")
            continue
        numbers += type(iid) is int
        if strict:
            _check(f"/{i}", ids, scores, sets[at[0]].candidates_of(at[1]), form, add, where.get(at), sets[at[0]].longest)
        else:
            long += sets[at[0]].longest is not None and len(ids) > sets[at[0]].longest
        where[at] = i
        listed[at] = ids
    if long:  # lenient only: strict refused each one
        add("official-quirk", "", f"{long} rankings list more ids than the format allows: every listed id counts, "
            "as the official scorer reads them", "warning")
    if numbers and not strict and form.number_ids:
        add("official-quirk", "", form.number_ids.format(n=numbers), "warning")
    unlisted = 0  # missing examples past the cap: one summary line stands for them (its count), as items.py says
    for k, s in enumerate(sets):
        for i, iid in enumerate(s.item_ids):
            if (k, i) in listed or s.optional:
                continue
            if problems.kept.get("missing-dialog", 0) < problems.cap:
                problems.append(Problem("missing-dialog", "", f"{form.noun} {iid} is not ranked: it scores 0",
                                        "warning", fname))
            else:
                unlisted += 1
    if unlisted:
        problems.always(Problem("missing-dialog", "", f"... {unlisted:,} more {form.noun}s are not ranked: each scores 0",
                                "warning", fname, count=unlisted))
    table = _table(sets, listed, benchmark, values) if scoring else None
    info = {"path": str(sub), "kind": "file", "sha256": file_sha256(sub), "format": form.name}
    return table, problems.close(), info


def _check(ptr: str, ids: list, scores: list, allowed, form: ListedForm, add, before, longest: int | None) -> None:
    """Strict checks of one item's ranking (see the module docstring)."""
    ptr += f"/{form.ranking}"
    if longest is not None and len(ids) > longest:
        add("long-ranking", ptr, f"lists {len(ids)} ids: at most {longest} may be listed")
    if before is not None:
        add("duplicate-dialog", ptr[: ptr.rindex("/")] + f"/{form.item}", f"{form.noun} already ranked at #/{before}")
    if not ids:
        add("empty-ranking", ptr, "lists no candidate")
    if len(set(ids)) != len(ids) or not allowed.issuperset(ids):
        seen: set = set()
        for j, c in enumerate(ids):
            at = f"{ptr}/{j}/{form.candidate}"
            if c is None:
                add("wrong-type", at, "is not a string")
            elif c in seen:
                add("duplicate-candidate", at, f"{short(c)} is listed twice")
            elif c not in allowed:
                add("unknown-candidate", at, f"{form.none_id} is an answer only where the correct response may be "
                    "absent" if c == form.none_id else f"{short(c)} is not a candidate of this {form.noun}")
            seen.add(c)
    none = form.none_id is not None and form.none_id in allowed  # "no candidate is correct" is rankable, no option
    listed, options = len(ids) - (none and form.none_id in ids), len(allowed) - none
    if listed < min(options, form.complete):
        add("short-ranking", ptr, f"lists {listed} of {options} candidates: a correct id it leaves out counts "
            "as not found", "warning")
    nums = [c for c in scores if type(c) in (int, float)]
    if len(nums) > 1 and any(map(operator.lt, nums, nums[1:])):
        add("confidence-order", ptr, f"{form.score}s rise along the list: the listed order is the ranking, "
            f"{form.score}s are not read", "warning")


def _first_positions(ids: list, gold) -> list[int | None]:
    """The 0-based first position of each correct id in a listed ranking (None: not listed)."""
    if len(gold) <= 4:  # the usual case: a scan in C per correct id
        return [ids.index(g) if g in ids else None for g in gold]
    first: dict = {}  # many correct ids (an answer key's paraphrases): one pass over the list
    for j, c in enumerate(ids):
        if isinstance(c, str) and c not in first:  # a lenient reading keeps ids as written, hashable or not
            first[c] = j
    return [first.get(g) for g in gold]


def _table(sets: list[ItemSet], listed: dict, benchmark: str, values) -> RankTable | None:
    from dialeval.core.ranks import RankTable

    parts = []
    for k, s in enumerate(sets):
        if s.gold is None or s.optional:
            continue
        rank = np.zeros(len(s), np.int32)
        cols: dict[str, np.ndarray] = {}
        for i, gold in enumerate(s.gold):
            where = _first_positions(listed.get((k, i), ()), gold)
            rank[i] = min((q + 1 for q in where if q is not None), default=0)
            for name, v in values(where, gold).items():
                cols.setdefault(name, np.zeros(len(s)))[i] = v
        parts.append(RankTable.build(benchmark=benchmark, split=s.split, group=s.group, item_ids=s.item_ids,
                                     gold_rank=rank, n_candidates=s.n_candidates(), values=cols))
    return RankTable.concat(parts) if parts else None
