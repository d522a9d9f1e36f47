"""Official-compatible scoring (``--lenient``): the DSTC6 Track 1 scorer's numbers on any input it accepts.

The official script keeps, per submitted dialog, ``nb_candidate`` slots (default 10) and writes each
``candidate_id`` into slot ``int(rank) - 1`` with Python list semantics; a dialog scores a hit at k when
the gold id is among the first k slots. Reproduced here, with every quirk reported as a warning:

* two entries with one rank: the later takes the slot;
* rank 0 or a negative rank down to ``-nb``: written from the end (rank 0 is the last slot);
* rank above ``nb``: dropped; ``"1"`` and ``1.7`` are accepted through ``int()``;
* unknown candidate ids are accepted; a repeated ``dialog_id``: the last one wins;
* an item without ``dialog_id`` is skipped; an empty ranking scores 0.

Where the script crashes or exits (rank below ``-nb``, ``"1.0"``, an item without ``lst_candidate_id``,
a non-object entry, ...), :func:`emulate_official` returns an ``official-crash`` error instead: the
submission is not scored (exit 1), and the message says what the script would have done.

One deliberate difference: an answer-key item without a rank-1 entry has no gold. The script then
matches "nothing" against every empty slot in the top k, a false hit; here such an item is a miss and
is reported (``key-without-gold``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.core.problems import Problem, json_type, short
from dialeval.formats.dstc6 import DEFAULT_CANDIDATE_LIMIT
from dialeval.formats.jsonio import JSONArray

_EMPTY = object()


@dataclass
class LenientResult:
    problems: list[Problem] = field(default_factory=list)  # quirk warnings and official-crash errors
    slots: dict[str, list] = field(default_factory=dict)  # dialog id -> candidate-id slots (hashable ids only)


def _official_int(value: object) -> int | None:
    """``int(value)`` as the official script applies it; None where Python's int() raises."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return None
    return None


def emulate_official(
    data: object,
    file: str,
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT,
    candidates_of=None,
    problems: list[Problem] | None = None,
    outside=None,
) -> LenientResult:
    """Fill the official scorer's slots for every submitted dialog, reporting quirks and crashes.

    ``candidates_of(dialog_id)`` returns the item's candidate ids (or None for an unknown dialog), only
    to report accepted unknown candidate ids. ``problems``: the list to report into (the caller's per-code
    capped list); a new list by default. ``outside(dialog_id)``: True for an item of a task outside ``--task``,
    which is left out before anything of it is read (the caller counts it).
    """
    res = LenientResult() if problems is None else LenientResult(problems)
    warn = res.problems.append
    full = getattr(res.problems, "full", None)  # a Capped list: what it would drop is not built

    def quirk(ptr: str, msg: str) -> None:
        if not (full and full("official-quirk", "warning")):
            warn(Problem("official-quirk", ptr, msg, "warning", file))

    def crash(ptr: str, msg: str) -> None:
        if not (full and full("official-crash")):
            warn(Problem("official-crash", ptr, msg, "error", file))

    nb = candidate_limit
    if not isinstance(data, list | JSONArray):  # a JSONArray: a large file's items, one at a time
        crash("", f"the top level is a {json_type(data)}: the official scorer crashes iterating over it")
        return res
    first_at: dict[str, int] = {}
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            crash(f"/{i}", f"item is a {json_type(item)}: the official scorer crashes reading its keys")
            continue
        if "dialog_id" not in item:
            quirk(f"/{i}", "item without dialog_id: the official scorer prints an error and skips it")
            continue
        if outside is not None and outside(item["dialog_id"]):
            continue
        if "lst_candidate_id" not in item:
            crash(f"/{i}", "item without lst_candidate_id: the official scorer stops with exit status 1")
            continue
        did = item["dialog_id"]
        if isinstance(did, list | dict):
            crash(f"/{i}/dialog_id", f"dialog_id is a {json_type(did)} (unhashable): the official scorer crashes")
            continue
        lst = item["lst_candidate_id"]
        if not isinstance(lst, list):
            crash(f"/{i}/lst_candidate_id", f"lst_candidate_id is a {json_type(lst)}: the official scorer crashes")
            continue
        slots: list = [_EMPTY] * nb
        if not lst:
            quirk(f"/{i}/lst_candidate_id", "empty ranking: accepted by the official scorer, scores 0")
        taken: dict[int, int] = {}
        for j, e in enumerate(lst):
            ptr = f"/{i}/lst_candidate_id/{j}"
            if not isinstance(e, dict) or "rank" not in e or "candidate_id" not in e:
                crash(ptr, "ranking entry is not an object with candidate_id and rank: the official scorer crashes")
                continue
            raw = e["rank"]
            r = _official_int(raw)
            if r is None:
                crash(f"{ptr}/rank", f"int({short(raw)}) raises: the official scorer crashes on this rank")
                continue
            if type(raw) is not int:
                quirk(f"{ptr}/rank", f"rank {short(raw)} accepted as {r} through int()")
            idx = r - 1
            if idx >= nb:
                quirk(f"{ptr}/rank", f"rank {r} is above the candidate limit {nb}: silently dropped")
                continue
            if idx < -nb:
                crash(f"{ptr}/rank", f"rank {r} indexes below slot -{nb}: the official scorer crashes (IndexError)")
                continue
            slot = idx % nb
            if idx < 0:
                quirk(f"{ptr}/rank", f"rank {r} lands in slot {slot + 1} of {nb} (Python negative index from the end)")
            if slot in taken:
                quirk(f"{ptr}/rank", f"slot {slot + 1} already held entry {taken[slot]}: the later entry takes it")
            taken[slot] = j
            cid = e["candidate_id"]
            known = candidates_of(did) if candidates_of is not None and isinstance(did, str) else None
            if known is not None and not (isinstance(cid, str) and cid in known):
                quirk(f"{ptr}/candidate_id", f"candidate_id {short(cid)} is not a candidate of the item: accepted")
            if isinstance(cid, list | dict):
                cid = repr(cid)  # never equal to a gold string id
            slots[slot] = cid
        if not isinstance(did, str):
            quirk(f"/{i}/dialog_id", f"dialog_id {short(did)} is a {json_type(did)}: accepted, but it matches no "
                  "answer-key item (ids are strings)")
        else:
            if did in first_at:
                quirk(f"/{i}/dialog_id", f"dialog_id {short(did)} repeats item {first_at[did]}: the last one wins")
            first_at.setdefault(did, i)
            res.slots[did] = slots
    return res


def gold_rank_from_slots(slots: list | None, gold: str | None) -> int:
    """1 + the first slot holding the gold id; 0 when absent (or no gold: never a false hit)."""
    if slots is None or gold is None:
        return 0
    for k, c in enumerate(slots):
        if c is not _EMPTY and c == gold:
            return k + 1
    return 0
