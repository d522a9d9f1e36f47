"""Strict validation of result files (and dataset files), reporting every problem at once.

The checks run as one hand-written pass over the parsed JSON (the fast path: jsonschema's validator is
~14x slower than parsing on a full split); the published schemas in ``schemas/`` describe the same
structure and ``tests/test_malformed.py`` keeps the two in agreement on the malformed-submission corpus.
The same pass computes each item's rank of the gold when an answer key is at hand, so a submission is
walked once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.benchmarks.dstc6.challenge import LoadedSplit
from dialeval.core.problems import Problem, json_type, pointer, short
from dialeval.formats.dstc6_check import validate_dataset_json  # noqa: F401 (re-exported)

ITEM_KEYS = frozenset(("dialog_id", "lst_candidate_id"))
ENTRY_KEYS = frozenset(("candidate_id", "rank"))


@dataclass
class FileCheck:
    """Outcome of checking one result file: problems, and gold ranks of the items it ranks validly."""

    problems: list[Problem] = field(default_factory=list)
    gold_rank: dict[str, int] = field(default_factory=dict)  # dialog id -> rank of gold (0 = unranked)
    other_task_items: int = 0


def _is(value: object) -> str:
    """``is an integer``, ``is null``: the JSON type of a value with the right article."""
    t = json_type(value)
    return "is null" if t == "null" else f"is {'an' if t[0] in 'aeiou' else 'a'} {t}"


def _rank_problem(r: object) -> str:
    if isinstance(r, bool):
        return f"rank is a boolean ({str(r).lower()}); ranks are JSON integers"
    if isinstance(r, float):
        if r != r:
            return "rank is NaN (not a number); ranks are JSON integers"
        if r in (float("inf"), float("-inf")):
            return f"rank is {'-' if r < 0 else ''}Infinity; ranks are JSON integers"
        return (f"rank {r!r} is a number with a fraction or exponent; ranks are JSON integers "
                "(--lenient reads it as the official scorer does)")
    if isinstance(r, str):
        return f"rank {short(r)} is a string; ranks are JSON integers (--lenient reads it as the official scorer does)"
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


def check_result_file(
    data: object,
    file: str,
    split: LoadedSplit,
    seen: dict[str, str],
    file_task: int | None = None,
    score_tasks: set[int] | None = None,
) -> FileCheck:
    """Check one parsed result file against the split; fill gold ranks for items of ``score_tasks``.

    ``seen`` maps dialog ids already ranked (across the submission's files) to where, to report
    duplicates. ``file_task`` restricts items to one test file (the directory layout). Gold ranks are
    computed only when the split carries answer keys.
    """
    out = FileCheck()
    add = out.problems.append
    if not isinstance(data, list):
        add(Problem("not-a-list", "", f"expected an array of items, found {json_type(data)}", file=file))
        return out
    tasks_of = split.dialog_task
    indexes = split.indexes
    keys = split.keys
    score_tasks = set(split.tasks) if score_tasks is None else score_tasks
    max_n = max((len(c) for ix in indexes.values() for c in ix.candidate_ids), default=1)
    for i, item in enumerate(data):
        if type(item) is not dict:
            add(Problem("item-not-object", f"/{i}", f"item {_is(item)}, expected an object", file=file))
            continue
        if item.keys() != ITEM_KEYS:
            for k in sorted(ITEM_KEYS - item.keys()):
                add(Problem("missing-key", f"/{i}", f"item has no {k!r}", file=file))
            for k in sorted(item.keys() - ITEM_KEYS):
                add(Problem("unknown-key", pointer(i, k), f"unexpected key {short(k)} in item{_did_you_mean(k, ITEM_KEYS)}", file=file))
        did = item.get("dialog_id")
        lst = item.get("lst_candidate_id")
        task = pos = None
        if "dialog_id" in item:
            if type(did) is not str:
                add(Problem("wrong-type", f"/{i}/dialog_id", f"dialog_id {_is(did)}, expected a string", file=file))
            else:
                task = tasks_of.get(did)
                if task is None:
                    add(Problem("unknown-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} is not an item of split {split.name}", file=file))
                elif file_task is not None and task != file_task:
                    add(Problem("unknown-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} belongs to the task-{task} file, not this task-{file_task} file", file=file))
                    task = None
                elif did in seen:
                    add(Problem("duplicate-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} was already ranked at {seen[did]}", file=file))
                    task = None
                else:
                    seen[did] = f"{file}#/{i}"
                    pos = indexes[task].position[did]
        if "lst_candidate_id" not in item:
            continue
        if type(lst) is not list:
            add(Problem("wrong-type", f"/{i}/lst_candidate_id", f"lst_candidate_id {_is(lst)}, expected an array", file=file))
            continue
        if not lst:
            add(Problem("empty-ranking", f"/{i}/lst_candidate_id", "lst_candidate_id is empty: rank at least one candidate", file=file))
            continue
        cands = indexes[task].candidate_ids[pos] if pos is not None else None
        n = len(cands) if cands is not None else None
        ranks: dict[int, int] = {}
        rank_of: dict[str, object] = {}
        n_before = len(out.problems)
        for j, e in enumerate(lst):
            ptr = f"/{i}/lst_candidate_id/{j}"
            if type(e) is not dict:
                add(Problem("item-not-object", ptr, f"ranking entry {_is(e)}, expected an object", file=file))
                continue
            if e.keys() != ENTRY_KEYS:
                for k in sorted(ENTRY_KEYS - e.keys()):
                    add(Problem("missing-key", ptr, f"ranking entry has no {k!r}", file=file))
                for k in sorted(e.keys() - ENTRY_KEYS):
                    add(Problem("unknown-key", ptr + pointer(k), f"unexpected key {short(k)} in ranking entry{_did_you_mean(k, ENTRY_KEYS)}", file=file))
            r = e.get("rank")
            if "candidate_id" in e:
                cid = e["candidate_id"]
                if type(cid) is not str:
                    add(Problem("wrong-type", f"{ptr}/candidate_id", f"candidate_id {_is(cid)}, expected a string", file=file))
                elif cands is not None and cid not in cands:
                    add(Problem("unknown-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is not a candidate of dialog {short(did)}", file=file))
                elif cid in rank_of:
                    add(Problem("duplicate-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is ranked twice in this item", file=file))
                else:
                    rank_of[cid] = r
            if "rank" in e:
                if type(r) is not int:
                    add(Problem("rank-not-integer", f"{ptr}/rank", _rank_problem(r), file=file))
                elif r < 1 or r > (n if n is not None else max_n):
                    # an item the split does not have is bounded by the split's largest one, so a rank of
                    # 10**12 is one problem, not a trillion missing ranks
                    limit = (f"1..{n} (the item has {n} candidates)" if n is not None
                             else f"1..{max_n} (no item of split {split.name} has more candidates)")
                    add(Problem("rank-out-of-range", f"{ptr}/rank", f"rank {short(r)} is outside {limit}", file=file))
                elif r in ranks:
                    add(Problem("duplicate-rank", f"{ptr}/rank", f"rank {r} is already given to entry {ranks[r]}", file=file))
                else:
                    ranks[r] = j
        if ranks and max(ranks) != len(ranks) and len(out.problems) == n_before:
            gaps = _gap_ranges(ranks)
            shown = ", ".join(gaps[:5]) + (" ..." if len(gaps) > 5 else "")
            add(Problem("rank-gap", f"/{i}/lst_candidate_id", f"ranks {shown} are missing: ranks must run 1..m", file=file))
        if task is not None and pos is not None:
            if task not in score_tasks:
                out.other_task_items += 1
            elif task in keys:
                gold = keys[task].gold.get(did)
                r = rank_of.get(gold) if gold is not None else None
                out.gold_rank[did] = r if type(r) is int and r >= 1 else 0
    return out
