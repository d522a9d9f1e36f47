"""JSON submissions whose candidates may be named by text (a DSTC6 result list or a score document): each item's
candidate strings with a setter that writes them back mapped to ids, and a quick check that every string is an id.

Nothing here reports a problem: a file that cannot be read this way is left for the submission reader to report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterator


def only_ids(raw: bytes, head: bytes, id_pattern: bytes, candidates: Callable[[], list[Container[str]]]) -> bool:
    """True when every candidate string of a JSON submission has the shape of an id (then no text pass is needed).

    DSTC6 lists: one regex scan for a ``"candidate_id"`` whose string does not match ``id_pattern`` (the literal
    makes it fast). Score documents: their keys decoded alone (values kept raw) and checked against
    ``candidates()`` (the items' shared candidate collections); anything unreadable -> False.
    """
    if head == b"[":
        return not re.search(rb'"candidate_id"\s*:\s*"(?!(?:' + id_pattern + rb')")', raw)
    if head != b"{":
        return True  # neither form: the submission reader reports it
    import msgspec

    try:
        doc = msgspec.json.decode(raw, type=_keys_only_type())
    except Exception:  # noqa: BLE001 - the full pass (and then the reader) diagnoses it
        return False
    shared = candidates()
    return all(any(c in s for s in shared) for v in doc.items.values() for c in v)


_KEYS_ONLY = None


def _keys_only_type():
    """A score document with its values left undecoded (built on first use: msgspec is imported lazily)."""
    global _KEYS_ONLY
    if _KEYS_ONLY is None:
        import msgspec

        # defstruct with real types: a class body here would leave its annotation as a string (future annotations)
        _KEYS_ONLY = msgspec.defstruct("KeysOnly", [("items", dict[str, dict[str, msgspec.Raw]])])
    return _KEYS_ONLY


def entries(doc) -> Iterator[tuple[str, list[str], Callable[[list[str]], None]]]:
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
