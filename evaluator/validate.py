"""Strict validation of result files (and dataset files), reporting every problem at once.

The checks run as one hand-written pass over the parsed JSON (the fast path: jsonschema's validator is
~14x slower than parsing on a full split); the published schemas in ``schemas/`` describe the same
structure and ``tests/test_malformed.py`` keeps the two in agreement on the malformed-submission corpus.
The same pass computes each item's rank of the gold when an answer key is at hand, so a submission is
walked once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.challenge import LoadedSplit
from dialeval.formats.dstc6_check import validate_dataset_json  # noqa: F401 (re-exported)
from dialeval.problems import Problem, json_type, pointer, short

ITEM_KEYS = frozenset(("dialog_id", "lst_candidate_id"))
ENTRY_KEYS = frozenset(("candidate_id", "rank"))


@dataclass
class FileCheck:
    """Outcome of checking one result file: problems, and gold ranks of the items it ranks validly."""

    problems: list[Problem] = field(default_factory=list)
    gold_rank: dict[str, int] = field(default_factory=dict)  # dialog id -> rank of gold (0 = unranked)
    other_task_items: int = 0


def _rank_problem(r: object) -> str:
    if isinstance(r, bool):
        return f"rank is a boolean ({str(r).lower()}); ranks are JSON integers"
    if isinstance(r, float):
        return f"rank {r!r} is a number with a fraction or exponent; ranks are JSON integers"
    return f"rank {short(r)} is a {json_type(r)}; ranks are JSON integers"


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
    for i, item in enumerate(data):
        if type(item) is not dict:
            add(Problem("item-not-object", f"/{i}", f"item is a {json_type(item)}, expected an object", file=file))
            continue
        if item.keys() != ITEM_KEYS:
            for k in sorted(ITEM_KEYS - item.keys()):
                add(Problem("missing-key", f"/{i}", f"item has no {k!r}", file=file))
            for k in sorted(item.keys() - ITEM_KEYS):
                add(Problem("unknown-key", pointer(i, k), f"unexpected key {short(k)} in item", file=file))
        did = item.get("dialog_id")
        lst = item.get("lst_candidate_id")
        task = pos = None
        if "dialog_id" in item:
            if type(did) is not str:
                add(Problem("wrong-type", f"/{i}/dialog_id", f"dialog_id is a {json_type(did)}, expected a string", file=file))
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
            add(Problem("wrong-type", f"/{i}/lst_candidate_id", f"lst_candidate_id is a {json_type(lst)}, expected an array", file=file))
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
                add(Problem("item-not-object", ptr, f"ranking entry is a {json_type(e)}, expected an object", file=file))
                continue
            if e.keys() != ENTRY_KEYS:
                for k in sorted(ENTRY_KEYS - e.keys()):
                    add(Problem("missing-key", ptr, f"ranking entry has no {k!r}", file=file))
                for k in sorted(e.keys() - ENTRY_KEYS):
                    add(Problem("unknown-key", ptr + pointer(k), f"unexpected key {short(k)} in ranking entry", file=file))
            r = e.get("rank")
            if "candidate_id" in e:
                cid = e["candidate_id"]
                if type(cid) is not str:
                    add(Problem("wrong-type", f"{ptr}/candidate_id", f"candidate_id is a {json_type(cid)}, expected a string", file=file))
                elif cands is not None and cid not in cands:
                    add(Problem("unknown-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is not a candidate of dialog {short(did)}", file=file))
                elif cid in rank_of:
                    add(Problem("duplicate-candidate", f"{ptr}/candidate_id", f"candidate_id {short(cid)} is ranked twice in this item", file=file))
                else:
                    rank_of[cid] = r
            if "rank" in e:
                if type(r) is not int:
                    add(Problem("rank-not-integer", f"{ptr}/rank", _rank_problem(r), file=file))
                elif r < 1 or (n is not None and r > n):
                    limit = f"1..{n} (the item has {n} candidates)" if n is not None else "1 or more"
                    add(Problem("rank-out-of-range", f"{ptr}/rank", f"rank {r} is outside {limit}", file=file))
                elif r in ranks:
                    add(Problem("duplicate-rank", f"{ptr}/rank", f"rank {r} is already given to entry {ranks[r]}", file=file))
                else:
                    ranks[r] = j
        if ranks and max(ranks) != len(ranks) and len(out.problems) == n_before:
            gaps = [str(k) for k in range(1, max(ranks)) if k not in ranks]
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
