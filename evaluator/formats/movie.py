"""Movie Dialog dataset (Dodge et al. 2016): file layout, entity list, answer splitting, text normalisation, the
task files' exchanges and the candidates a submission may name by text.

Layout of a data directory (the release's own names, flat)::

    entities.txt                         one entity per line (75,542): the candidates of tasks 1-3
    task1_qa_{train,dev,test}.txt        FB format, ``1 question<TAB>answer``, one exchange per conversation
    task2_recs_{train,dev,test}.txt      FB format, one exchange per conversation
    task3_qarecs_{train,dev,test}.txt    FB format, three exchanges (IDs 1-3) per conversation
    task4_reddit_{train,dev,test}.txt    FB format, Reddit threads (may be longer)
    task4_reddit_cand-{valid,test}.txt   Reddit candidates, ``1 <text>`` lines separated by blank lines
                                         (``valid`` serves the ``dev`` split; ``cand-<x>.txt`` is accepted too)

Answers of tasks 1-3 are entity lists joined with ``", "``, but 244 entities contain a comma themselves
(``Girl, Interrupted``): :func:`split_answer` segments an answer against the entity list, never on the comma.

Candidate ids (stable, documented in the benchmark):

- tasks 1-3: ``e<N>`` with N the 1-based line number of the entity in ``entities.txt``;
- task 4: ``c<N>`` with N the 1-based position of the candidate among the candidate file's non-blank lines,
  and ``reply`` for the item's own true reply (the 10,001st candidate).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.core.ranks import LineIds
from dialeval.files.read import memo_key

TASK_NAMES = {1: "task1_qa", 2: "task2_recs", 3: "task3_qarecs", 4: "task4_reddit"}
"""File-name stem prefix per task; the split is appended as ``_{split}.txt``."""

SPLITS = ("train", "dev", "test")
ENTITIES = "entities.txt"
REPLY_ID = "reply"
"""Candidate id of a Reddit item's own true reply."""

_FILE_RE = re.compile(r"^(task[1-4]_(?:qa|recs|qarecs|reddit))_(train|dev|test)\.txt$")


def _locate(data: Path, name: str, task: int | None = None) -> Path:
    """``data/name``, or ``data/<task folder>/name`` as in the release's tarball (``task1_qa/task1_qa_test.txt``)."""
    flat = Path(data) / name
    if flat.exists() or task is None:
        return flat
    nested = Path(data) / TASK_NAMES[task] / name
    return nested if nested.exists() else flat


def task_path(data: Path, task: int, split: str) -> Path:
    return _locate(data, f"{TASK_NAMES[task]}_{split}.txt", task)


def present(data: Path) -> dict[str, list[int]]:
    """``{split: [tasks]}`` for the task files present under ``data`` (split order: train, dev, test)."""
    by_split: dict[str, set[int]] = {}
    stems = {v: k for k, v in TASK_NAMES.items()}
    try:
        names = [p.name for p in Path(data).iterdir()]
    except FileNotFoundError:
        raise UsageError(f"Movie Dialog data directory {data} does not exist") from None
    except NotADirectoryError:
        raise UsageError(f"Movie Dialog data directory {data} is not a directory") from None
    for sub in TASK_NAMES.values():  # the release's layout: one folder per task
        if (Path(data) / sub).is_dir():
            names += [p.name for p in (Path(data) / sub).iterdir()]
    for name in names:
        m = _FILE_RE.match(name)
        if m and m.group(1) in stems:
            by_split.setdefault(m.group(2), set()).add(stems[m.group(1)])
    return {s: sorted(by_split[s]) for s in SPLITS if s in by_split}


def reddit_candidates_path(data: Path, split: str) -> Path:
    """The Reddit candidate file serving ``split`` (``dev`` uses ``cand-valid``); UsageError when absent."""
    keys = ("valid", "dev") if split == "dev" else (split,)
    tried = []
    for k in keys:
        for name in (f"task4_reddit_cand-{k}.txt", f"cand-{k}.txt"):
            p = _locate(data, name, 4)
            tried.append(name)
            if p.exists():  # a FIFO or a device is then refused by the reader, naming what it is
                return p
    raise UsageError(f"{data}: no Reddit candidate file for split {split} (expected {' or '.join(tried[:2])})")


@dataclass
class Entities:
    """The entity list: ``ids[i]``/``texts[i]`` in file order, and lookups by exact and lower-cased text.

    ``by_text.get(text)`` / ``by_lower.get(lowered text)`` give the id of the first entity (file order) with that
    text / lower-cased text. A list of up to :data:`COMPACT_FROM` entities holds plain lists and dicts; a longer
    one (a large knowledge base) is held compactly — the texts as one UTF-8 block, each lookup as a sorted
    array of hashes (:class:`TextLookup`) — at some 60 bytes per entity instead of some 300.
    """

    path: Path
    ids: LineIds  # e<N>: N the entity's line in the file
    texts: Sequence[str]
    by_text: Mapping[str, str] | TextLookup  # exact text -> id
    by_lower: Mapping[str, str] | TextLookup  # lower-cased text -> id of the first entity with it (file order)
    part_counts: tuple[int, ...]
    """The numbers of ``", "``-separated parts the entities have, largest first (what :func:`split_answer`
    tries)."""


COMPACT_FROM = 1 << 18
"""Entity lists this long are held compactly (the release has 75,542 entities: plain dicts, fastest)."""


class Texts(Sequence):
    """Texts without a newline, held as one UTF-8 block joined by newlines; each is decoded when read."""

    def __init__(self, blob: bytes | bytearray, ends: np.ndarray):
        self.blob, self.ends = blob, ends  # ends[i]: where text i ends (the next starts one byte later)

    def __len__(self) -> int:
        return len(self.ends)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]  # negative indexes, and IndexError
        start = int(self.ends[i - 1]) + 1 if i else 0
        return self.blob[start:int(self.ends[i])].decode("utf-8")


class TextLookup:
    """Text -> id of the first entity (file order) whose text (or lower-cased text) equals it.

    The keys' hashes, sorted: a lookup reads the run of its text's hash and keeps the earliest entity whose
    key equals the text (what a dict filled in file order with ``setdefault`` gives). Hashes only narrow the
    search (equal texts hash alike); every answer is checked against the text itself.
    """

    def __init__(self, hashes: np.ndarray, key, ids: LineIds):
        self.order = np.argsort(hashes)
        self.hashes = hashes[self.order]
        self.key, self.ids = key, ids  # key(i): the compared text of entity i

    def get(self, text: str, default=None):
        h = hash(text)
        at = int(np.searchsorted(self.hashes, h))
        first = None
        while at < len(self.hashes) and self.hashes[at] == h:
            i = int(self.order[at])
            if (first is None or i < first) and self.key(i) == text:
                first = i
            at += 1
        return default if first is None else self.ids[first]


def read_entities(path: str | Path) -> Entities:
    """``entities.txt``: id ``e<N>`` for the entity on line N (empty lines are skipped, numbering kept).

    Streamed through the input layer (a FIFO or a device is refused at once; a leading BOM is dropped).
    A line of spaces is an entity like any other, as it always was: only empty lines are skipped. While
    reading, only the texts' bytes and a few integers per entity are kept (see :class:`Entities`)."""
    from array import array

    from dialeval.files.read import iter_byte_lines, line_not_utf8

    path = Path(path)
    numbers = array("q")
    blob = bytearray()  # the texts' UTF-8 bytes, joined by newlines
    sizes = array("q")  # each text's bytes
    text_hashes = array("q")
    lower_hashes = array("q")
    counts: set[int] = set()
    block: list[bytes] = []

    def add_block() -> None:  # a block of lines at a time: each step below is one C-level pass
        if not block:
            return
        joined = b"\n".join(block)
        try:
            texts = joined.decode("utf-8").split("\n")
        except UnicodeDecodeError:
            first = len(numbers) - len(block)
            bad = next(k for k, raw in enumerate(block) if not _is_utf8(raw))
            raise line_not_utf8(str(path), numbers[first + bad], block[bad]) from None
        if blob:
            blob.extend(b"\n")
        blob.extend(joined)
        sizes.extend(map(len, block))
        text_hashes.extend(map(hash, texts))
        lower_hashes.extend(map(hash, map(str.lower, texts)))
        counts.update(map(SEPARATOR_COUNT, texts))  # lower-casing neither makes nor removes ", "
        block.clear()

    for n, raw in iter_byte_lines(path, what="the Movie Dialog entity list (a UTF-8 text file)", bom_ok=True):
        raw = raw.rstrip(b"\r")  # the layer removes one "\r" before "\n"; the list has always dropped them all
        if raw:
            numbers.append(n)
            block.append(raw)
            if len(block) == 1 << 14:
                add_block()
    add_block()
    if not numbers:
        raise UsageError(f"{path}: no entities")
    part_counts = tuple(sorted((c + 1 for c in counts), reverse=True))
    ids = LineIds("e", np.frombuffer(numbers, dtype=np.int64))
    if len(ids) < COMPACT_FROM:
        texts = blob.decode("utf-8").split("\n")
        by_text: dict[str, str] = {}
        by_lower: dict[str, str] = {}
        for eid, text in zip(ids, texts, strict=True):
            by_text.setdefault(text, eid)
            by_lower.setdefault(text.lower(), eid)
        return Entities(path, ids, texts, by_text, by_lower, part_counts)
    ends = np.cumsum(np.frombuffer(sizes, dtype=np.int64) + 1) - 1  # + 1: the newline after each text
    texts = Texts(blob, ends)
    return Entities(path, ids, texts, TextLookup(np.frombuffer(text_hashes, dtype=np.int64), texts.__getitem__, ids),
                    TextLookup(np.frombuffer(lower_hashes, dtype=np.int64), lambda i: texts[i].lower(), ids),
                    part_counts)


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


SEPARATOR = ", "
SEPARATOR_COUNT = operator.methodcaller("count", SEPARATOR)
MAX_ANSWER_PARTS = 100_000
"""The most ``", "``-separated parts an answer may have (the release's longest has a few dozen): the
segmentation keeps some 100 bytes per part, so a data line of millions of separators is refused instead."""


def split_answer(answer: str, entities: Entities) -> tuple[list[str], int]:
    """Segment an answer into entity ids against the entity list: ``(ids, unmatched parts)``.

    The answer is cut at every ``", "`` into parts; a segmentation groups consecutive parts into pieces,
    each of which must be an entity (exact text, else the same text ignoring case). Among all
    segmentations the one with the fewest unmatched parts wins, then the one with the fewest pieces
    (the longest matches), then the one whose first piece is longest — so ``Girl, Interrupted`` stays one
    entity while ``Alien, Aliens`` is two. Parts that no segmentation can cover are counted, not guessed.
    Ids keep the answer's order, without repeats.

    Linear in the answer's length: a piece of m parts can only be an entity if some entity has m parts
    (lower-casing neither makes nor removes ``", "``), so only those lengths are tried
    (:attr:`Entities.part_counts`: 1 to 4 on the release), each piece is one slice of the answer, and the
    best segmentation is kept as a back-pointer per part instead of a list copied at every step.
    """
    # part k spans answer[starts[k]:ends[k]]; a piece of parts i..j-1 is answer[starts[i]:ends[j - 1]]
    starts = [0]
    ends = []
    sep = len(SEPARATOR)
    at = answer.find(SEPARATOR)
    while at >= 0:
        ends.append(at)
        starts.append(at + sep)
        at = answer.find(SEPARATOR, at + sep)
    ends.append(len(answer))
    n = len(starts)
    counts = entities.part_counts
    by_text, by_lower = entities.by_text, entities.by_lower
    # for parts[i:]: cost = (unmatched parts, pieces); step = the next position (i + 1 when parts[i] is
    # unmatched); eid = the entity of parts[i:step] (None when unmatched). Filled from the end.
    unmatched = [0] * (n + 1)
    pieces = [0] * (n + 1)
    step = [0] * n
    eids: list[str | None] = [None] * n
    for i in range(n - 1, -1, -1):
        best: tuple[int, int] | None = None
        best_j = 0
        best_eid = None
        for m in counts:  # largest first: on equal cost the longer piece is kept
            j = i + m
            if j > n:
                continue
            piece = answer[starts[i]:ends[j - 1]]
            eid = by_text.get(piece) or by_lower.get(piece.lower())
            if eid is None:
                continue
            cost = (unmatched[j], pieces[j] + 1)
            if best is None or cost < best:
                best, best_j, best_eid = cost, j, eid
        skip = (unmatched[i + 1] + 1, pieces[i + 1])  # parts[i] matches nothing
        if best is None or skip < best:
            best, best_j, best_eid = skip, i + 1, None
        unmatched[i], pieces[i] = best
        step[i], eids[i] = best_j, best_eid
    ids: list[str] = []
    i = 0
    while i < n:
        if eids[i] is not None:
            ids.append(eids[i])  # type: ignore[arg-type]
        i = step[i]
    return list(dict.fromkeys(ids)), unmatched[0]


_PUNCT = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize_text(text: str) -> str:
    """ParlAI-style answer normalisation: lower-case, punctuation -> space, drop a/an/the, collapse spaces."""
    s = _PUNCT.sub(" ", text.lower())
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


# ---- the candidate files, read once per (path, size, mtime) and shared by every task and split reading them ----


@lru_cache(maxsize=2)
def _entities(path: str, size: int, mtime_ns: int):
    ents = read_entities(path)
    return ents, ents.ids  # a LineIds: the items' shared candidates, compact however long the list


_CANON: dict[int, dict[str, str]] = {}


def entity_canon(ents: Entities) -> dict[str, str]:
    """Normalised text -> id of the first entity (file order) with it; built on first text matching only."""
    d = _CANON.get(id(ents))
    if d is None:
        d = {}
        for eid, text in zip(ents.ids, ents.texts, strict=True):
            d.setdefault(normalize_text(text), eid)
        _CANON[id(ents)] = d
    return d


def load_entities(data: Path):
    """``(Entities, candidate id tuple)`` for ``data/entities.txt`` (memoised)."""
    path = Path(data) / ENTITIES
    return _entities(*memo_key(path, "the Movie Dialog entity list, candidates of tasks 1-3"))


class _FirstByNormalised:
    """Normalised text -> id of the first candidate (file order) normalising to it; built on first use, since
    only submissions that give candidates as text need it."""

    def __init__(self, cands, ids: tuple[str, ...]):
        self._cands, self._ids = cands, ids
        self._d: dict[str, str] | None = None

    def get(self, text: str, default=None):
        if self._d is None:
            d: dict[str, str] = {}
            for cid, t in zip(self._ids, self._cands, strict=True):
                d.setdefault(normalize_text(t), cid)
            self._d = d
        return self._d.get(text, default)


@lru_cache(maxsize=2)
def _reddit(path: str, size: int, mtime_ns: int):
    from dialeval.formats.fbdialog import CandidateFile, IdsByText

    cands = CandidateFile(path)  # compact: a candidate file may be large
    if not len(cands):
        raise UsageError(f"{path}: no candidates (an empty candidate file?)")
    ids = tuple(f"c{n}" for n in range(1, len(cands) + 1))
    return ids, cands, IdsByText(cands, ids, list), _FirstByNormalised(cands, ids)


def load_reddit_candidates(data: Path, split: str):
    """``(ids c1..cN, texts, text -> ids, normalised text -> first id)`` of the split's Reddit candidate file.

    ``texts`` is a sequence (the compact :class:`~dialeval.formats.fbdialog.CandidateFile`); the two lookups
    have ``get(text, default)``."""
    path = reddit_candidates_path(data, split)
    return path, _reddit(*memo_key(path))


def has_reddit_candidates(data: Path, split: str) -> bool:
    try:
        reddit_candidates_path(data, split)
    except UsageError:
        return False
    return True


# ---- a task file's exchanges ------------------------------------------------------------------------------


@dataclass
class TaskFile:
    """One task file's exchanges in file order (the items), and the candidates they are ranked among."""

    task: int
    path: Path
    item_ids: list[str]
    conversation_ids: list[str]
    turns: list[int]  # the exchange's position in its conversation, from 1
    gold: list[frozenset[str]] | None  # None: read without the answers
    replies: list[str] | None  # task 4: each exchange's reply text (text matching needs it even without gold)
    candidates: Sequence[str]  # the ids every exchange is ranked among: e<N> (a LineIds), or c1..cN and reply
    files: tuple[Path, ...]  # the task file, then the candidate file
    partial: list[int]  # lines whose answer has parts that match no entity (tasks 1-3, read with the answers)
    unmatched: int  # of those, the answers matching no entity at all


def read_task(data: Path, task: int, split: str, with_gold: bool = True) -> TaskFile:
    """Every exchange (``ID question<TAB>answer``) of one task file, with its golds when ``with_gold`` (else ids only:
    the answers are not split); an answer's parts that match no entity are counted, not guessed."""
    from dialeval.formats.fbdialog import iter_lines

    path = task_path(data, task, split)
    stem = path.stem
    item_ids: list[str] = []
    conv_ids: list[str] = []
    turns: list[int] = []
    gold: list[frozenset[str]] = []
    conv = turn = 0
    if task == 4:
        cpath, (ids, texts, by_text, _) = load_reddit_candidates(data, split)
        replies: list[str] | None = []
        cand_files = [cpath]
    else:
        ents, ids = load_entities(data)
        replies = None
        cand_files = [ents.path]
    partial: list[int] = []
    unmatched_items = 0
    for ln in iter_lines(path):
        if ln.bot is None:
            continue  # a fact / context line without an answer
        if ln.conversation != conv:
            conv, turn = ln.conversation, 0
        turn += 1
        item_ids.append(f"{stem}:{conv}:{ln.lid}")
        conv_ids.append(f"{stem}:{conv}")
        turns.append(turn)
        if task == 4:
            replies.append(ln.bot)  # type: ignore[union-attr]  (text matching needs it even without gold)
        if not with_gold:
            continue
        if task == 4:
            gold.append(frozenset((REPLY_ID, *by_text.get(ln.bot, ()))))
        else:
            if ln.bot.count(SEPARATOR) >= MAX_ANSWER_PARTS:
                raise UsageError(f"{path}:{ln.lineno}: an answer of more than {MAX_ANSWER_PARTS:,} comma-separated "
                                 "parts; not a Movie Dialog answer (an entity list)")
            gids, missing = split_answer(ln.bot, ents)
            if missing:
                partial.append(ln.lineno)
                unmatched_items += not gids
            gold.append(frozenset(gids))
    if not item_ids:
        raise UsageError(f"{path}: no exchanges (ID question<TAB>answer lines): not a Movie Dialog file?")
    cands = (*ids, REPLY_ID) if task == 4 else ids
    return TaskFile(task, path, item_ids, conv_ids, turns, gold if with_gold else None, replies, cands,
                    (path, *cand_files), partial, unmatched_items)


def task_item_ids(path: Path) -> list[str]:
    """A task file's item ids alone (read without any candidate file)."""
    from dialeval.formats.fbdialog import iter_lines

    return [f"{path.stem}:{ln.conversation}:{ln.lid}" for ln in iter_lines(path) if ln.bot is not None]


# ---- candidates a submission names by text ----------------------------------------------------------------


class CandidateNames:
    """One task file's candidate names: maps an item's submitted strings to candidate ids (exact id, exact text,
    normalised text). ``replies``: the task 4 items' reply texts (each item's ``reply`` candidate)."""

    def __init__(self, task: int, replies: list[str] | None, data: Path, split: str):
        self.replies = replies
        if task == 4:
            _, (ids, texts, by_text, canon) = load_reddit_candidates(data, split)
            self._canon = canon
            self.ids = frozenset((*ids, REPLY_ID))
            self.by_text = by_text
            self.texts = texts
            self.pos = lambda cid: int(cid[1:]) - 1  # c<N> is the N-th candidate
        else:
            ents, ids = load_entities(data)
            self._canon = None
            self._ents = ents
            self.ids = ids  # a LineIds: ``in`` reads the id's number
            self.by_text = _AsList(ents.by_text)
            self.texts = ents.texts
            self.pos = ids.columns().__getitem__

    @property
    def canon(self) -> dict[str, str]:
        if self._canon is None:
            self._canon = entity_canon(self._ents)
        return self._canon

    def reply(self, i: int) -> str | None:
        return self.replies[i] if self.replies is not None else None

    def exact(self, i: int, strings: list[str]) -> list[str | None]:
        """Ids for strings that are ids or exact texts (the k-th copy of a repeated text -> its k-th id)."""
        used: dict[str, int] = {}
        out: list[str | None] = []
        reply = self.reply(i)
        for s in strings:
            if s in self.ids:
                out.append(s)
                continue
            options = self.by_text.get(s, [])
            if reply is not None and s == reply:
                options = [REPLY_ID, *options]
            k = used.get(s, 0)
            used[s] = k + 1
            out.append(options[k] if k < len(options) else None)
        return out

    def text(self, cid: str, i: int) -> str:
        if cid == REPLY_ID:
            return self.reply(i) or ""
        return self.texts[self.pos(cid)]

    def canonical(self, i: int, s: str) -> str | None:
        """The id standing for every candidate whose text normalises like ``s`` (an id stands for its text)."""
        if s in self.ids:
            s = self.text(s, i)
        n = normalize_text(s)
        reply = self.reply(i)
        if reply is not None and n == normalize_text(reply):
            return REPLY_ID
        return self.canon.get(n)


class _AsList:
    """An entity lookup (text -> id) answering as the Reddit one does: text -> [id]."""

    def __init__(self, lookup):
        self._lookup = lookup

    def get(self, text: str, default=None):
        eid = self._lookup.get(text)
        return default if eid is None else [eid]


ID_PATTERN = rb"e[0-9]+|c[0-9]+|reply"
"""What a candidate id looks like (``e<N>``, ``c<N>``, ``reply``): a submission naming only such strings needs no
text pass."""
