"""Generic submission reading for benchmarks whose data are not DSTC6 JSON test files.

A benchmark reader (bAbI, Ubuntu, Movie Dialog, ...) loads its organizer files into :class:`ItemSet` s, one
per (split, group), and calls :func:`score_items` with the submitted file. Four submission forms are read,
detected from the file (the published schema ``scores`` describes the two JSON ones):

a) **DSTC6 result format**, keyed by the benchmark's item ids (a ``.json`` whose top level is an array)::

       [{"dialog_id": "test:1", "lst_candidate_id": [{"candidate_id": "gt", "rank": 1}, ...]}, ...]

   Checked by DSTC6's own checker (:func:`dialeval.benchmarks.rankings.check_ranked_items`: same codes and messages,
   unknown-dialog, duplicate-dialog, unknown-candidate, duplicate-candidate, rank-out-of-range,
   duplicate-rank, rank-gap, rank-not-integer, wrong-type, missing-key, unknown-key, empty-ranking,
   item-not-object), every problem at once with its JSON pointer. A partial top-m ranking is valid; a gold
   it leaves out is a miss.

b) **JSON scores** (a ``.json`` whose top level is an object)::

       {"format": "scores", "items": {"test:1": {"gt": 0.9, "d0": 0.1, ...}, ...}}

   Higher is better; integer scores compare exactly (up to 64 bits). Candidates an item does not score rank
   below every scored candidate and tie among themselves (a warning says how many items do this); the tie
   policy then applies to them as to any tie. A key an object repeats is a problem, never a silent last-wins.

c) **a .npy matrix** and d) **a headerless .csv matrix**: one row per item, in the order of the item sets
   and of their ``item_ids`` (for Ubuntu, the CSV's row order), one column per candidate in the item's
   candidate order. Every item needs the same number of candidates n; a matrix with k < n columns scores
   the first k candidates only (``n_candidates`` becomes k, and 1-in-N ranks exist only for N <= k). A
   ``.npy`` shape is compared with the split from the file's header, before anything is allocated.

Missing items (JSON forms) are warnings and count as misses (``gold_rank`` 0). With several gold
candidates the best-ranked one counts; for score-based forms golds tied with it form one block
(see :func:`dialeval.formats.scores.rank_in_vector`). Tie policies (``pessimistic`` | ``optimistic`` |
``expected``) are described in :mod:`dialeval.core.ranks`; rank-based forms have no ties.

No message ever names a gold candidate: messages only echo what the submission itself contains. Every
problem of the file is reported, up to :data:`dialeval.core.problems.MAX_LISTED` of each code, then one
line without a code counts the rest; what is wrong with the file's content (not JSON, a BOM, compressed,
...) is a problem too (exit 1), and only the file as a file (missing, a FIFO) is a usage error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dialeval.benchmarks.base import TIE_POLICIES
from dialeval.benchmarks.rankings import (
    WRONG_SPLIT_IDS,
    OtherSplitIds,
    check_ranked_items,
    other_split_hint,
    other_split_outcome,
)
from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import Capped, Problem, counted, json_type, pointer, short
from dialeval.core.ranks import LineIds
from dialeval.files.read import SNIFF_BYTES, check_regular, file_sha256, read_bytes, sniff
from dialeval.formats.scores import fold_ties, rank_in_vector

if TYPE_CHECKING:
    from dialeval.core.ranks import RankTable

MAX_MISSING_WARNINGS = 20
"""Missing items are listed one per line up to this many, then summarised in one line."""

_SMALL = 64  # below this many scores per item, plain Python beats numpy's per-call overhead
_EXACT = 1 << 53  # integers beyond this lose digits as float64: an item holding one is compared in Python, exactly


@dataclass
class ItemSet:
    """The items of one (split, group) of a benchmark whose data has no DSTC6 JSON test files."""

    group: str
    item_ids: Sequence[str]  # unique within the split (a list, or a lazy NumberedIds)
    candidates: list[tuple[str, ...]] | tuple[str, ...] | LineIds  # per item, or ONE sequence shared by all items
    gold: Sequence[frozenset[str]] | None  # gold candidate ids per item (None when only validating)
    conversation_ids: list[str] | None = None
    turns: list[int] | None = None
    texts: dict | None = None  # optional: candidate id -> text (for text-only formats / embedding metrics)
    gold_columns: np.ndarray | int | None = None
    """Optional fast path: the column of each item's single gold in its candidate list, or one int for every
    item (Ubuntu: 0, the ground truth)."""
    longest: int | None = None
    """Optional: the most ids a listed ranking may hold (DSTC7 subtask 2: the top 100 of its pool); a strict reading
    refuses a longer one, since positions past it would still earn MRR and MAP."""
    optional: bool = False
    """Items of a group outside --task: a submission's items of it are left out (neither checked nor scored, counted in
    one ``other-task`` warning); no missing warnings, not in the table."""
    split: str | None = None  # the split its items belong to (None: the split score_items is called with)
    none_id: str | None = None
    """Optional: the answer "no candidate is correct" (DSTC8's ``NONE``), rankable where it is in an item's
    candidates but no candidate: :meth:`n_candidates` leaves it out (a gold rank one past that count is NONE
    ranked after every candidate)."""
    files: tuple[Path, ...] = ()  # the data files its items and gold came from (the data identity)
    extra: object = None  # what the benchmark keeps beside the items (e.g. Movie Dialog's reply texts)
    names: Callable[[int, str], str | None] | None = None
    """Optional: other names a submission may give a candidate (ConvAI2: its text). ``names(item, name)`` is the
    candidate id ``name`` stands for, or None; an id always stands for itself. Two names of one candidate count
    once: its best rank, its highest score."""
    top_values: Callable[[np.ndarray, str], dict[str, np.ndarray]] | None = None
    """Optional: value columns computed from what the submission puts first (ConvAI2: the F1 of the top candidate).
    ``top_values(top, ties)`` gets an (items, candidates) boolean matrix of the candidates tied at the top of each
    item's submitted order (one per row for a ranking; none for an item not ranked) and the tie policy."""

    def __len__(self) -> int:
        return len(self.item_ids)

    @property
    def shared(self) -> bool:
        """True when every item has the same candidate tuple (or the same :class:`~dialeval.core.ranks.LineIds`)."""
        return isinstance(self.candidates, tuple | LineIds)

    def candidates_of(self, i: int) -> tuple[str, ...]:
        return self.candidates if self.shared else self.candidates[i]

    def n_candidates(self) -> np.ndarray:
        """Per item, its real candidates: the ids it may rank, less :attr:`none_id`."""
        none = self.none_id

        def real(c) -> int:
            return len(c) - (none is not None and none in c)

        if self.shared:
            return np.full(len(self), real(self.candidates), np.int32)
        return np.fromiter((real(c) for c in self.candidates), np.int32, len(self.candidates))

    def uniform_width(self) -> int | None:
        """The number of candidates when every item has the same number, else None."""
        if self.shared:
            return len(self.candidates)
        widths = {len(c) for c in self.candidates}
        return widths.pop() if len(widths) == 1 else None


class SameGold(Sequence):
    """The same gold set for each of n items (Ubuntu: ``{"gt"}`` for every row), without an n-long list."""

    __slots__ = ("gold", "n")

    def __init__(self, gold: frozenset[str], n: int):
        self.gold, self.n = gold, int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.gold] * len(range(self.n)[i])
        if not -self.n <= int(i) < self.n:
            raise IndexError("item index out of range")
        return self.gold


class _Index:
    """Candidate id -> column for one item, cached once for a shared candidate tuple."""

    def __init__(self, sets: list[ItemSet]):
        self.sets = sets
        self._shared: dict[int, dict[str, int]] = {}

    def of(self, k: int, i: int) -> Mapping[str, int]:
        s = self.sets[k]
        if s.shared:
            d = self._shared.get(k)
            if d is None:
                d = self._shared[k] = (s.candidates.columns() if isinstance(s.candidates, LineIds)
                                       else {c: j for j, c in enumerate(s.candidates)})
        else:
            d = {c: j for j, c in enumerate(s.candidates[i])}
        return d if s.names is None else _Named(d, s.names, i)


class _Named(Mapping):
    """An item's candidate id -> column that also takes the other names :attr:`ItemSet.names` gives."""

    def __init__(self, cols: dict[str, int], names: Callable[[int, str], str | None], i: int):
        self.cols, self.names, self.i = cols, names, i

    def __getitem__(self, name: str) -> int:
        j = self.cols.get(name)
        if j is None:
            cid = self.names(self.i, name) if type(name) is str else None
            j = None if cid is None else self.cols.get(cid)
            if j is None:
                raise KeyError(name)
        return j

    def __iter__(self):
        return iter(self.cols)

    def __len__(self) -> int:
        return len(self.cols)


class _Out:
    """Per-set result columns, filled item by item (or row block by row block)."""

    def __init__(self, sets: list[ItemSet], nested: tuple[int, ...], other_split_of=None):
        self.rank = [np.zeros(len(s), np.int32) for s in sets]
        self.ties = [np.zeros(len(s), np.int32) for s in sets]
        self.nested = [{n: (np.zeros(len(s), np.int32), np.zeros(len(s), np.int32)) for n in nested} for s in sets]
        self.seen = [np.zeros(len(s), bool) for s in sets]
        # the candidates tied at the top of each item's order, for sets that compute values from them
        self.top = [None if s.top_values is None else np.zeros((len(s), _widest(s)), bool) for s in sets]
        self.width: int | None = None  # matrix forms: columns scored
        self.left_out = 0  # items of groups outside --task (optional sets): neither checked nor scored
        self.other_split: dict[str, int] = {}  # items of each other split of the data: neither checked nor scored
        self.other_split_of = other_split_of
        self.unknown: list[str] = []  # the first WRONG_SPLIT_IDS submitted ids the split does not have
        self.n_unknown = 0  # all of them

    def outside(self, pos_of: Mapping[str, tuple[int, int]], sets: list[ItemSet], iid: str) -> str | None:
        """Where an item the run leaves out belongs: ``""`` a group outside --task, a split's name another split of
        the data; None for an item to check (the split's own, or one of no split)."""
        at = pos_of.get(iid)
        if at is not None:
            return "" if sets[at[0]].optional else None
        return None if self.other_split_of is None else self.other_split_of(iid)

    def leave_out(self, where: str) -> None:
        if where:
            self.other_split[where] = self.other_split.get(where, 0) + 1
        else:
            self.left_out += 1

    def not_in_split(self, iid: str) -> None:
        self.n_unknown += 1
        if len(self.unknown) < WRONG_SPLIT_IDS:
            self.unknown.append(iid)


def score_items(
    submission: str | Path,
    item_sets: list[ItemSet],
    *,
    benchmark: str,
    split: str,
    ties: str,
    scoring: bool,
    nested: tuple[int, ...] = (),
    other_splits: Sequence[tuple[str, OtherSplitIds]] = (),
    group_label: str = "task",
    other_split_of: Callable[[str], str | None] | None = None,
) -> tuple[RankTable | None, list[Problem], dict]:
    """Read a submission for one split and return (rank table over every gold-bearing item, problems, submission info
    {path, kind, sha256, format}).

    The table has one row per item of every set whose ``gold`` is given, in set order then item order
    (None when ``scoring`` is False or no set has gold). ``nested=(2, 10)`` also fills
    ``RankTable.nested[N]`` with the rank of the gold among the first N candidates of each item. See the
    module docstring for the forms read and how ranks are derived. ``other_splits``: the data's other splits,
    as for :func:`other_split_hint`; when the submission names items this split does not have, the problems
    start with the one ``wrong-split`` error that names the split they belong to. Items of ``optional`` sets (the
    groups outside ``--task``) are left out unchecked and said in one ``other-task`` warning, whose message calls
    a group ``group_label``. ``other_split_of(item id)``: the other split of the data (not scored) an id not in
    the split belongs to, else None; a JSON submission's items of other splits are left out unchecked too, and
    said in one ``other-split`` warning when it has items of the split, else in the ``wrong-split`` error.
    """
    if ties not in TIE_POLICIES:
        raise UsageError(f"unknown tie policy {ties!r} (known: {', '.join(TIE_POLICIES)})")
    path = Path(submission)
    # a FIFO or device would block or never end: refused before it is opened
    check_regular(path, what="one submission file (.json, .npy or .csv); this benchmark takes a single file")
    fname = path.name
    suffix = path.suffix.lower()
    # hash the file on a second thread while it is read and ranked (hashlib releases the GIL)
    digest: dict[str, str] = {}
    hasher = threading.Thread(target=lambda: digest.setdefault("sha256", _sha256(path)), daemon=True)
    hasher.start()
    nested = tuple(sorted({int(n) for n in nested}))
    out = _Out(item_sets, nested, other_split_of)
    golds = scoring
    problems = Capped(file=fname)
    split_problem = None  # items of other splits: one warning, or the wrong-split error
    if suffix in (".npy", ".csv"):
        fmt = suffix[1:]
        _read_matrix(path, fmt, item_sets, out, problems, ties, nested, golds)
    else:
        from dialeval.formats.jsonio import JSONArray, read_json_document

        fmt, readable = "unknown", False
        raw = read_bytes(path)
        head = raw[:64].lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        try:
            bad = sniff(raw[:SNIFF_BYTES], expect="a JSON submission, a .npy or a .csv matrix")
            if bad is not None:  # compressed, an archive, a .npy under another name, UTF-16, a BOM: said as such
                raise bad
            if head == b"{":
                fmt = "scores"
                readable = _read_scores_json(raw, fname, item_sets, out, problems, ties, nested, golds)
            else:
                # a large array is checked one item at a time (a hostile file of millions of tiny items then
                # costs its text, not its tree); a reading that starts over forgets what it had found
                mark = problems.mark()

                def use(data) -> bool:
                    if not isinstance(data, list | JSONArray):
                        problems.append(
                            Problem("unknown-format", "", f"top level is a {json_type(data)}: expected a DSTC6 "
                                    'result array or a {"format": "scores", "items": ...} object', file=fname)
                        )
                        return False
                    _read_ranked(data, fname, item_sets, out, problems, nested, golds, split)
                    return True

                def undo() -> None:
                    nonlocal out
                    problems.rewind(mark)
                    out = _Out(item_sets, nested, other_split_of)

                readable = read_json_document(raw, fname, use, undo)
                del raw
                if readable:
                    fmt = "dstc6-result"
        except UnreadableInput as e:  # the participant's file (not JSON, a BOM, compressed...): exit 1
            problems.append(Problem(e.code, "", e.reason, "error", fname))
        if readable:
            _task_hint(item_sets, out, problems, fname, split, group_label)
            _missing_warnings(item_sets, out, problems, fname, split)
        if out.left_out:
            problems.always(other_group_warning(out.left_out, item_sets, group_label, fname))
        if readable and out.other_split:
            own = any(seen.any() for s, seen in zip(item_sets, out.seen, strict=True) if not s.optional)
            split_problem = other_split_outcome(out.other_split, out.n_unknown, split, own, "item ids", fname)
    table = None
    if scoring and any(s.gold is not None and not s.optional for s in item_sets):
        table = _table(item_sets, out, benchmark, split, ties)
    hasher.join()  # last: the table is built while the hash of a large file is still running
    info = {"path": str(path), "kind": "file", "sha256": digest.get("sha256") or _sha256(path), "format": fmt}
    if out.width is not None:
        info["columns"] = out.width
    listed = problems.close()
    if split_problem is not None and split_problem.severity == "warning":
        listed.append(split_problem)
    elif split_problem is None and out.unknown:
        split_problem = other_split_hint(out.unknown, split, other_splits, "item ids")
    return table, ([split_problem] if split_problem is not None and split_problem.severity == "error" else []) + listed, info


def score_replies(submission: str | Path, s: ItemSet, answers: Sequence[Sequence[str]], *, benchmark: str, split: str,
                  scoring: bool, max_chars: int, too_long: str, noun: str = "items"
                  ) -> tuple[RankTable | None, list[Problem], dict]:
    """Read generated replies (:func:`dialeval.formats.replies.read_replies`: a line per item of ``s``, in order) and
    return (a table of their token F1 against ``answers``, in its ``f1`` value column; no ranks, problems, info).
    ``too_long``: the benchmark's code for a line over ``max_chars`` characters."""
    from dialeval.core.ranks import RankTable
    from dialeval.formats.replies import read_replies
    from dialeval.metrics.answer import f1_scores

    path = Path(submission)
    replies, found = read_replies(path, len(s), max_chars, too_long, shown=path.name, noun=noun)
    info = {"path": str(path), "kind": "file", "sha256": file_sha256(path), "format": "text"}
    if found or not scoring:
        return None, _problems(found, path.name), info
    table = RankTable.build(benchmark=benchmark, split=split, group=s.group, item_ids=s.item_ids,
                            gold_rank=np.zeros(len(s), np.int32), n_candidates=_widest(s),
                            conversation_ids=s.conversation_ids, turns=s.turns, values={"f1": f1_scores(replies, answers)})
    return table, [], info


# ---- the rank table -----------------------------------------------------------------------------------


def _widest(s: ItemSet) -> int:
    return len(s.candidates) if s.shared else max(map(len, s.candidates), default=1)


def _table(sets: list[ItemSet], out: _Out, benchmark: str, split: str, ties: str) -> RankTable:
    from dialeval.core.ranks import RankTable

    parts = []
    for k, s in enumerate(sets):
        if s.gold is None or s.optional:
            continue
        # shared: one number, no per-item array to fill (less the NONE answer, no candidate, where there is one)
        ncand = len(s.candidates) - (s.none_id is not None and s.none_id in s.candidates) if s.shared else s.n_candidates()
        if out.width is not None:
            ncand = np.minimum(ncand, out.width)
        nested = {n: v for n, v in out.nested[k].items() if out.width is None or n <= out.width}
        parts.append(
            RankTable.build(
                benchmark=benchmark,
                split=s.split or split,
                group=s.group,
                item_ids=s.item_ids,
                gold_rank=out.rank[k],
                n_candidates=ncand,
                conversation_ids=s.conversation_ids,
                turns=s.turns,
                ties=out.ties[k],
                nested=nested,
                values=None if out.top[k] is None else s.top_values(out.top[k], ties),
            )
        )
    return RankTable.concat(parts)


def _sha256(path: Path) -> str:
    return file_sha256(path)


def _problems(faults: list[Problem], fname: str) -> list[Problem]:
    """A reader's problems (no file) as problems of the submitted file."""
    return [Problem(f.code, f.pointer, f.message, f.severity, fname) for f in faults]


def _positions(sets: list[ItemSet]) -> dict[str, tuple[int, int]]:
    pos: dict[str, tuple[int, int]] = {}
    for k, s in enumerate(sets):
        for i, iid in enumerate(s.item_ids):
            pos[iid] = (k, i)
    return pos


def other_group_warning(n: int, sets: list[ItemSet], group_label: str, fname: str | None = None) -> Problem:
    """THE one warning for ``n`` submitted items of groups outside ``--task`` (the ``optional`` sets), left out."""
    asked = ",".join(dict.fromkeys(s.group for s in sets if not s.optional))
    return Problem("other-task", "", f"{n:,} item{'' if n == 1 else 's'} of {group_label}s other than {asked} left out "
                   f"(--task {asked}): neither checked nor scored", "warning", fname)


def _task_hint(sets, out: _Out, problems: list[Problem], fname: str, split: str, group_label: str) -> None:
    """A run ranking only some groups of the split (of --task, when given) is pointed at --task, as DSTC6's are: the other
    groups' items count as misses, which pulls its all-groups numbers down."""
    ranked: dict[str, bool] = {}
    for s, seen in zip(sets, out.seen, strict=True):
        if not s.optional:
            ranked[s.group] = ranked.get(s.group, False) or bool(seen.any())
    if not any(ranked.values()) or all(ranked.values()):
        return
    only = ",".join(g for g, r in ranked.items() if r)
    problems.append(Problem("task-hint", "", f"only {group_label}(s) {only} of split {split} are ranked: the other "
                            f"{group_label}s' items count as misses; --task {only} scores just those", "warning", fname))


def _missing_warnings(sets, out: _Out, problems: list[Problem], fname: str, split: str) -> None:
    shown = 0
    total = 0
    for k, s in enumerate(sets):
        if s.optional:
            continue
        miss = np.flatnonzero(~out.seen[k])
        total += len(miss)
        for i in miss[: max(0, MAX_MISSING_WARNINGS - shown)].tolist():
            problems.append(
                Problem("missing-dialog", "", f"item {s.item_ids[i]} is not in the submission: scored as a miss", "warning", fname)
            )
            shown += 1
    if total > shown:  # a summary line with its count, kept whatever the cap on problems per code
        getattr(problems, "always", problems.append)(
            Problem("missing-dialog", "", f"... {total:,} items of split {split} in all are not in the submission: "
                    "each is scored as a miss", "warning", fname, count=total - shown)
        )


# ---- a) DSTC6 result format: the checker is dialeval.benchmarks.rankings ----------------------------


def _read_ranked(data: Iterable, file: str, sets, out: _Out, problems: Capped, nested, golds: bool, split: str):
    add, full = problems.append, problems.full
    pos_of = _positions(sets)
    index = _Index(sets)
    seen: dict[str, int] = {}

    def outside(did: str) -> bool:
        at = pos_of.get(did)
        if at is not None and not sets[at[0]].optional:  # the split's own item: the common case, decided here
            return False
        where = out.outside(pos_of, sets, did)
        if where is None:
            return False
        out.leave_out(where)
        return True

    def resolve(i: int, did: str):
        at = pos_of.get(did)
        if at is None:
            out.not_in_split(did)
            if not full("unknown-dialog"):
                add(Problem("unknown-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} is not an item of split {split}", file=file))
            return None
        if did in seen:
            if not full("duplicate-dialog"):
                add(Problem("duplicate-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} was already ranked at {file}#/{seen[did]}", file=file))
            return None
        seen[did] = i
        out.seen[at[0]][at[1]] = True
        return at, index.of(*at)

    # an item the split does not have may rank at most as many candidates as the split's widest item
    max_n = max((len(s.candidates) if s.shared else max(map(len, s.candidates), default=1) for s in sets), default=1)
    for _i, _did, (k, p), rank_of, valid in check_ranked_items(data, file, split_name=split, max_n=max_n,
                                                                 resolve=resolve, add=add, lenient_hint=False,
                                                                 full=full, outside=outside):
        gold = sets[k].gold
        if not golds or not valid or gold is None:  # an invalid ranking is never ranked
            continue
        col_of = index.of(k, p)
        g = gold[p]
        if sets[k].names is not None:  # names -> ids; two names of one candidate: its best rank
            ids = sets[k].candidates_of(p)
            by_id: dict[str, object] = {}
            for c, r in sorted(rank_of.items(), key=lambda cr: cr[1] if type(cr[1]) is int else 0):
                by_id.setdefault(ids[col_of[c]], r)
            rank_of = by_id
        if out.top[k] is not None:
            out.top[k][p, [col_of[c] for c, r in rank_of.items() if r == 1]] = True
        out.rank[k][p] = _best_rank(rank_of, g)
        for N in nested:
            gn = [c for c in g if col_of.get(c, N) < N]
            best = _best_rank(rank_of, gn)
            if best:
                # rank among the first N = 1 + first-N candidates the submission put above the gold
                best = 1 + sum(1 for c, r in rank_of.items() if type(r) is int and r < best and col_of.get(c, N) < N)
            out.nested[k][N][0][p] = best


def _best_rank(rank_of: dict[str, object], gold) -> int:
    best = 0
    for c in gold:
        r = rank_of.get(c)
        if type(r) is int and r >= 1 and (best == 0 or r < best):
            best = r
    return best


# ---- b) JSON scores -----------------------------------------------------------------------------------


def _read_scores_json(raw: bytes, file: str, sets, out: _Out, problems: list[Problem], ties: str, nested, golds):
    from dialeval.formats.scores import decode_scores_json

    pos_of = _positions(sets)

    def outside(iid: str) -> bool:
        return out.outside(pos_of, sets, iid) is not None

    # the items to read: every known one, less those of groups outside --task (asked of skip, as unknown ones are)
    keep = {iid: at for iid, at in pos_of.items() if not sets[at[0]].optional} if any(s.optional for s in sets) \
        else pos_of
    items, faults = decode_scores_json(raw, keep=keep, skip=outside)
    del raw
    problems.extend(_problems(faults, file))
    if items is None:
        return False
    add = problems.append
    index = _Index(sets)
    partial = 0
    for iid, scores in items.items():
        at = keep.get(iid)
        if at is None and (where := out.outside(pos_of, sets, iid)) is not None:
            out.leave_out(where)
            continue
        if at is None:
            out.not_in_split(iid)
            if not problems.full("unknown-dialog"):  # a million unknown items: twenty messages are built
                add(Problem("unknown-dialog", "/items" + pointer(iid), f"item {short(iid)} is not an item of this split", file=file))
            continue
        ptr = "/items" + pointer(iid)
        k, p = at
        out.seen[k][p] = True
        col_of = index.of(k, p)
        n = len(col_of)
        cols = []
        bad = False
        for cid in scores:
            c = col_of.get(cid)
            if c is None:
                bad = True
                if problems.full("unknown-candidate"):
                    continue
                add(Problem("unknown-candidate", ptr + pointer(cid), f"candidate_id {short(cid)} is not a candidate of item {short(iid)}", file=file))
            else:
                cols.append(c)
        if bad:
            continue
        vals = list(scores.values())
        if sets[k].names is not None and len(set(cols)) < len(cols):  # two names of one candidate: its highest score
            best: dict[int, object] = {}
            for c, v in zip(cols, vals, strict=True):
                if c not in best or v > best[c]:
                    best[c] = v
            cols, vals = list(best), list(best.values())
        if len(cols) < n:
            partial += 1
        if out.top[k] is not None:  # the best-scored candidates; with none scored, every candidate ties
            best = max(vals, default=None)
            out.top[k][p, [c for c, v in zip(cols, vals, strict=True) if v == best] if vals else range(n)] = True
        gold = sets[k].gold if golds else None
        if gold is None:
            continue
        gcols = [col_of[c] for c in gold[p] if c in col_of]
        r, t = _rank_scored(cols, vals, n, gcols, ties, None)
        out.rank[k][p], out.ties[k][p] = r, t
        for N in nested:
            r, t = _rank_scored(cols, vals, min(n, N), [c for c in gcols if c < N], ties, N)
            out.nested[k][N][0][p], out.nested[k][N][1][p] = r, t
    if partial:
        add(Problem("unscored-candidate", "", f"{partial} items do not score every candidate: the unscored ones rank "
                    "below every scored candidate of their item and tie among themselves", "warning", file))
    return True


def _rank_scored(cols: list[int], vals: list[float], n: int, gcols: list[int], ties: str, limit: int | None) -> tuple[int, int]:
    """(gold_rank, ties) from the scored (column, value) pairs of one item; unscored columns act as -inf.

    ``limit``: only columns below it take part (1-in-N); ``n`` is the number of candidates taking part.
    """
    if not gcols:
        return 0, 0
    if limit is not None:
        keep = [j for j, c in enumerate(cols) if c < limit]
        cols = [cols[j] for j in keep]
        vals = [vals[j] for j in keep]
    gset = set(gcols)
    if ties == "input-order":  # tied candidates keep the data's order: count only those before the first gold
        return _rank_in_input_order(cols, vals, n, gcols)
    if len(vals) > _SMALL and not any(type(x) is int and not -_EXACT <= x <= _EXACT for x in vals):
        v = np.asarray(vals, dtype=np.float64)
        isg = np.fromiter((c in gset for c in cols), bool, len(cols))
        gv = v[isg]
        if gv.size:
            best = gv.max()
            above = int(np.count_nonzero(v > best))
            tied = int(np.count_nonzero(v[~isg] == best))
            return fold_ties(above, tied, ties)
        n_scored = len(vals)
    else:
        gv = [x for c, x in zip(cols, vals, strict=True) if c in gset]
        if gv:
            best = max(gv)
            above = sum(1 for x in vals if x > best)
            tied = sum(1 for c, x in zip(cols, vals, strict=True) if x == best and c not in gset)
            return fold_ties(above, tied, ties)
        n_scored = len(vals)
    # no gold scored: every scored candidate is above it, unscored non-golds tie with it
    return fold_ties(n_scored, n - n_scored - len(gset), ties)


def _rank_in_input_order(cols: list[int], vals: list, n: int, gcols: list[int]) -> tuple[int, int]:
    """(gold_rank, 0) when tied candidates keep the data's order; unscored columns tie below every scored one."""
    gset = set(gcols)
    gv = [x for c, x in zip(cols, vals, strict=True) if c in gset]
    if not gv:  # every scored candidate is above; the unscored ones before the first gold come first
        scored = set(cols)
        return len(vals) + sum(1 for c in range(min(gcols)) if c not in scored) + 1, 0
    best = max(gv)
    first = min(c for c, x in zip(cols, vals, strict=True) if c in gset and x == best)
    above = sum(1 for x in vals if x > best)
    before = sum(1 for c, x in zip(cols, vals, strict=True) if x == best and c < first)
    return above + before + 1, 0


# ---- c, d) score matrices -----------------------------------------------------------------------------


def _read_matrix(path: Path, fmt: str, sets, out: _Out, problems: list[Problem], ties: str, nested, golds: bool):
    from dialeval.formats.scores import FiniteCheck, MatrixRows, NpyEnded, chunk_rows, open_npy_rows, read_csv_matrix

    file = path.name
    total = sum(len(s) for s in sets)
    widths = {s.uniform_width() for s in sets if len(s)}
    if None in widths or len(widths) > 1:
        problems.append(Problem("wrong-shape", "", "items of this split have different numbers of candidates: "
                                "a matrix cannot hold their scores; submit JSON scores instead", file=file))
        return
    n = widths.pop() if widths else None
    if fmt == "npy":
        # the header alone: the shape is compared with the split before a byte of data is read or allocated
        src, faults = open_npy_rows(path, shown=file)
    else:
        m, faults = read_csv_matrix(path, shown=file, max_columns=n, max_rows=total)
        src = None if m is None else MatrixRows(m)
    if src is None:
        problems.extend(_problems(faults, file))
        return
    rows, k = src.shape
    n = k if n is None else n
    unit = "lines" if fmt == "csv" else "rows"
    if rows != total:
        problems.append(Problem("wrong-shape", "", f"{counted(rows, unit[:-1])}, but the split has {counted(total, 'item')} "
                                f"(one {unit[:-1]} per item, in order)", file=file))
        return
    if k > n or k < 2:
        problems.append(Problem("wrong-shape", "", f"{k} scores per {unit[:-1]}, but each item has {n} candidates"
                                + (" (at least 2 are needed)" if k < 2 else ""), file=file))
        return
    short_data = src.size_fault()
    if short_data is not None:
        problems.extend(_problems([short_data], file))
        return
    sizes = sorted({k, *(N for N in nested if N <= k)})
    plans = _matrix_plans(sets, k, sizes, ties) if golds else []
    check = FiniteCheck(csv_lines=fmt == "csv")
    starts = np.cumsum([0, *map(len, sets)])
    tops = [(starts[j], t) for j, t in enumerate(out.top) if t is not None]
    finite = True
    try:
        # one pass: each chunk is checked, then ranked while it is in cache (ranks are dropped if a later chunk
        # turns out not to be finite: every bad cell is still reported)
        for a, c in src.chunks(chunk_rows(k)):
            finite = check.check(c, a) and finite
            if finite:
                for plan in plans:
                    plan.add(a, c)
                for start, top in tops:  # each row's best-scored columns
                    lo, hi = max(a, start), min(a + len(c), start + len(top))
                    if lo < hi:
                        block = c[lo - a : hi - a]
                        top[lo - start : hi - start, :k] = block == block.max(axis=1, keepdims=True)
    except NpyEnded:  # the file shrank while it was read
        problems.append(Problem("unreadable-matrix", "", "truncated: the file ended before the data its header "
                                "declares", file=file))
        return
    if not finite:
        problems.extend(_problems(check.faults(), file))
        return
    out.width = k
    for s in out.seen:
        s[:] = True
    if k < n:
        problems.append(Problem("wrong-shape", "", f"{k} scores per {unit[:-1]} for {n} candidates: each item is "
                                f"scored among its first {k} candidates only", "warning", file))
    for plan in plans:
        plan.finish(out, nested)


class _MatrixPlan:
    """Ranks of the golds of one item set (a block of matrix rows), accumulated chunk by chunk."""

    def __init__(self, j: int, start: int, s: ItemSet, k: int, sizes: list[int], ties: str):
        from dialeval.formats.scores import new_counts

        self.j, self.start, self.stop, self.k, self.sizes, self.ties = j, start, start + len(s), k, sizes, ties
        gcol, multi = _gold_columns(s)
        if np.ndim(gcol) == 0:  # one gold column for every item (Ubuntu: the ground truth is column 0)
            self.gold, self.col = int(gcol), None
        else:
            # rows whose gold lies beyond the scored columns get rank 0 (a miss); multi-gold rows (-1 here) are
            # ranked one by one
            self.col = np.where((gcol >= 0) & (gcol < k), gcol, k)
            self.gold = np.minimum(self.col, k - 1)
        self.multi_rows = np.array([i for i, _ in multi], np.intp)
        self.multi_cols = [cols for _, cols in multi]
        self.multi_ranks: dict[int, list[tuple[int, int]]] = {}
        self.above, self.same = new_counts(len(sizes), len(s), ties)

    def add(self, a: int, c: np.ndarray) -> None:
        """Rank the rows of chunk ``c`` (matrix rows a, a + 1, ...) that belong to this set."""
        from dialeval.formats.scores import count_above_tied

        lo, hi = max(a, self.start), min(a + len(c), self.stop)
        if lo >= hi:
            return
        block = c[lo - a : hi - a]
        i0, i1 = lo - self.start, hi - self.start
        gold = self.gold if self.col is None else self.gold[i0:i1]
        count_above_tied(block, gold, self.sizes, self.above[:, i0:i1], None if self.same is None else self.same[:, i0:i1],
                         before=self.ties == "input-order")
        if len(self.multi_rows):
            first, last = np.searchsorted(self.multi_rows, [i0, i1])
            for q in range(first, last):
                i = int(self.multi_rows[q])
                v = np.asarray(block[i - i0])  # its own dtype: integers compare exactly
                cols = self.multi_cols[q]
                self.multi_ranks[i] = [rank_in_vector(v[:N], [x for x in cols if x < N], self.ties) for N in self.sizes]

    def finish(self, out: _Out, nested) -> None:
        from dialeval.formats.scores import fold_counts

        ranked = dict(zip(self.sizes, fold_counts(self.above, self.same, self.ties), strict=True))
        for N, (r, t) in ranked.items():
            miss = (self.gold >= N) if self.col is None else (self.col >= N)
            if np.ndim(miss) == 0:
                if miss:
                    r[:] = 0
                    t[:] = 0
            elif miss.any():
                r[miss] = 0
                t[miss] = 0
        for i, per_size in self.multi_ranks.items():
            for N, (rn, tn) in zip(self.sizes, per_size, strict=True):
                ranked[N][0][i], ranked[N][1][i] = rn, tn
        j, k = self.j, self.k
        out.rank[j], out.ties[j] = ranked[k]
        for N in nested:
            if N <= k:
                # among the first k = among all the scored columns: the same numbers, so the same arrays (read-only
                # views: a table never changes its rank columns, and a copy would cost 8 MB per million rows)
                out.nested[j][N] = ranked[N] if N < k else (_read_only(ranked[k][0]), _read_only(ranked[k][1]))


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


def _matrix_plans(sets, k: int, sizes: list[int], ties: str) -> list[_MatrixPlan]:
    plans = []
    row = 0
    for j, s in enumerate(sets):
        if s.gold is not None and len(s):
            plans.append(_MatrixPlan(j, row, s, k, sizes, ties))
        row += len(s)
    return plans


def _gold_columns(s: ItemSet) -> tuple[np.ndarray | int, list[tuple[int, list[int]]]]:
    """Column of each item's single gold (-1 where it has several or none), or one int for every item, and the
    multi-gold rows."""
    if s.gold_columns is not None:
        return (int(s.gold_columns) if np.ndim(s.gold_columns) == 0 else np.asarray(s.gold_columns, dtype=np.intp)), []
    col = np.full(len(s), -1, np.intp)
    multi: list[tuple[int, list[int]]] = []
    index = _Index([s])
    for i, g in enumerate(s.gold):
        col_of = index.of(0, i)
        cols = [col_of[c] for c in g if c in col_of]
        if len(cols) == 1:
            col[i] = cols[0]
        elif cols:
            multi.append((i, cols))
    return col, multi
