"""Movie Dialog dataset (Dodge et al. 2016), tasks 1-4, scored with hits@k straight from the FB text files.

Data: the release's files (see :mod:`dialeval.formats.movie`): ``task{N}_{name}_{split}.txt`` for the splits
present (``train``, ``dev``, ``test``), ``entities.txt`` (candidates of tasks 1-3) and the Reddit candidate
file of the split (task 4). Every exchange (``ID question<TAB>answer``) is one item.

Ids (stable: they depend only on the data files):

- item id ``<file stem>:<conversation>:<line ID>``, e.g. ``task1_qa_test:17:1`` = the exchange on the line with
  ID 1 of the 17th conversation (1-based, file order); conversation id ``<file stem>:<conversation>``;
  turn = the exchange's position in its conversation (task 3: 1, 2, 3);
- tasks 1-3: candidate id ``e<N>`` = the entity on line N of ``entities.txt`` (75,542 candidates);
- task 4: candidate id ``c<N>`` = the N-th candidate of the Reddit candidate file (1-based, blank lines not
  counted) and ``reply`` = the item's own true reply: 10,001 candidates per item.

Gold: tasks 1-3 answers are entity lists joined with ", "; they are split against ``entities.txt``
(:func:`dialeval.formats.movie.split_answer`, never on the comma) and every entity of the answer is a gold
(hits@k = any gold among the top k). Answer parts that match no entity are organizer-data faults: a warning
names the file and lines, the item is scored against the entities that do match, and an item with none
counts as a miss for every system. Task 4: ``reply`` plus any file candidate with exactly the reply's text.

Submissions: the DSTC6 result format or JSON scores keyed by these ids, or a ``.npy``/``.csv`` matrix (one task
at a time: a row per item in file order, a column per candidate in id order, ``reply`` last). In the two JSON
forms a candidate may also be given by its text: the exact text of an entity / candidate maps to its id;
any other string is compared after ParlAI-style normalisation (lower-case, punctuation -> space, a/an/the
dropped, spaces collapsed) — then every candidate and gold of the submission is compared that way, texts
normalising alike count as one candidate, and the report says so.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Evaluation, Request, task_numbers
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.core.errors import UsageError
from dialeval.core.problems import Problem, counted
from dialeval.files.read import os_error
from dialeval.formats import movie

TASKS = tuple(sorted(movie.TASK_NAMES))
TURN_GROUPS = ("3",)
"""Groups whose report breaks the numbers down by turn position (QA+Recs: recommend, question, recommend)."""


@lru_cache(maxsize=2)
def _entities(path: str, size: int, mtime_ns: int):
    ents = movie.read_entities(path)
    return ents, ents.ids  # a LineIds: the items' shared candidates, compact however long the list


_CANON: dict[int, dict[str, str]] = {}


def entity_canon(ents) -> dict[str, str]:
    """Normalised text -> id of the first entity (file order) with it; built on first text matching only."""
    d = _CANON.get(id(ents))
    if d is None:
        d = {}
        for eid, text in zip(ents.ids, ents.texts, strict=True):
            d.setdefault(movie.normalize_text(text), eid)
        _CANON[id(ents)] = d
    return d


def load_entities(data: Path):
    """``(Entities, candidate id tuple)`` for ``data/entities.txt`` (memoised)."""
    path = Path(data) / movie.ENTITIES
    try:
        st = path.stat()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (the Movie Dialog entity list, candidates of tasks 1-3)") from None
    except OSError as e:
        raise os_error(str(path), e) from None
    return _entities(str(path), st.st_size, st.st_mtime_ns)


class _IdsByText:
    """Reddit candidate text -> the ids of the candidates with exactly that text (a list; ``default`` if none)."""

    def __init__(self, cands, ids: tuple[str, ...]):
        self._cands, self._ids = cands, ids

    def get(self, text: str, default=None):
        found = self._cands.positions(text)
        return [self._ids[i] for i in found] if found else default


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
                d.setdefault(movie.normalize_text(t), cid)
            self._d = d
        return self._d.get(text, default)


@lru_cache(maxsize=2)
def _reddit(path: str, size: int, mtime_ns: int):
    from dialeval.formats.fbdialog import CandidateFile

    cands = CandidateFile(path)  # compact: a candidate file may be large
    if not len(cands):
        raise UsageError(f"{path}: no candidates (an empty candidate file?)")
    ids = tuple(f"c{n}" for n in range(1, len(cands) + 1))
    return ids, cands, _IdsByText(cands, ids), _FirstByNormalised(cands, ids)


def load_reddit_candidates(data: Path, split: str):
    """``(ids c1..cN, texts, text -> ids, normalised text -> first id)`` of the split's Reddit candidate file.

    ``texts`` is a sequence (the compact :class:`~dialeval.formats.fbdialog.CandidateFile`); the two lookups
    have ``get(text, default)``."""
    path = movie.reddit_candidates_path(data, split)
    try:
        st = path.stat()
    except OSError as e:
        raise os_error(str(path), e) from None
    return path, _reddit(str(path), st.st_size, st.st_mtime_ns)


class _TaskData:
    """One task file's items plus what text matching needs (kept beside the ItemSet)."""

    def __init__(self, task: int, path: Path, item_set, replies: list[str] | None, cand_files: list[Path]):
        self.task = task
        self.path = path
        self.items = item_set
        self.replies = replies  # task 4: each item's reply text
        self.cand_files = cand_files


def load_task(data: Path, task: int, split: str, problems: list[Problem], with_gold: bool = True) -> _TaskData:
    """Read one task file into an :class:`~dialeval.benchmarks.items.ItemSet` (group = the task number).

    ``with_gold`` False: ids only (a task outside ``--task``, or validation), the answers are not split."""
    from dialeval.benchmarks.items import ItemSet
    from dialeval.formats.fbdialog import iter_lines

    path = movie.task_path(data, task, split)
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
            gold.append(frozenset((movie.REPLY_ID, *by_text.get(ln.bot, ()))))
        else:
            if ln.bot.count(movie.SEPARATOR) >= movie.MAX_ANSWER_PARTS:
                raise UsageError(f"{path}:{ln.lineno}: an answer of more than {movie.MAX_ANSWER_PARTS:,} comma-separated "
                                 "parts; not a Movie Dialog answer (an entity list)")
            gids, missing = movie.split_answer(ln.bot, ents)
            if missing:
                partial.append(ln.lineno)
                unmatched_items += not gids
            gold.append(frozenset(gids))
    if not item_ids:
        raise UsageError(f"{path}: no exchanges (ID question<TAB>answer lines): not a Movie Dialog file?")
    if partial:
        lines = ", ".join(map(str, partial[:5])) + (", ..." if len(partial) > 5 else "")
        none = (f"; {unmatched_items} of them match no entity at all and count as misses for every system"
                if unmatched_items else "")
        problems.append(Problem(
            "answer-not-entity", "", f"line {partial[0]} of the data file: {len(partial)} answer(s) have parts "
            f"that match no line of {movie.ENTITIES} (lines {lines}); those items are scored against the entities "
            f"that do match{none}", "warning", path.name))
    cands = (*ids, movie.REPLY_ID) if task == 4 else ids
    s = ItemSet(str(task), item_ids, cands, gold if with_gold else None, conv_ids, turns,
                files=(path, *cand_files), extra=replies)
    return _TaskData(task, path, s, replies, cand_files)


class MovieDialog(ItemSetBenchmark):
    name = "movie-dialog"
    public_data_note = ("every exchange's answer is written on its line after the question, and is the context of the "
                        "exchanges after it")
    title = "Movie Dialog dataset: QA, recommendations, QA+recs (entity candidates), Reddit (10,001 candidates); hits@k"
    group_label = "task"
    split_names = movie.SPLITS
    one_split = True
    data_name = "Movie Dialog"
    split_descriptions = {"train": "training examples", "dev": "development examples", "test": "test examples"}
    group_names = {"1": "QA", "2": "Recs", "3": "QA+Recs", "4": "Reddit"}
    group_descriptions = {
        "1": "factoid questions about movies (11 question types); hits@1",
        "2": "recommend a movie from the user's liked movies; hits@100",
        "3": "a recommendation, a question about it, a second recommendation; hits@10",
        "4": "real movie discussions from Reddit: the true reply among 10,001 candidates; hits@10",
    }
    default_metrics = ("hits@1", "hits@10", "hits@100")
    submission_formats = (
        "dstc6-result keyed by item ids (<file stem>:<conversation>:<line ID>); candidates as ids or text",
        'JSON scores {"format": "scores", "items": {item id: {candidate id or text: score}}}',
        ".npy / headerless .csv matrix (one task: a row per item, a column per candidate)",
    )
    problem_codes = {  # this benchmark's own codes (the shared ones: core.problems.CODES)
        "answer-not-entity": "(warning) a Movie Dialog answer with parts that match no line of entities.txt",
        "text-normalised": "(warning) candidates given as text matched after normalisation (lower-case, no punctuation or a/an/the)",
    }

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [str(t) for t in ts] for s, ts in movie.present(data).items()}

    def scoring_files(self, data: Path, splits: list[str]) -> list[Path]:
        """The splits' task files, ``entities.txt`` (tasks 1-3's candidates) and the splits' Reddit candidate files
        (task 4), where the release's task folders hold them too; never a train file."""
        tasks = movie.present(data)
        out = [movie.task_path(data, t, s) for s in splits for t in tasks.get(s, ())]
        if any(t != 4 for s in splits for t in tasks.get(s, ())):
            out.append(Path(data) / movie.ENTITIES)
        return out + [movie.reddit_candidates_path(data, s) for s in splits
                      if 4 in tasks.get(s, ()) and _has_reddit_candidates(data, s)]

    def load(self, data, split, group, with_gold, problems):
        return load_task(data, int(group), split, problems, with_gold=with_gold).items

    def select_groups(self, requested: list[str]) -> list[str]:
        return [str(t) for t in task_numbers(requested, TASKS, "Movie Dialog")]

    def loadable(self, data: Path, split: str, group: str) -> bool:
        return group != "4" or _has_reddit_candidates(data, split)

    def outside_ids(self, data: Path, split: str, group: str) -> list[str]:
        """Task 4's item ids without its candidate file (read from the task file alone)."""
        from dialeval.formats.fbdialog import iter_lines

        path = movie.task_path(data, int(group), split)
        return [f"{path.stem}:{ln.conversation}:{ln.lid}" for ln in iter_lines(path) if ln.bot is not None]

    def split_of_id(self, item_id: str) -> str | None:
        return item_id.partition(":")[0].rpartition("_")[2]

    def other_split_ids(self, data: Path, split: str, groups: list[str]):
        from dialeval.benchmarks.rankings import fb_item_ids

        return fb_item_ids(movie.task_path(data, int(t), split) for t in groups)

    def translate(self, request, sets, problems, notes, tmp):
        # the tasks asked for only: items of the others are left out, so their strings never change the reading
        loaded = [_TaskData(int(s.group), s.files[0], s, s.extra, list(s.files[1:])) for s in sets if not s.optional]
        return translate_texts(Path(request.submission), loaded, Path(request.data), tmp, problems, notes)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        normalised = any(p.code == "text-normalised" for p in ev.problems)
        return {"tasks": [int(g) for g in ev.groups], "gold": "normalised-text" if normalised else "id", "nc": "all",
                "ties": request.ties}

    def subsets(self, table) -> list[tuple[str, object]]:
        """Task 3 (QA+Recs): the numbers by turn position too (1 recommend, 2 question, 3 recommend)."""
        if not len(table) or str(table.group[0]) not in TURN_GROUPS:
            return []
        return groups_by_turn(table)


def groups_by_turn(table) -> list[tuple[str, np.ndarray]]:
    """``[("turn 1", mask), ("turn 2", mask), ...]`` over the turn positions present (rows with turn 0 left out)."""
    turns = sorted(int(t) for t in np.unique(table.turn) if t > 0)
    if len(turns) < 2:
        return []
    return [(f"turn {t}", table.turn == t) for t in turns]


def _has_reddit_candidates(data: Path, split: str) -> bool:
    try:
        movie.reddit_candidates_path(data, split)
    except UsageError:
        return False
    return True


# ---- candidates given as text -----------------------------------------------------------------------------


class _Matcher:
    """Maps one item's submitted candidate strings to candidate ids (exact id, exact text, normalised text)."""

    def __init__(self, td: _TaskData, data: Path, split: str):
        self.td = td
        if td.task == 4:
            _, (ids, texts, by_text, canon) = load_reddit_candidates(data, split)
            self._canon = canon
            self.ids = frozenset((*ids, movie.REPLY_ID))
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
        return self.td.replies[i] if self.td.replies is not None else None

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
                options = [movie.REPLY_ID, *options]
            k = used.get(s, 0)
            used[s] = k + 1
            out.append(options[k] if k < len(options) else None)
        return out

    def text(self, cid: str, i: int) -> str:
        if cid == movie.REPLY_ID:
            return self.reply(i) or ""
        return self.texts[self.pos(cid)]

    def canonical(self, i: int, s: str) -> str | None:
        """The id standing for every candidate whose text normalises like ``s`` (an id stands for its text)."""
        if s in self.ids:
            s = self.text(s, i)
        n = movie.normalize_text(s)
        reply = self.reply(i)
        if reply is not None and n == movie.normalize_text(reply):
            return movie.REPLY_ID
        return self.canon.get(n)


class _AsList:
    """An entity lookup (text -> id) answering as the Reddit one does: text -> [id]."""

    def __init__(self, lookup):
        self._lookup = lookup

    def get(self, text: str, default=None):
        eid = self._lookup.get(text)
        return default if eid is None else [eid]


def _split_of(path: Path) -> str:
    return path.stem.rsplit("_", 1)[1]


_ID = rb'(?:e[0-9]+|c[0-9]+|reply)"'
_NON_ID = re.compile(rb'"candidate_id"\s*:\s*"(?!' + _ID + rb')')
"""A DSTC6 result entry whose candidate string does not look like an id (``e<N>``, ``c<N>``, ``reply``)."""


def _only_ids(raw: bytes, head: bytes, loaded: list[_TaskData]) -> bool:
    """True when every candidate string of a JSON submission has the shape of an id (then no text pass is needed).

    DSTC6 lists: one regex scan (the ``"candidate_id"`` literal makes it fast). Score documents: their keys
    decoded alone (values kept raw) and checked against the candidate ids; anything unreadable -> False.
    """
    if head == b"[":
        return not _NON_ID.search(raw)
    if head != b"{":
        return True  # neither form: the submission reader reports it
    import msgspec

    try:
        doc = msgspec.json.decode(raw, type=_keys_only_type())
    except Exception:  # noqa: BLE001 - the full pass (and then the reader) diagnoses it
        return False
    from dialeval.core.ranks import LineIds

    shared = {id(c): c for td in loaded if td.items.shared for c in [td.items.candidates]}.values()
    ids = [c if isinstance(c, LineIds) else frozenset(c) for c in shared]  # each answers ``in`` fast
    return all(any(c in s for s in ids) for v in doc.items.values() for c in v)


_KEYS_ONLY = None


def _keys_only_type():
    """A score document with its values left undecoded (built on first use: msgspec is imported lazily)."""
    global _KEYS_ONLY
    if _KEYS_ONLY is None:
        import msgspec

        # defstruct with real types: a class body here would leave its annotation as a string (future annotations)
        _KEYS_ONLY = msgspec.defstruct("KeysOnly", [("items", dict[str, dict[str, msgspec.Raw]])])
    return _KEYS_ONLY


def translate_texts(sub: Path, loaded: list[_TaskData], data: Path, tmp: Path, problems: list[Problem],
                    notes: list[str]) -> Path | None:
    """A copy of a JSON submission with candidate texts replaced by ids, or None when it names only ids.

    Exact texts map to their ids and change nothing else. If some string is neither an id nor an exact text,
    the whole submission is compared as normalised text: each string becomes the id of the first candidate
    whose text normalises alike, each item's gold becomes the ids standing for its golds' normalised texts
    (the ItemSets' gold is replaced), and candidates normalising alike are merged (best rank / highest
    score kept). Anything that cannot be read here is left for the submission reader to report.
    """
    if sub.suffix.lower() in (".npy", ".csv") or not sub.is_file():
        return None
    from dialeval.files.read import read_bytes

    raw = read_bytes(sub)
    head = raw[:64].lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    if _only_ids(raw, head, loaded):
        return None
    try:
        import msgspec

        doc = msgspec.json.decode(raw)
    except Exception:  # noqa: BLE001 - unreadable JSON is reported by the submission reader
        return None
    del raw
    pos: dict[str, tuple[int, int]] = {}
    for k, td in enumerate(loaded):
        for i, iid in enumerate(td.items.item_ids):
            pos[iid] = (k, i)
    entries = list(_entries(doc))  # (item position, strings, setter)
    entries = [(pos[iid], strings, apply) for iid, strings, apply in entries if iid in pos]
    matchers: dict[int, _Matcher] = {}

    def matcher(k: int) -> _Matcher:
        if k not in matchers:
            matchers[k] = _Matcher(loaded[k], data, _split_of(loaded[k].path))
        return matchers[k]

    if all(s in matcher(k).ids for (k, _), strings, _ in entries for s in strings):
        return None
    exact = [matcher(k).exact(i, strings) for (k, i), strings, _ in entries]
    normalised = any(c is None for ids in exact for c in ids)
    n_text_items = 0
    if not normalised:
        for (_, strings, apply), ids in zip(entries, exact, strict=True):
            if ids != strings:
                n_text_items += 1
            apply([c if c is not None else s for c, s in zip(ids, strings, strict=True)])
        notes.append(f"candidates given as text in {counted(n_text_items, 'item')} were matched to ids by their "
                     "exact text")
    else:
        golds_done: set[int] = set()
        for ((k, i), strings, apply) in entries:
            m = matcher(k)
            apply([m.canonical(i, s) or s for s in strings])
            n_text_items += any(s not in m.ids for s in strings)
            if k not in golds_done and loaded[k].items.gold is not None:
                golds_done.add(k)
                s_ = loaded[k].items
                s_.gold = [frozenset(c for g in gs if (c := m.canonical(j, g)) is not None) for j, gs in enumerate(s_.gold)]
        notes.append("candidates were compared as normalised text (lower-case, punctuation -> space, a/an/the dropped, "
                     "spaces collapsed): candidates whose texts normalise alike count as one")
        gives = "item gives" if n_text_items == 1 else "items give"
        problems.append(Problem("text-normalised", "", f"{n_text_items} {gives} candidates that are neither ids nor "
                                "exact candidate texts: the whole submission was compared as normalised text",
                                "warning", sub.name))
    out = tmp / sub.name
    import msgspec

    out.write_bytes(msgspec.json.encode(doc))
    os.chmod(out, 0o600)
    return out


def _entries(doc):
    """``(item id, candidate strings, setter)`` for every well-formed item of a DSTC6 list or a score document.

    The setter writes mapped strings back; strings mapping to the same id are merged (best rank kept and ranks
    renumbered 1..m when all are integers; highest score kept).
    """
    if isinstance(doc, list):
        for item in doc:
            if not isinstance(item, dict) or not isinstance(item.get("dialog_id"), str):
                continue
            lst = item.get("lst_candidate_id")
            if not isinstance(lst, list) or not all(isinstance(e, dict) and isinstance(e.get("candidate_id"), str)
                                                    for e in lst):
                continue

            def apply(new, lst=lst, item=item):
                for e, c in zip(lst, new, strict=True):
                    e["candidate_id"] = c
                if len(set(new)) == len(new):
                    return
                if not all(type(e.get("rank")) is int for e in lst):
                    return  # the reader reports the bad ranks; duplicates are reported with them
                keep, seen = [], set()
                for e in sorted(lst, key=lambda e: e["rank"]):
                    if e["candidate_id"] not in seen:
                        seen.add(e["candidate_id"])
                        keep.append(e)
                for r, e in enumerate(keep, 1):
                    e["rank"] = r
                item["lst_candidate_id"] = keep

            yield item["dialog_id"], [e["candidate_id"] for e in lst], apply
    elif isinstance(doc, dict) and isinstance(doc.get("items"), dict):
        items = doc["items"]
        for iid, scores in list(items.items()):
            if not isinstance(scores, dict):
                continue

            def apply(new, iid=iid, scores=scores):
                merged: dict = {}
                for c, v in zip(new, scores.values(), strict=True):
                    if c in merged and _num(merged[c]) and _num(v):
                        merged[c] = max(merged[c], v)
                    elif c not in merged:
                        merged[c] = v
                items[iid] = merged

            yield iid, list(scores), apply


def _num(v) -> bool:
    return type(v) in (int, float)
