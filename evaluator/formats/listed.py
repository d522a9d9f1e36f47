"""Listed rankings: a JSON array of items, each naming an item and listing candidates best first.

``[{<item>: id, <ranking>: [{<candidate>: id, <score>: x}, ...]}, ...]`` with the field names a benchmark gives
in a :class:`ListedForm` (DSTC7 and DSTC8: ``example-id``, ``candidate-ranking``, ``candidate-id``,
``confidence``). The listed order is the ranking; scores are kept only to warn when they disagree with it.
Ids are matched by value whatever their JSON type (``1100001`` and ``"1100001"`` are one id: :func:`key`).

:func:`read_listed` walks a submission and reports what is wrong with its structure; checking it against the
data's items is :mod:`dialeval.benchmarks.listed`'s. The organiser files that go with such rankings: the data
(:func:`read_items`: a JSON array of items, each with its candidates and correct candidates as objects holding
the candidate field), an answer key (:func:`read_answer_key`) and a list of candidates such as a pool
(:func:`read_id_list`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from pathlib import Path

import msgspec

from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import json_type
from dialeval.files.read import SNIFF_BYTES, organiser_fields, read_bytes, sniff
from dialeval.formats.jsonio import decode_organiser_json, parse_json_bytes

UNSET = msgspec.UNSET


@dataclass(frozen=True)
class ListedForm:
    """The field names of one benchmark's listed rankings, and what its answers mean."""

    name: str  # the submission format, as reports name it ("dstc7-ranking")
    item: str  # the item id's field ("example-id")
    ranking: str  # the list's field ("candidate-ranking")
    candidate: str  # an entry's candidate id ("candidate-id")
    score: str  # an entry's score, read only to warn when it rises along the list ("confidence")
    noun: str = "item"  # what an item is called in messages ("example")
    none_id: str | None = None  # the answer "no candidate is correct", where the benchmark has one ("NONE")
    complete: int = 100  # a ranking listing fewer than min(this, the item's candidates) is warned about
    number_ids: str = ""  # lenient reading: the warning, with {n}, when item ids are JSON numbers (empty: none)
    # the data (:func:`read_items`): an item's candidates and correct candidates (objects with the candidate field),
    # and other fields kept as (name, type) pairs
    options: str = "options"
    correct: str = "correct"
    fields: tuple[tuple[str, object], ...] = ()


@dataclass
class ItemFile:
    """A data file of a listed form: per item its id, candidate ids and correct ids (None when the file withholds
    them), and the values of the form's other ``fields`` (field -> a value per item)."""

    path: Path
    ids: list[str]
    options: list[tuple[str, ...]]
    correct: list[tuple[str, ...]] | None
    fields: dict[str, list]

    def one(self, field: str):
        """The one value every item gives ``field`` (None when they differ or there is no item)."""
        values = set(self.fields[field])
        return values.pop() if len(values) == 1 else None


def key(value: object) -> str | None:
    """An id as the text it is matched by: a string as written, an integer's digits; None for any other type."""
    if isinstance(value, str):
        return value
    return str(value) if type(value) is int else None


@lru_cache(maxsize=8)
def _decoders(form: ListedForm) -> tuple[msgspec.json.Decoder, msgspec.json.Decoder, type, type]:
    entry = msgspec.defstruct("Entry", [("cid", object, UNSET), ("score", object, UNSET)],
                              rename={"cid": form.candidate, "score": form.score}, gc=False)
    item = msgspec.defstruct("Listed", [("iid", object, UNSET), ("ranking", list[entry] | msgspec.UnsetType, UNSET)],
                             rename={"iid": form.item, "ranking": form.ranking}, gc=False)
    ids = msgspec.defstruct("Named", [("iid", object, UNSET)], rename={"iid": form.item}, gc=False)
    return msgspec.json.Decoder(list[item]), msgspec.json.Decoder(list[ids]), item, entry


@lru_cache(maxsize=8)
def _data_decoder(form: ListedForm) -> msgspec.json.Decoder:
    cand = msgspec.defstruct("Candidate", [("cid", str | int)], rename={"cid": form.candidate}, gc=False)
    fields = [("iid", str | int), ("options", list[cand], []), ("correct", list[cand] | None, None),
              *((f"f{j}", t, None) for j, (_, t) in enumerate(form.fields))]
    names = {"iid": form.item, "options": form.options, "correct": form.correct,
             **{f"f{j}": name for j, (name, _) in enumerate(form.fields)}}
    return msgspec.json.Decoder(list[msgspec.defstruct("Item", fields, rename=names, gc=False)])


def read_items(path: Path, form: ListedForm, what: str) -> ItemFile:
    """A data file of the form: a JSON array of items (utterances are never decoded). An organiser file: what is
    wrong in it (an id used twice too) is a usage error."""
    items = decode_organiser_json(path, _data_decoder(form), what)
    ids = list(map(str, map(attrgetter("iid"), items)))  # str or int (typed): an int's digits, as key() gives
    if len(set(ids)) < len(ids):
        raise UsageError(f"{path}: an {form.item} is used twice")
    given = [e.correct for e in items]
    correct = None if all(g is None for g in given) else [tuple(key(c.cid) for c in g or ()) for g in given]
    return ItemFile(path, ids, [tuple(map(str, map(attrgetter("cid"), e.options))) for e in items], correct,
                    {name: [getattr(e, f"f{j}") for e in items] for j, (name, _) in enumerate(form.fields)})


def read_answer_key(path: Path, form: ListedForm) -> dict[str, list[str]]:
    """An answer key, ``<item id><TAB>id1,id2,...`` per line: item id -> correct ids in file order, as written
    (spaces, empty and repeated ids kept, for a lenient reading to count). Columns after the second are ignored.
    An organiser file: what is wrong in it is a usage error."""
    out: dict[str, list[str]] = {}
    for n, fields in organiser_fields(path, what="an answer key file", maxsplit=2):
        if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
            raise UsageError(f"{path}:{n}: expected {form.item}<TAB>id1,id2,...")
        out[fields[0].strip()] = fields[1].split(",")
    return out


def read_id_list(path: Path, form: ListedForm, what: str) -> frozenset[str]:
    """The candidate ids of an organiser's list of candidates (a pool): a JSON array of objects with the form's
    candidate field, or text lines whose first tab-separated field is the id."""
    raw = read_bytes(path, what=what)
    if raw.lstrip()[:1] != b"[":
        return frozenset(f[0].strip() for _, f in organiser_fields(path, what=what, maxsplit=1) if f[0].strip())
    entry = msgspec.defstruct("Candidate", [("cid", str | int)], rename={"cid": form.candidate}, gc=False)
    return frozenset(key(c.cid) for c in decode_organiser_json(path, msgspec.json.Decoder(list[entry]), what, raw))


def listed_ids(raw: bytes, form: ListedForm) -> set[str]:
    """The item ids a submission names (its rankings skipped); none for a file that is not such an array."""
    try:
        return {key(i.iid) for i in _decoders(form)[1].decode(raw)} - {None}
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return set()


def read_listed(raw: bytes, file: str, form: ListedForm, add, strict: bool = True):
    """Yield ``(i, item id as written, listed ids or None when an entry is malformed, scores)`` for each item of
    ``raw`` (named ``file``) with an id and a list, reporting every structural problem through ``add(code,
    pointer, message)``. Strict: ids are :func:`key` s. Lenient (an official scorer's reading): ids are kept as
    written, and what would crash that scorer is ``official-crash``."""
    whole, _, item_type, entry_type = _decoders(form)
    bad = sniff(raw[:SNIFF_BYTES], expect="a JSON submission")
    try:
        if bad is not None:
            raise bad
        try:
            items = whole.decode(raw)
        except (msgspec.ValidationError, msgspec.DecodeError, ValueError, RecursionError):
            items = parse_json_bytes(raw, file)  # a plain reading explains what the typed one refused
    except UnreadableInput as e:
        add(e.code, "", e.reason)
        return
    if not isinstance(items, list):
        add("not-a-list", "", f"top level is a {json_type(items)}: expected an array of "
            f'{{"{form.item}": ..., "{form.ranking}": [...]}} objects')
        return
    crash = None if strict else "official-crash"
    for i, item in enumerate(items):
        if isinstance(item, item_type):
            iid, ranking = item.iid, item.ranking
        elif isinstance(item, dict):
            iid, ranking = item.get(form.item, UNSET), item.get(form.ranking, UNSET)
        else:
            add(crash or "item-not-object", f"/{i}", f"is a {json_type(item)}, not an object")
            continue
        if iid is UNSET or ranking is UNSET:
            add(crash or "missing-key", f"/{i}", f"has no {form.item if iid is UNSET else form.ranking!r}")
            continue
        k = key(iid)
        if not isinstance(ranking, list) or (k is None and (strict or isinstance(iid, list | dict))):
            what = f"{form.ranking} is a {json_type(ranking)}" if k is not None else f"{form.item} is a {json_type(iid)}"
            add(crash or "wrong-type", f"/{i}", what)
            continue
        if isinstance(item, item_type):  # typed entries: one pass per list, unless one lacks its candidate
            cids = [e.cid for e in ranking]
            if UNSET not in cids:
                yield i, iid, [c if type(c) is str else key(c) for c in cids] if strict else cids, [e.score for e in ranking]
                continue
        ids: list | None = []
        scores: list = []
        for j, e in enumerate(ranking):
            if isinstance(e, entry_type):
                c, s = e.cid, e.score
            elif isinstance(e, dict):
                c, s = e.get(form.candidate, UNSET), e.get(form.score)
            else:
                add(crash or "item-not-object", f"/{i}/{form.ranking}/{j}", f"is a {json_type(e)}, not an object")
                ids = None
                break
            if c is UNSET:
                add(crash or "missing-key", f"/{i}/{form.ranking}/{j}", f"has no {form.candidate!r}")
                ids = None
                break
            ids.append(key(c) if strict else c)
            scores.append(s)
        yield i, iid, ids, scores
