"""The DSTC6 result format's ranking-entry checker, and the wrong-split hint: what every benchmark's checking
of rank lists shares, kept apart from :mod:`dialeval.benchmarks.items` because it needs no numpy (``dialeval
validate`` on DSTC6 then never imports it).

A result array is ``[{"dialog_id": ..., "lst_candidate_id": [{"candidate_id": ..., "rank": ...}, ...]}, ...]``;
:func:`check_ranked_items` walks one and reports every problem with its JSON pointer (the codes are described
in :data:`dialeval.core.problems.CODES`). No message ever names a gold candidate: messages only echo what the
submission itself contains, and the wrong-split hint gives counts and split names only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.core.problems import Problem, json_type, pointer, short

ITEM_KEYS = frozenset(("dialog_id", "lst_candidate_id"))
ENTRY_KEYS = frozenset(("candidate_id", "rank"))
_ITEM_ORDER, _ENTRY_ORDER = sorted(ITEM_KEYS), sorted(ENTRY_KEYS)  # missing keys are reported in this order

WRONG_SPLIT_IDS = 100_000
"""At most this many ids the split does not have are kept for :func:`other_split_hint`: enough to tell which
split they belong to, and bounded work and memory on a huge file."""


# ---- ids of another split -----------------------------------------------------------------------------

OtherSplitIds = Callable[[frozenset[str]], Iterable[str]]
"""Given the unknown ids, the item ids of one other split of the data: all of them, or only those of the
split's files that the unknown ids could name (a reader need not read the rest)."""


def other_split_hint(unknown: Sequence[str], split: str, others: Iterable[tuple[str, OtherSplitIds]],
                     what: str = "dialog ids") -> Problem | None:
    """THE ``wrong-split`` hint of every benchmark whose item ids are split-specific (DSTC6, bAbI, Movie Dialog):
    when ids a submission ranks are not in ``split`` but are in another split of the data, one error naming
    the split most of them belong to (the first in ``others`` order on a tie), or None.

    ``unknown``: the submitted ids the split does not have (at most :data:`WRONG_SPLIT_IDS` are looked at);
    ``others``: ``(split name, ids)`` pairs, ``ids(unknown)`` giving that split's item ids; ``split`` itself is
    skipped, and so is a split whose data cannot be read (a usage error is the data's, not this hint's).
    The message gives counts and split names only: never an id, so never a gold one.
    """
    unknown = list(unknown[:WRONG_SPLIT_IDS])
    wanted = frozenset(unknown)
    best: tuple[str, int] | None = None
    for name, ids in others:
        if name == split or not wanted:
            continue
        try:
            found = {d for d in ids(wanted) if d in wanted}
        except UsageError:
            continue
        n = sum(1 for d in unknown if d in found)
        if n and (best is None or n > best[1]):
            best = (name, n)
    if best is None:
        return None
    return Problem("wrong-split", "", f"{best[1]} of the {len(unknown)} {what} that are not in split {split} "
                   f"belong to split {best[0]}: score with --split {best[0]}", "error")


def splits_named(names: list[str]) -> str:
    """``split tst1`` or ``splits tst1, tst3``."""
    return f"split {names[0]}" if len(names) == 1 else f"splits {', '.join(names)}"


def scored_splits(names: list[str]) -> str:
    """``split tst1 is scored`` or ``splits tst1, tst3 are scored``."""
    return f"{splits_named(names)} {'is' if len(names) == 1 else 'are'} scored"


def other_split_outcome(counts: dict[str, int], unknown: int, split: str, has_own: bool, what: str = "dialog ids",
                        file: str | None = None) -> Problem:
    """THE outcome of a submission's items of other splits of the data (``counts``: split -> items), which were left
    out unchecked: beside items of ``split`` itself (``has_own``), one ``other-split`` warning; with none, the
    ``wrong-split`` error of :func:`other_split_hint` (``unknown``: the ids of no split, counted in its total)."""
    n = sum(counts.values())
    if has_own:
        return Problem("other-split", "", f"{n:,} item{'' if n == 1 else 's'} of {splits_named(list(counts))} left out "
                       f"({scored_splits(split.split(','))}): neither checked nor scored", "warning", file)
    best = max(counts, key=counts.__getitem__)  # the first on a tie
    return Problem("wrong-split", "", f"{counts[best]} of the {n + unknown} {what} that are not in split {split} "
                   f"belong to split {best}: score with --split {best}", "error")


def fb_item_ids(paths: Iterable[Path]) -> OtherSplitIds:
    """:data:`OtherSplitIds` of FB dialog files, whose item ids are ``<file stem>:<conversation>:<line ID>``
    (bAbI, Movie Dialog): only the files some unknown id names by its stem are read, each as a stream."""
    paths = list(paths)

    def ids(unknown: frozenset[str]) -> Iterator[str]:
        from dialeval.formats.fbdialog import iter_lines

        stems = {u.rsplit(":", 2)[0] for u in unknown}
        for p in paths:
            if p.stem in stems:
                yield from (f"{p.stem}:{ln.conversation}:{ln.lid}" for ln in iter_lines(p) if ln.bot is not None)

    return ids


# ---- the checker ------------------------------------------------------------------------------------


def _is(value: object) -> str:
    """``is an integer``, ``is null``: the JSON type of a value with the right article."""
    t = json_type(value)
    return "is null" if t == "null" else f"is {'an' if t[0] in 'aeiou' else 'a'} {t}"


def _rank_problem(r: object, lenient_hint: bool = True) -> str:
    hint = " (--lenient reads it as the official scorer does)" if lenient_hint else ""
    if isinstance(r, bool):
        return f"rank is a boolean ({str(r).lower()}); ranks are JSON integers"
    if isinstance(r, float):
        if r != r:
            return "rank is NaN (not a number); ranks are JSON integers"
        if r in (float("inf"), float("-inf")):
            return f"rank is {'-' if r < 0 else ''}Infinity; ranks are JSON integers"
        return f"rank {r!r} is a number with a fraction or exponent; ranks are JSON integers{hint}"
    if isinstance(r, str):
        return f"rank {short(r)} is a string; ranks are JSON integers{hint}"
    return f"rank {short(r)} {_is(r)}; ranks are JSON integers"


def _did_you_mean(key: object, known) -> str:
    """`` (did you mean "lst_candidate_id"?)`` for a near-miss key (a typo, a plural, another case)."""
    if not isinstance(key, str) or len(key) > 100:
        return ""
    import difflib

    lowered = {k.lower(): k for k in known}
    match = lowered.get(key.lower()) or next(iter(difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.75)), None)
    return f' (did you mean "{match}"?)' if match else ""


def _gap_ranges(ranks) -> list[str]:
    """The missing ranks below the largest one, as ranges ("3", "5-9"): never one string per rank."""
    out, prev = [], 0
    for r in sorted(ranks):
        if r > prev + 1:
            out.append(str(prev + 1) if r == prev + 2 else f"{prev + 1}-{r - 1}")
        prev = r
    return out


def _never_full(code: str, severity: str = "error") -> bool:
    return False


def check_ranked_items(data: Iterable, file: str, *, split_name: str, max_n: int, resolve, add,
                       lenient_hint: bool = True, full=None, outside=None):
    """THE ranking-entry checker of the DSTC6 result format, for DSTC6 and every benchmark that takes it.

    Walks the result array ``data`` (a list, or a :class:`~dialeval.formats.jsonio.JSONArray` read one element
    at a time) and reports every problem through ``add`` (structure, keys with a "did you mean", types,
    candidates, ranks capped by the item's candidates or, for an item the split does not have, by ``max_n``,
    duplicate ranks, gaps as ranges). ``resolve(i, dialog_id)`` looks an item up: it reports its own problems
    (unknown or repeated dialog) and returns ``(where, candidate ids)`` or None. Yields
    ``(i, dialog_id, where, rank_of, valid)`` for each resolved item with a ranking, after its entries are
    checked: ``rank_of`` maps candidate id -> the rank given (as submitted), ``valid`` says the ranking had no
    problem. ``full(code)`` (:meth:`~dialeval.core.problems.Capped.full`): True when a problem of that code
    would be dropped by the cap, and counted as such; its message is then never built (seven million bad
    items cost seven million checks, not fourteen million messages). ``outside(dialog_id)``: True for an item of a
    part the run does not ask for (a task outside ``--task``): such an item is neither checked nor yielded (the
    caller counts it and says so once); an item whose dialog id is not a string cannot be placed and is checked.
    """
    full = full or _never_full
    for i, item in enumerate(data):
        if type(item) is not dict:
            if not full("item-not-object"):
                add(Problem("item-not-object", f"/{i}", f"item {_is(item)}, expected an object", file=file))
            continue
        if outside is not None and type(item.get("dialog_id")) is str and outside(item["dialog_id"]):
            continue
        if item.keys() != ITEM_KEYS:
            for k in _ITEM_ORDER:
                if k not in item and not full("missing-key"):
                    add(Problem("missing-key", f"/{i}", f"item has no {k!r}", file=file))
            for k in sorted(item.keys() - ITEM_KEYS) if not item.keys() <= ITEM_KEYS else ():
                if not full("unknown-key"):
                    add(Problem("unknown-key", pointer(i, k), f"unexpected key {short(k)} in item{_did_you_mean(k, ITEM_KEYS)}", file=file))
        did = item.get("dialog_id")
        lst = item.get("lst_candidate_id")
        found = None
        if "dialog_id" in item:
            if type(did) is not str:
                if not full("wrong-type"):
                    add(Problem("wrong-type", f"/{i}/dialog_id", f"dialog_id {_is(did)}, expected a string", file=file))
            else:
                found = resolve(i, did)
        if "lst_candidate_id" not in item:
            continue
        if type(lst) is not list:
            if not full("wrong-type"):
                add(Problem("wrong-type", f"/{i}/lst_candidate_id", f"lst_candidate_id {_is(lst)}, expected an array", file=file))
            continue
        if not lst:
            if not full("empty-ranking"):
                add(Problem("empty-ranking", f"/{i}/lst_candidate_id", "lst_candidate_id is empty: rank at least one candidate", file=file))
            continue
        rank_of, valid = check_ranking(lst, i, file, did, None if found is None else found[1], max_n, split_name,
                                       add, lenient_hint, full)
        if found is not None:
            yield i, did, found[0], rank_of, valid


def check_ranking(lst: list, i: int, file: str, did: object, cands, max_n: int, split_name: str, add,
                  lenient_hint: bool = True, full=None) -> tuple[dict[str, object], bool]:
    """Check one item's non-empty ``lst_candidate_id`` (item ``i``; ``cands``: its candidate ids, None when
    the item is unknown); returns (candidate id -> rank as given, True when the ranking had no problem).
    ``full``: as for :func:`check_ranked_items`."""
    n = len(cands) if cands is not None else None
    full = full or _never_full
    ranks: dict[int, int] = {}
    rank_of: dict[str, object] = {}
    added = 0

    def room(code: str) -> bool:
        """Count one problem of ``code``; True when its message is to be built (the cap keeps it)."""
        nonlocal added
        added += 1
        return not full(code)

    for j, e in enumerate(lst):
        ptr = f"/{i}/lst_candidate_id/{j}"
        if type(e) is not dict:
            if room("item-not-object"):
                add(Problem("item-not-object", ptr, f"ranking entry {_is(e)}, expected an object", file=file))
            continue
        if e.keys() != ENTRY_KEYS:
            for k in _ENTRY_ORDER:
                if k not in e and room("missing-key"):
                    add(Problem("missing-key", ptr, f"ranking entry has no {k!r}", file=file))
            for k in sorted(e.keys() - ENTRY_KEYS):
                if room("unknown-key"):
                    add(Problem("unknown-key", ptr + pointer(k), f"unexpected key {short(k)} in ranking entry{_did_you_mean(k, ENTRY_KEYS)}", file=file))
        r = e.get("rank")
        if "candidate_id" in e:
            cid = e["candidate_id"]
            if type(cid) is not str:
                if room("wrong-type"):
                    add(Problem("wrong-type", f"{ptr}/candidate_id", f"candidate_id {_is(cid)}, expected a string", file=file))
            elif cands is not None and cid not in cands:
                if room("unknown-candidate"):
                    add(Problem("unknown-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is not a candidate of dialog {short(did)}", file=file))
            elif cid in rank_of:
                if room("duplicate-candidate"):
                    add(Problem("duplicate-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is ranked twice in this item", file=file))
            else:
                rank_of[cid] = r
        if "rank" in e:
            if type(r) is not int:
                if room("rank-not-integer"):
                    add(Problem("rank-not-integer", f"{ptr}/rank", _rank_problem(r, lenient_hint), file=file))
            elif r < 1 or r > (n if n is not None else max_n):
                if room("rank-out-of-range"):
                    # an item the split does not have is bounded by the split's largest one, so a rank of
                    # 10**12 is one problem, not a trillion missing ranks
                    limit = (f"1..{n} (the item has {n} candidates)" if n is not None
                             else f"1..{max_n} (no item of split {split_name} has more candidates)")
                    add(Problem("rank-out-of-range", f"{ptr}/rank", f"rank {short(r)} is outside {limit}", file=file))
            elif r in ranks:
                if room("duplicate-rank"):
                    add(Problem("duplicate-rank", f"{ptr}/rank", f"rank {r} is already given to entry {ranks[r]}", file=file))
            else:
                ranks[r] = j
    if ranks and max(ranks) != len(ranks) and not added and room("rank-gap"):
        gaps = _gap_ranges(ranks)
        shown = ", ".join(gaps[:5]) + (" ..." if len(gaps) > 5 else "")
        add(Problem("rank-gap", f"/{i}/lst_candidate_id", f"ranks {shown} are missing: ranks must run 1..m", file=file))
    return rank_of, not added
