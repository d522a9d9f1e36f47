"""Candidates a submission names by text, matched to ids before the submission is read: what a benchmark whose
candidates have texts (Movie Dialog) returns from :meth:`~dialeval.benchmarks.itemset.ItemSetBenchmark.translate`.

The benchmark gives, per item set, its :class:`CandidateNames` (how an item's strings map to ids); the JSON walking
is :mod:`dialeval.formats.textnames`. A submission naming ids only is read as it is. A benchmark using this declares
the code of the warning that a submission was compared as normalised text among its ``problem_codes`` (a shared
module emits no benchmark's code), and says so in its signature.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dialeval.core.problems import Problem, counted

if TYPE_CHECKING:
    from collections.abc import Container

    from dialeval.benchmarks.items import ItemSet


class CandidateNames(Protocol):
    """One item set's candidate names (e.g. :class:`dialeval.formats.movie.CandidateNames`)."""

    ids: Container[str]  # every candidate id of the set

    def exact(self, i: int, strings: list[str]) -> list[str | None]:
        """Item ``i``'s strings as ids where each is an id or a candidate's exact text (the k-th copy of a repeated
        text: its k-th candidate), else None."""

    def canonical(self, i: int, s: str) -> str | None:
        """The id standing for every candidate of item ``i`` whose text normalises like ``s`` (an id: its text)."""


def names_to_ids(sub: Path, sets: list[ItemSet], names_of: Callable[[ItemSet], CandidateNames], id_pattern: bytes,
                 tmp: Path, problems: list[Problem], notes: list[str], *, normalised_code: str) -> Path | None:
    """A copy of a JSON submission with candidate texts replaced by ids, or None when it names only ids.

    Exact texts map to their ids and change nothing else. If some string is neither an id nor an exact text,
    the whole submission is compared as normalised text: each string becomes the id of the first candidate
    whose text normalises alike, each item's gold becomes the ids standing for its golds' normalised texts
    (the ItemSets' gold is replaced), and candidates normalising alike are merged (best rank / highest
    score kept). Anything that cannot be read here is left for the submission reader to report.
    ``id_pattern``: what an id looks like (a regular expression, bytes), for the quick check that no text is named;
    ``normalised_code``: the benchmark's own code of the warning that the submission was compared as normalised text.
    """
    if sub.suffix.lower() in (".npy", ".csv") or not sub.is_file():
        return None
    from dialeval.core.ranks import LineIds
    from dialeval.files.read import read_bytes
    from dialeval.formats.textnames import entries, only_ids

    raw = read_bytes(sub)
    head = raw[:64].lstrip(b"\xef\xbb\xbf \t\r\n")[:1]

    def shared() -> list:  # the sets' shared candidates, each answering ``in`` fast
        once = {id(s.candidates): s.candidates for s in sets if s.shared}.values()
        return [c if isinstance(c, LineIds) else frozenset(c) for c in once]

    if only_ids(raw, head, id_pattern, shared):
        return None
    try:
        import msgspec

        doc = msgspec.json.decode(raw)
    except Exception:  # noqa: BLE001 - unreadable JSON is reported by the submission reader
        return None
    del raw
    pos: dict[str, tuple[int, int]] = {}
    for k, s in enumerate(sets):
        for i, iid in enumerate(s.item_ids):
            pos[iid] = (k, i)
    found = [(pos[iid], strings, apply) for iid, strings, apply in entries(doc) if iid in pos]
    names: dict[int, CandidateNames] = {}

    def matcher(k: int) -> CandidateNames:
        if k not in names:
            names[k] = names_of(sets[k])
        return names[k]

    if all(s in matcher(k).ids for (k, _), strings, _ in found for s in strings):
        return None
    exact = [matcher(k).exact(i, strings) for (k, i), strings, _ in found]
    normalised = any(c is None for ids in exact for c in ids)
    n_text_items = 0
    if not normalised:
        for (_, strings, apply), ids in zip(found, exact, strict=True):
            if ids != strings:
                n_text_items += 1
            apply([c if c is not None else s for c, s in zip(ids, strings, strict=True)])
        notes.append(f"candidates given as text in {counted(n_text_items, 'item')} were matched to ids by their "
                     "exact text")
    else:
        golds_done: set[int] = set()
        for ((k, i), strings, apply) in found:
            m = matcher(k)
            apply([m.canonical(i, s) or s for s in strings])
            n_text_items += any(s not in m.ids for s in strings)
            if k not in golds_done and sets[k].gold is not None:
                golds_done.add(k)
                s_ = sets[k]
                s_.gold = [frozenset(c for g in gs if (c := m.canonical(j, g)) is not None) for j, gs in enumerate(s_.gold)]
        notes.append("candidates were compared as normalised text (lower-case, punctuation -> space, a/an/the dropped, "
                     "spaces collapsed): candidates whose texts normalise alike count as one")
        gives = "item gives" if n_text_items == 1 else "items give"
        problems.append(Problem(normalised_code, "", f"{n_text_items} {gives} candidates that are neither ids nor "
                                "exact candidate texts: the whole submission was compared as normalised text",
                                "warning", sub.name))
    out = tmp / sub.name
    import msgspec

    out.write_bytes(msgspec.json.encode(doc))
    os.chmod(out, 0o600)
    return out
