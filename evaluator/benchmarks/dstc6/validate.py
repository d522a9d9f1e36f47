"""Strict validation of result files (and dataset files), reporting every problem at once.

The checks run as one hand-written pass over the parsed JSON (the fast path: jsonschema's validator is
~14x slower than parsing on a full split); the published schemas in ``schemas/`` describe the same
structure and ``tests/test_malformed.py`` keeps the two in agreement on the malformed-submission corpus.
The same pass computes each item's rank of the gold when an answer key is at hand, so a submission is
walked once. The ranking entries are checked by the one checker every benchmark uses
(:func:`dialeval.benchmarks.rankings.check_ranked_items`); this module adds what DSTC6 alone knows (tasks,
test files, answer keys).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dialeval.benchmarks.dstc6.challenge import LoadedSplit
from dialeval.benchmarks.rankings import check_ranked_items
from dialeval.core.problems import Problem, json_type, short
from dialeval.formats.dstc6_check import validate_dataset_json  # noqa: F401 (re-exported)
from dialeval.formats.jsonio import JSONArray


@dataclass
class FileCheck:
    """Outcome of checking one result file: problems, and gold ranks of the items it ranks validly."""

    problems: list[Problem] = field(default_factory=list)
    gold_rank: dict[str, int] = field(default_factory=dict)  # dialog id -> rank of gold (0 = unranked)
    other_task_items: int = 0
    other_split: dict[str, int] = field(default_factory=dict)  # items of other splits of the data, left out
    unknown_items: int = 0  # items of no split


def check_result_file(
    data: object,  # the parsed document, or a JSONArray of its items read one at a time
    file: str,
    split: LoadedSplit,
    seen: dict[str, str],
    file_task: int | None = None,
    score_tasks: set[int] | None = None,
    problems: list[Problem] | None = None,
    other_split_of=None,
) -> FileCheck:
    """Check one parsed result file against the split; fill gold ranks for items of ``score_tasks``. In a single
    result file (no ``file_task``) an item of another task is left out unchecked and counted in ``other_task_items``.

    ``seen`` maps dialog ids already ranked (across the submission's files) to where, to report
    duplicates. ``file_task`` restricts items to one test file (the directory layout). Gold ranks are
    computed only when the split carries answer keys. ``problems``: the list to report into (the caller's
    per-code :class:`~dialeval.core.problems.Capped` list keeps a hostile file's volume bounded); a new list by
    default. ``other_split_of(dialog id)``: the data's other split (not scored) a dialog id not in this split belongs
    to, else None; such items of a single result file are left out unchecked and counted in ``other_split``.
    """
    out = FileCheck() if problems is None else FileCheck(problems)
    add = out.problems.append
    full = getattr(out.problems, "full", None)  # a Capped list: messages it would drop are never built
    if not isinstance(data, list | JSONArray):
        add(Problem("not-a-list", "", f"expected an array of items, found {json_type(data)}", file=file))
        return out
    tasks_of = split.dialog_task
    indexes = split.indexes
    keys = split.keys
    score_tasks = set(split.tasks) if score_tasks is None else score_tasks
    max_n = max((len(c) for ix in indexes.values() for c in ix.candidate_ids), default=1)

    def resolve(i: int, did: str):
        task = tasks_of.get(did)
        if task is None:
            out.unknown_items += 1
            if not (full and full("unknown-dialog")):
                add(Problem("unknown-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} is not an item of split {split.name}", file=file))
        elif file_task is not None and task != file_task:
            if not (full and full("unknown-dialog")):
                add(Problem("unknown-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} belongs to the task-{task} file, not this task-{file_task} file", file=file))
        elif did in seen:
            if not (full and full("duplicate-dialog")):
                add(Problem("duplicate-dialog", f"/{i}/dialog_id", f"dialog_id {short(did)} was already ranked at {seen[did]}", file=file))
        else:
            seen[did] = f"{file}#/{i}"
            pos = indexes[task].position[did]
            return task, indexes[task].candidate_ids[pos]
        return None

    def outside(did: str) -> bool:
        """An item of a task outside --task, or of another split, in a single result file: left out unchecked,
        counted."""
        task = tasks_of.get(did)
        if task is None and other_split_of is not None and file_task is None:
            split_name = other_split_of(did)
            if split_name is not None:
                out.other_split[split_name] = out.other_split.get(split_name, 0) + 1
                return True
        if task is None or task in score_tasks or file_task is not None:
            return False
        out.other_task_items += 1
        return True

    for _i, did, task, rank_of, _valid in check_ranked_items(data, file, split_name=split.name, max_n=max_n,
                                                              resolve=resolve, add=add, full=full, outside=outside):
        if task not in score_tasks:
            out.other_task_items += 1
        elif task in keys:
            gold = keys[task].gold.get(did)
            r = rank_of.get(gold) if gold is not None else None
            out.gold_rank[did] = r if type(r) is int and r >= 1 else 0
    return out
