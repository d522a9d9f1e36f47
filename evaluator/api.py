"""The Python API: validate and score a submission (everything the CLI does, callable from Python).

>>> from dialeval.api import score
>>> report = score("run.json", split="tst1", challenge="../shared/data/dstc6")
>>> report.value("p@1", "tst1", 1), report.to_dataframe()
"""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.challenge import LoadedSplit, load_split, resolve_challenge
from dialeval.errors import UsageError
from dialeval.fastpath import check_result_items, decode_result
from dialeval.formats.dstc6 import Challenge
from dialeval.formats.jsonio import parse_json_bytes
from dialeval.lenient import DEFAULT_CANDIDATE_LIMIT, emulate_official, gold_rank_from_slots
from dialeval.problems import Problem

if TYPE_CHECKING:
    from dialeval.ranks import GoldRanks
from dialeval.report import ScoreReport
from dialeval.signature import Signature
from dialeval.submission import Submission, SubmittedFile, open_submission
from dialeval.validate import check_result_file


def parse_splits(split: str | list[str] | None, challenge: Challenge, submission: Submission) -> list[str]:
    """``"tst1"``, ``"tst1,tst3"``, a list, or ``"all"`` (every split of the challenge the submission covers)."""
    if split is None:
        if submission.kind != "file":
            split = "all"
        elif len(challenge.splits) == 1:
            split = challenge.splits[0]
        else:
            raise UsageError(f"give --split for a single result file (one of: {', '.join(challenge.splits)})")
    if isinstance(split, str):
        names = [s.strip() for s in split.split(",") if s.strip()]
    else:
        names = list(split)
    if names == ["all"]:
        have = challenge.splits
        names = [s for s in submission.splits() if s in have] if submission.kind != "file" else have[:1]
        if not names:
            raise UsageError("--split all: the submission has no folder named after a split of the challenge")
    if not names:
        raise UsageError("--split is empty")
    if submission.kind == "file" and len(names) > 1:
        raise UsageError("a single result file is scored against one split; give one --split")
    return names


def _files_for_split(sub: Submission, split: str, n_splits: int) -> list[SubmittedFile]:
    if sub.kind == "file":
        return sub.files
    return [f for f in sub.files if f.split == split or (f.split is None and n_splits == 1)]


def _sha256(sub: Submission) -> str:
    h = hashlib.sha256()
    if sub.kind == "archive" or sub.kind == "file":
        with open(sub.source, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        return h.hexdigest()
    for f in sub.files:  # a directory: hash of names and contents, in sorted order
        h.update(f.name.encode() + b"\0" + f.path.read_bytes() + b"\0")
    return h.hexdigest()


def _check_split(
    sub: Submission,
    loaded: LoadedSplit,
    n_splits: int,
    lenient: bool,
    candidate_limit: int,
    scoring: bool,
) -> tuple[list[Problem], GoldRanks | None]:
    problems: list[Problem] = list(loaded.key_warnings)
    if scoring:
        from dialeval.ranks import GoldRanks
    files = _files_for_split(sub, loaded.name, n_splits)
    if not files:
        problems.append(Problem("missing-dialog", "", f"the submission has no result files for split {loaded.name}", "warning"))
    stem_task = {tf.path.name[: -len(".json")]: t for t, tf in loaded.split.files.items()}
    seen: dict[str, str] = {}
    gold_rank: dict[str, int] = {}
    other = 0
    score_tasks = set(loaded.tasks)
    for f in files:
        file_task = None
        if sub.kind != "file":
            file_task = stem_task.get(f.stem or "")
            if file_task is None:
                # --lenient: the official scorer reads only the five expected files; an extra one is ignored
                problems.append(
                    Problem("unknown-file", "", f"{f.name} matches no test file of split {loaded.name} "
                            "(expected <test file stem>.answers.json)", "warning" if lenient else "error", f.name)
                )
                continue
            if file_task not in score_tasks:
                other += 1
                continue
        raw = f.read_bytes()
        if not lenient:
            items = decode_result(raw)
            if items is not None:
                del raw  # release the text before checking: peak memory is text or structs, not both
                fast = check_result_items(items, loaded, seen, f.name, file_task, score_tasks)
                del items
                if fast is not None:  # proven valid: no need to build the generic JSON objects
                    gold_rank.update(fast[0])
                    other += fast[1]
                    continue
                raw = f.read_bytes()  # invalid after all: the full checker explains why
        data = parse_json_bytes(raw, str(f.path))
        del raw
        if lenient:
            _lenient_file(data, f, loaded, candidate_limit, problems, gold_rank, seen, file_task)
        else:
            check = check_result_file(data, f.name, loaded, seen, file_task, score_tasks)
            problems.extend(check.problems)
            gold_rank.update(check.gold_rank)
            other += check.other_task_items
        del data
    if other:
        problems.append(Problem("other-task", "", f"{other} item(s) or file(s) of tasks outside --task were ignored", "warning"))
    parts = []
    for t in loaded.tasks:
        idx = loaded.indexes[t]
        key = loaded.keys.get(t)
        ids = key.dialog_ids if key is not None else idx.dialog_ids
        missing = [d for d in ids if d not in seen]
        for d in missing:
            problems.append(Problem("missing-dialog", "", f"dialog {d} (task {t}) is not ranked: scored as a miss", "warning"))
        if scoring and key is not None:
            pos = [idx.position[d] for d in ids]
            parts.append(
                GoldRanks.build(
                    loaded.name,
                    t,
                    ids,
                    [idx.conversation_ids[p] for p in pos],
                    [len(idx.candidate_ids[p]) for p in pos],
                    [gold_rank.get(d, 0) for d in ids],
                )
            )
    return problems, (GoldRanks.concat(parts) if scoring else None)


def _lenient_file(data, f, loaded: LoadedSplit, limit, problems, gold_rank, seen, file_task) -> None:
    def candidates_of(did):
        t = loaded.dialog_task.get(did)
        return loaded.indexes[t].candidate_ids[loaded.indexes[t].position[did]] if t is not None else None

    res = emulate_official(data, f.name, limit, candidates_of)
    problems.extend(res.problems)
    for did, slots in res.slots.items():
        t = loaded.dialog_task.get(did)
        if t is None or (file_task is not None and t != file_task):
            problems.append(Problem("official-quirk", "", f"dialog {did[:60]!r} is not in this answer key: ignored", "warning", f.name))
            continue
        seen[did] = f.name
        key = loaded.keys.get(t)
        if key is not None:
            gold_rank[did] = gold_rank_from_slots(slots, key.gold.get(did))


def _run(
    submission,
    split,
    challenge,
    keys,
    tasks,
    lenient: bool,
    candidate_limit: int,
    scoring: bool,
) -> ScoreReport:
    # The run builds many small objects and no reference cycles: the cyclic GC would only rescan them
    # (about a third of the time on large splits).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _run_checked(submission, split, challenge, keys, tasks, lenient, candidate_limit, scoring)
    finally:
        if gc_was_enabled:
            gc.enable()


def _run_checked(submission, split, challenge, keys, tasks, lenient, candidate_limit, scoring) -> ScoreReport:
    ch = resolve_challenge(challenge, keys)
    if tasks:
        bad = [t for t in tasks if not (isinstance(t, int) and not isinstance(t, bool) and 1 <= t <= 9)]
        if bad:
            raise UsageError(f"--task must be a task number, got {bad[0]}")
    if lenient and candidate_limit < 1:
        raise UsageError("--candidate-limit must be at least 1")
    with open_submission(submission) as sub:
        splits = parse_splits(split, ch, sub)
        problems: list[Problem] = []
        parts: list[GoldRanks] = []
        all_tasks: set[int] = set()
        for name in splits:
            loaded = load_split(ch, name, list(tasks) if tasks else None, with_keys=scoring)
            all_tasks.update(loaded.tasks)
            p, ranks = _check_split(sub, loaded, len(splits), lenient, candidate_limit, scoring)
            problems.extend(p)
            if ranks is not None:
                parts.append(ranks)
        info = {"path": str(submission), "kind": sub.kind, "sha256": _sha256(sub), "files": [f.name for f in sub.files]}
    sig = Signature("dstc6").with_fields(
        tasks=sorted(all_tasks),
        mode="lenient" if lenient else "strict",
        nc=candidate_limit if lenient else "all",
        gold="id",
    )
    valid = not any(p.severity == "error" for p in problems)
    if scoring:
        from dialeval.ranks import GoldRanks

    report = ScoreReport(sig, info, splits, sorted(all_tasks), valid, problems, GoldRanks.concat(parts) if scoring else None)
    return report.compute() if scoring else report


def score(
    submission: str | Path,
    split: str | list[str] = "tst1",
    challenge: str | Path | None = None,
    keys: str | Path | None = None,
    tasks: list[int] | None = None,
    lenient: bool = False,
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT,
) -> ScoreReport:
    """Validate and score ``submission`` (file, directory or .tgz) on ``split`` of ``challenge``.

    Strict mode (default): an invalid submission gives a report with ``valid`` False, every problem in
    ``problems`` and no results. ``lenient=True`` reproduces the official scorer (see
    :mod:`dialeval.lenient`). Without ``challenge``, $DIALEVAL_CHALLENGE or the embedded default is used.
    """
    return _run(submission, split, challenge, keys, tasks, lenient, candidate_limit, scoring=True)


def validate(
    submission: str | Path,
    split: str | list[str] = "tst1",
    challenge: str | Path | None = None,
    tasks: list[int] | None = None,
    lenient: bool = False,
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT,
) -> ScoreReport:
    """Check ``submission`` against the test files only (no answer keys needed): problems, no scores."""
    return _run(submission, split, challenge, None, tasks, lenient, candidate_limit, scoring=False)
