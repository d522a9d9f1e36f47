"""Listed rankings: a JSON array of items, each naming an item and listing candidates best first.

``[{<item>: id, <ranking>: [{<candidate>: id, <score>: x}, ...]}, ...]`` with the field names a benchmark gives
in a :class:`ListedForm` (DSTC7 and DSTC8: ``example-id``, ``candidate-ranking``, ``candidate-id``,
``confidence``). The listed order is the ranking; scores are kept only to warn when they disagree with it.
Ids are matched by value whatever their JSON type (``1100001`` and ``"1100001"`` are one id: :func:`key`).

:func:`read_listed` walks a submission and reports what is wrong with its structure; checking it against the
data's items is :mod:`dialeval.benchmarks.listed`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import msgspec

from dialeval.core.errors import UnreadableInput
from dialeval.core.problems import json_type
from dialeval.files.read import SNIFF_BYTES, sniff
from dialeval.formats.jsonio import parse_json_bytes

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


def listed_ids(raw: bytes, form: ListedForm) -> set[str]:
    """The item ids a submission names (its rankings skipped); none for a file that is not such an array."""
    try:
        return {key(i.iid) for i in _decoders(form)[1].decode(raw)} - {None}
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return set()


def read_listed(raw: bytes, file: str, form: ListedForm, add, strict: bool = True):
    """Yield ``(i, item id as written, listed ids or None when an entry is malformed, scores)`` for each item of
    ``raw`` (named ``file``) with an id and a list, reporting every
    structural problem through ``add(code, pointer, message)``. Strict: ids are :func:`key` s. Lenient (an
    official scorer's reading): ids are kept as written, and what would crash that scorer is ``official-crash``."""
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
