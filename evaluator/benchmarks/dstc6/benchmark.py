"""DSTC6 Track 1 (and any challenge in its layout): test-file index + cache, typed fast path, full checker,
lenient emulation of the official scorer — all behind :meth:`DSTC6.evaluate`.

Layout: ``<data>/<split>/dialog-task{N}{NAME}-....json`` test files with ``<stem>.answers.json`` keys beside
them or under ``--keys``. Groups are the task numbers as strings (``"1"`` ... ``"5"``).
"""

from __future__ import annotations

import gc
import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.benchmarks.base import (
    DEFAULT_TIES,
    Benchmark,
    Evaluation,
    Option,
    Request,
    data_identity,
    one_split_refusal,
    parse_split_names,
    require_splits,
    task_numbers,
)
from dialeval.benchmarks.dstc6.challenge import LoadedSplit, load_split, open_challenge
from dialeval.benchmarks.dstc6.fastpath import check_result_items, decode_result
from dialeval.benchmarks.dstc6.submission import Submission, SubmittedFile, open_submission
from dialeval.core.errors import DialevalError, UnreadableJSON, UsageError
from dialeval.core.problems import Capped, Problem
from dialeval.core.signature import format_tasks
from dialeval.formats.dstc6 import DEFAULT_CANDIDATE_LIMIT, TASK_DESCRIPTIONS
from dialeval.formats.jsonio import (
    SYNTAX_FIRST_BYTES,
    JSONArray,
    check_syntax,
    parse_json_bytes,
    read_json_document,
)

if TYPE_CHECKING:
    from dialeval.core.ranks import RankTable
    from dialeval.formats.dstc6 import Challenge


# The emulation (.lenient), the full checker (.validate) and the wrong-split hint (benchmarks.rankings) are imported
# only when a run needs them: a valid submission's start-up does not load them.


class DSTC6(Benchmark):
    name = "dstc6"
    title = "DSTC6 Track 1 end-to-end goal-oriented dialog (restaurant booking), P@k over 7-11 candidates"
    split_names = ("tst1", "tst2", "tst3", "tst4")
    data_name = "DSTC6"
    split_descriptions = {
        "tst1": "same knowledge base and slots as training",
        "tst2": "a new knowledge base (out-of-vocabulary restaurants, cuisines and locations)",
        "tst3": "same knowledge base, one more required slot (dietary restrictions)",
        "tst4": "a new knowledge base and the restrictions slot",
    }
    group_names = {"1": "API", "2": "Refine", "3": "Options", "4": "Infos", "5": "Full"}
    group_descriptions = TASK_DESCRIPTIONS
    default_metrics = ("p@1", "p@2", "p@5", "mrr")

    def public_files(self, files: dict[str, bytes], splits: list[str]) -> dict[str, bytes]:
        """The splits' dialog files (``<split>/<stem>.json``), never their ``<stem>.answers.json`` keys; a dialog that
        carries its ``answer`` (the format allows it, the training files have it) is written without it."""
        from dialeval.formats.dstc6 import ANSWERS_SUFFIX
        from dialeval.formats.jsonio import parse_json_bytes

        out = {}
        for name, raw in files.items():
            if not name.endswith(".json") or name.endswith(ANSWERS_SUFFIX) or name.partition("/")[0] not in splits:
                continue  # keys, and anything that is not a dialog file
            dialogs = parse_json_bytes(raw, name)
            if isinstance(dialogs, list) and any(isinstance(d, dict) and "answer" in d for d in dialogs):
                raw = (json.dumps([{k: v for k, v in d.items() if k != "answer"} if isinstance(d, dict) else d
                                   for d in dialogs], ensure_ascii=False, indent=1) + "\n").encode()
            out[name] = raw
        return out
    submission_formats = ("dstc6-result (file, official directory layout, or .tgz)",)
    problem_codes = {  # this benchmark's own codes (the shared ones: core.problems.CODES)
        "unknown-file": "a file in a submission directory or archive that matches no test file of the split",
        "key-without-gold": "(warning) an answer-key item with no rank-1 entry: scored as a miss, never a false hit",
        "no-result-file": "a directory or archive without a result file for the split scored",
        "nothing-ranked": "(warning) the submission ranks no item of the split",
    }
    separate_keys = True
    print_layouts = ("dstc6-official",)  # score --print-as dstc6-official: the official scorer's three lines
    reads_stdin = True  # a result file or a .tgz on standard input (benchmarks/dstc6/submission.py)
    split_folders = True  # tst1/ ... tst4/
    data_env = "DIALEVAL_CHALLENGE"
    embedded_folder = ""  # the embedded default challenge's split folders are DSTC6's
    options = (
        Option("lenient", "dstc6, airdialogue: reproduce the official scorer's numbers, listing every quirk "
                          "applied."),
        Option("candidate_limit", "dstc6 --lenient: slots per dialog (the official scorer's nb_candidate).",
               kind="int", default=DEFAULT_CANDIDATE_LIMIT, low=1, high=10_000),
    )

    def splits(self, data: Path) -> list[str]:
        return test_splits(open_challenge(data))

    def splits_of(self, submission: str | Path, data: Path) -> list[str] | None:
        """The split folders of a folder or archive that the challenge has; for a single result file, the split
        holding most of its dialog ids (the ids say which split a file answers). None when it cannot tell."""
        ch = open_challenge(data)
        with open_submission(submission) as sub:
            if sub.kind != "file":
                return [s for s in sub.splits() if s in test_splits(ch)]
            best = _split_of_file(ch, sub)
        return [best] if best else None

    def metrics_for(self, evaluation: Evaluation) -> list[str]:
        t = evaluation.table
        extra = ["per-dialog-accuracy"] if t is not None and t.has_conversations() else []
        return [*self.default_metrics, *extra]

    def texts(self, request: Request, evaluation: Evaluation) -> tuple[list[str], list[str]]:
        """Top-1 candidate text and gold text per scored item (test files are re-read with utterances)."""
        from dialeval.files.read import read_bytes

        table = evaluation.table
        ch = open_challenge(request.data, request.keys)
        top: dict[tuple[str, str], str] = {}
        with open_submission(request.submission) as sub:
            for split in evaluation.splits:
                for f in _files_for_split(sub, split, len(evaluation.splits)):
                    for did, cid in _rank_one_entries(parse_json_bytes(f.read_bytes(), f.name)):
                        top[(split, did)] = cid
        texts: dict[tuple[str, str], dict[str, str]] = {}
        gold: dict[tuple[str, str], str | None] = {}
        for split in evaluation.splits:
            tasks = sorted({int(g) for g, s in zip(table.group, table.split) if s == split})
            loaded = load_split(ch, split, tasks, with_keys=True)
            for t in tasks:
                for item in parse_json_bytes(read_bytes(loaded.indexes[t].path), str(loaded.indexes[t].path)):
                    texts[(split, item["dialog_id"])] = {c["candidate_id"]: c["utterance"] for c in item["candidates"]}
                for did, g in loaded.keys[t].gold.items():
                    gold[(split, did)] = g
        hyps, refs = [], []
        for split, did in zip(table.split, table.item_id):
            cands = texts[(split, did)]
            hyps.append(cands.get(top.get((split, did), ""), ""))
            g = gold.get((split, did))
            refs.append(cands.get(g, "") if g is not None else "")
        return hyps, refs

    def evaluate(self, request: Request) -> Evaluation:
        opts = request.options
        lenient = bool(opts.get("lenient", False))
        candidate_limit = opts.get("candidate_limit", DEFAULT_CANDIDATE_LIMIT)
        if lenient and (not isinstance(candidate_limit, int) or candidate_limit < 1):
            raise UsageError("--candidate-limit must be at least 1")
        if "candidate_limit" in opts and not lenient:  # strict mode ranks every candidate: never silently ignored
            raise UsageError("--candidate-limit applies with --lenient only (the official scorer's slots per dialog); "
                             "strict mode ranks every candidate")
        if request.ties != DEFAULT_TIES:  # a rank list orders every candidate: a policy would be silently ignored
            raise UsageError(f"--ties {request.ties} does not apply to dstc6: a rank file orders every candidate, "
                             "so there are no ties to break")
        tasks = task_numbers(request.groups, range(1, len(self.group_names) + 1), "DSTC6")  # the track has 5 tasks
        ch = open_challenge(request.data, request.keys)
        # The run builds many small objects and no reference cycles: the cyclic GC would only rescan them
        # (about a third of the time on large splits).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._evaluate(request, ch, tasks, lenient, candidate_limit)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _evaluate(self, request: Request, ch: Challenge, tasks, lenient: bool, candidate_limit: int) -> Evaluation:
        scoring = request.scoring
        with open_submission(request.submission) as sub:
            splits = parse_splits(request.split, ch, sub)
            problems: list[Problem] = []
            parts: list[RankTable] = []
            all_tasks: set[int] = set()
            used: dict[str, list[Path]] = {}
            # a single result file's items of the challenge's other splits are left out (strict mode; --lenient
            # ignores them as the official scorer does)
            other_split_of = _split_finder(ch, splits) if sub.kind == "file" and not lenient else None
            for name in splits:
                loaded = load_split(ch, name, tasks, with_keys=scoring)
                all_tasks.update(loaded.tasks)
                used[name] = [loaded.indexes[t].path for t in loaded.tasks] + [k.path for k in loaded.keys.values()]
                p, ranks = _check_split(sub, loaded, len(splits), lenient, candidate_limit, scoring, other_split_of)
                if any(x.code == "unknown-dialog" for x in p) and not any(x.code == "wrong-split" for x in p):
                    hint = _other_split_hint(sub, loaded, ch, len(splits))
                    if hint is not None:
                        p.insert(0, hint)
                problems.extend(p)
                if ranks is not None:
                    parts.append(ranks)
            info = {"path": str(request.submission), "kind": sub.kind, "sha256": _sha256(sub),
                    "files": [f.name for f in sub.files]}
            # a folder's or archive's result files for the challenge's other splits: left out unread, said once
            elsewhere = sorted({f.split for f in sub.files if f.split in ch.splits and f.split not in splits})
            n_elsewhere = sum(1 for f in sub.files if f.split in elsewhere)
        table = None
        if scoring:
            from dialeval.core.ranks import RankTable

            table = RankTable.concat(parts)
        fields = {
            "tasks": sorted(all_tasks),
            "mode": "lenient" if lenient else "strict",
            "nc": candidate_limit if lenient else "all",
            "gold": "id",
        }
        identity = data_identity([p for s in splits for p in used[s]], request.data,
                                 embedded_default=bool(request.options.get("embedded_default")),
                                 splits={s: used[s] for s in splits})
        notes = []
        if elsewhere:
            from dialeval.benchmarks.rankings import scored_splits, splits_named

            notes.append(f"{n_elsewhere} result file{'' if n_elsewhere == 1 else 's'} of {splits_named(elsewhere)} left "
                         f"out ({scored_splits(splits)}): not read")
        return Evaluation(table=table, problems=problems, splits=splits, groups=[str(t) for t in sorted(all_tasks)],
                          data=identity, submission=info, signature_fields=fields, notes=notes)


def _split_finder(ch: Challenge, scored: list[str]):
    """``other_split_of(dialog id)``: the split of the challenge, other than those ``scored``, holding that dialog,
    else None. The other splits' test files are indexed the first time an id is not in a scored split."""
    where: dict[str, str] | None = None

    def other_split_of(did: str) -> str | None:
        nonlocal where
        if where is None:
            where = {}
            for other in ch.splits:
                if other in scored:
                    continue
                try:
                    for d in load_split(ch, other, None, with_keys=False).dialog_task:
                        where.setdefault(d, other)
                except DialevalError:  # a split whose data cannot be read is not this run's
                    continue
        return where.get(did)

    return other_split_of


def _other_split_hint(sub: Submission, loaded: LoadedSplit, ch: Challenge, n_splits: int) -> Problem | None:
    """When a file's dialog ids are not of this split, name the split of the challenge they belong to
    (:func:`dialeval.benchmarks.items.other_split_hint`, the rule every benchmark shares)."""
    from dialeval.benchmarks.rankings import WRONG_SPLIT_IDS, other_split_hint

    unknown: list[str] = []
    for f in _files_for_split(sub, loaded.name, n_splits):
        if len(unknown) >= WRONG_SPLIT_IDS:  # enough to tell; bounded work on huge files
            break

        def collect(data) -> None:
            for item in data if isinstance(data, list | JSONArray) else []:  # a large array: item by item
                did = item.get("dialog_id") if isinstance(item, dict) else None
                if isinstance(did, str) and did not in loaded.dialog_task:
                    unknown.append(did)
                    if len(unknown) >= WRONG_SPLIT_IDS:
                        break

        def forget(n=len(unknown)) -> None:  # noqa: B008 (bound now: a reading that starts over forgets its ids)
            del unknown[n:]

        try:
            read_json_document(f.read_bytes(), str(f.path), collect, forget)
        except Exception:  # unreadable files already have their own problem
            continue

    def ids(other: str):
        return lambda _unknown: load_split(ch, other, None, with_keys=False).dialog_task

    return other_split_hint(unknown, loaded.name, [(o, ids(o)) for o in ch.splits]) if unknown else None


def _rank_one_entries(data):
    """``(dialog_id, candidate id with the best rank)`` per well-formed item of a (validated) result file."""
    if not isinstance(data, list):
        return
    for item in data:
        if not isinstance(item, dict) or not isinstance(item.get("dialog_id"), str):
            continue
        entries = [e for e in item.get("lst_candidate_id") or [] if isinstance(e, dict)
                   and isinstance(e.get("candidate_id"), str) and type(e.get("rank")) is int]
        if entries:
            yield item["dialog_id"], min(entries, key=lambda e: e["rank"])["candidate_id"]


def _split_of_file(challenge: Challenge, submission: Submission) -> str | None:
    """The split holding most of a single result file's dialog ids (the first on a tie), or None: none of its
    ids, or a file that cannot be read as a result array (the scorer then reports what is wrong with it)."""
    try:
        items = parse_json_bytes(submission.files[0].read_bytes(), submission.files[0].name)
    except DialevalError:
        return None
    ids = {i.get("dialog_id") for i in items if isinstance(i, dict)} if isinstance(items, list) else set()
    best: tuple[str, int] | None = None
    for s in test_splits(challenge):
        try:
            n = len(ids & load_split(challenge, s, None, with_keys=False).dialog_task.keys())
        except DialevalError:
            continue
        if n and (best is None or n > best[1]):
            best = (s, n)
    return best[0] if best else None


TRAIN_SPLIT = "trn"


def test_splits(challenge: Challenge) -> list[str]:
    """The splits a submission is scored on: every split folder but the training dialogs' (``trn/``), which carry
    their answers inline and have no answer key, so a run could never be scored there (a run whose folders match
    no split was reported against trn's missing key, with the key's path)."""
    return [s for s in challenge.splits if s != TRAIN_SPLIT]


def parse_splits(split: str | list[str] | None, challenge: Challenge, submission: Submission) -> list[str]:
    """``"tst1"``, ``"tst1,tst3"``, a list, or ``"all"``/None.

    None: every split of the challenge the submission covers: a directory's or archive's split folders; for a
    single result file the challenge's only split, else the split its dialog ids belong to. ``all``: the same
    for a folder or archive; for a file the split its dialog ids belong to (none: refused, naming the splits).
    """
    have = test_splits(challenge)
    if split is None:
        if submission.kind != "file":
            split = "all"
        elif len(have) == 1:
            split = have[0]
        else:  # the split its dialog ids belong to
            split = _split_of_file(challenge, submission)
            if split is None:
                raise UsageError(f"give --split for a single result file (one of: {', '.join(have)}): none of its "
                                 "dialog ids is an item of the data, or it is no result file (another benchmark's "
                                 "run? give --benchmark)")
    names = parse_split_names(split)
    if names == ["all"] and submission.kind == "file" and len(have) > 1:
        # a result file answers one split: the one its dialog ids belong to, as without --split
        mine = _split_of_file(challenge, submission)
        if mine is None:
            raise one_split_refusal(DSTC6.name, have)
        names = [mine]
    if names == ["all"]:
        names = [s for s in submission.splits() if s in have] if submission.kind != "file" else have[:1]
        if not names:
            if len(have) > 1 and any(f.split is None for f in submission.files):
                raise UsageError("--split all: the submission has no folder named after a split of the challenge; "
                                 "give --split for a split's folder")
            # No result file for any split (an empty folder or archive, or only folders the challenge does not
            # have): the submission's fault, reported per split as no-result-file (exit 1), whatever its form.
            names = list(have)
    if not names:
        raise UsageError("the challenge has no split")
    require_splits(names, have, "--split: {name!r} is not a split of the challenge (it has: {known})")
    if submission.kind == "file" and len(names) > 1:
        raise one_split_refusal(DSTC6.name, have)
    return names


def _files_for_split(sub: Submission, split: str, n_splits: int) -> list[SubmittedFile]:
    if sub.kind == "file":
        return sub.files
    return [f for f in sub.files if f.split == split or (f.split is None and n_splits == 1)]


def _sha256(sub: Submission) -> str:
    from dialeval.files.read import entries_sha256, file_sha256

    if sub.kind == "archive" or sub.kind == "file":
        return file_sha256(sub.source, shown=sub.shown or str(sub.source))
    return entries_sha256((f.name, f.path) for f in sub.files)  # a directory: names and contents, sorted


def _check_split(
    sub: Submission,
    loaded: LoadedSplit,
    n_splits: int,
    lenient: bool,
    candidate_limit: int,
    scoring: bool,
    other_split_of=None,
) -> tuple[list[Problem], RankTable | None]:
    problems: list[Problem] = list(loaded.key_warnings)
    # What the submission's content controls is capped per code (a file of a million bad entries lists twenty
    # of each and counts the rest in one code-less note), so memory stays bounded by the input, --json too;
    # what the data bounds (missing items, the hints below) is listed whole.
    checked = Capped()
    files = _files_for_split(sub, loaded.name, n_splits)
    if not files:
        have = sorted({f.split for f in sub.files if f.split})
        where = f"the folder has {', '.join(s + '/' for s in have)} not {loaded.name}/" if have else \
            f"no {loaded.name}/ folder and no result file for it"
        checked.append(Problem("no-result-file", "", f"{where} (expected {loaded.name}/<test file stem>.answers.json)",
                               "error"))
    stem_task = {tf.path.name[: -len(".json")]: t for t, tf in loaded.split.files.items()}
    seen: dict[str, str] = {}
    gold_rank: dict[str, int] = {}
    other = other_files = 0  # items and files of tasks outside --task: left out, said once
    other_split: dict[str, int] = {}  # a single file's items of other splits: left out, said once
    unknown = 0
    score_tasks = set(loaded.tasks)
    for f in files:
        file_task = None
        if sub.kind != "file":
            file_task = stem_task.get(f.stem or "")
            if file_task is None:
                # --lenient: the official scorer reads only the five expected files; an extra one is ignored
                checked.append(
                    Problem("unknown-file", "", f"{f.name} matches no test file of split {loaded.name} "
                            "(expected <test file stem>.answers.json)", "warning" if lenient else "error", f.name)
                )
                continue
            if file_task not in score_tasks:
                other_files += 1
                continue
        raw = f.read_bytes()
        if len(raw) > SYNTAX_FIRST_BYTES:  # a broken large file: refused before any struct is built
            try:
                check_syntax(raw, f.name)
            except UnreadableJSON as e:
                checked.append(Problem(e.code, "", e.reason, "error", f.name))
                continue
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

        def use(data, f=f, file_task=file_task) -> tuple[int, dict[str, int], int]:
            if lenient:
                return _lenient_file(data, f, loaded, candidate_limit, checked, gold_rank, seen, file_task,
                                     score_tasks), {}, 0
            from dialeval.benchmarks.dstc6.validate import check_result_file

            check = check_result_file(data, f.name, loaded, seen, file_task, score_tasks, problems=checked,
                                      other_split_of=other_split_of)
            gold_rank.update(check.gold_rank)
            return check.other_task_items, check.other_split, check.unknown_items

        # A large file is checked one item at a time (millions of tiny items then cost their text, not their
        # tree). Should that reading start over on the whole document, it forgets what it had found: the
        # problems, and the dialogs it had marked as seen (only ever added to, at the end).
        mark, n_seen = checked.mark(), len(seen)

        def undo(mark=mark, n_seen=n_seen) -> None:
            checked.rewind(mark)
            for did in list(itertools.islice(seen, n_seen, None)):
                del seen[did]

        try:
            n_other, by_split, n_unknown = read_json_document(raw, f.name, use, undo)
            other += n_other
            unknown += n_unknown
            for name, n in by_split.items():
                other_split[name] = other_split.get(name, 0) + n
        except UnreadableJSON as e:  # the participant's file, not the organizer's set-up: a problem, exit 1
            checked.append(Problem(e.code, "", e.reason, "error", f.name))
            continue
        finally:
            del raw
    problems.extend(checked.close())
    if other or other_files:
        problems.append(other_task_warning(other, other_files, loaded.tasks))
    if other_split:
        from dialeval.benchmarks.rankings import other_split_outcome

        outcome = other_split_outcome(other_split, unknown, loaded.name, bool(seen))
        problems.insert(0 if outcome.severity == "error" else len(problems), outcome)
    parts = []
    if scoring:
        from dialeval.core.ranks import RankTable
    # After a file-level error (not JSON, not an array, no result file) every item would be "missing":
    # that error says it all.
    file_level = any(p.severity == "error" and p.pointer == "" and p.code for p in problems)  # not the cap's note
    if not seen and not file_level:
        problems.append(Problem("nothing-ranked", "", f"the submission ranks no item of split {loaded.name}: "
                                "every item is scored as a miss", "warning"))
    ranked_tasks = {loaded.dialog_task[d] for d in seen if d in loaded.dialog_task}
    if ranked_tasks and not file_level and ranked_tasks < set(loaded.tasks):
        only = format_tasks(sorted(ranked_tasks))
        problems.append(Problem("task-hint", "", f"only task(s) {only} of split {loaded.name} are ranked: the other "
                                f"tasks' items count as misses; --task {only} scores just those", "warning"))
    for t in loaded.tasks:
        idx = loaded.indexes[t]
        key = loaded.keys.get(t)
        ids = key.dialog_ids if key is not None else idx.dialog_ids
        missing = [] if file_level or not seen else [d for d in ids if d not in seen]
        for d in missing:
            problems.append(Problem("missing-dialog", "", f"dialog {d} (task {t}) is not ranked: scored as a miss", "warning"))
        if scoring and key is not None:
            pos = [idx.position[d] for d in ids]
            parts.append(
                RankTable.build(
                    benchmark="dstc6",
                    split=loaded.name,
                    group=str(t),
                    item_ids=ids,
                    conversation_ids=[idx.conversation_ids[p] for p in pos],
                    n_candidates=[len(idx.candidate_ids[p]) for p in pos],
                    gold_rank=[gold_rank.get(d, 0) for d in ids],
                )
            )
    if not scoring:
        return problems, None
    from dialeval.core.ranks import RankTable

    return problems, RankTable.concat(parts)


def other_task_warning(items: int, files: int, tasks: list[int]) -> Problem:
    """THE one warning of a run whose submission holds items (a single result file) or files (a folder, an archive)
    of tasks outside ``--task``: they are left out, neither checked nor scored."""
    asked = format_tasks(sorted(tasks))
    what = [f"{n:,} {noun}{'' if n == 1 else 's'}" for n, noun in ((items, "item"), (files, "file")) if n]
    return Problem("other-task", "", f"{' and '.join(what)} of tasks other than {asked} left out (--task {asked}): "
                   "neither checked nor scored", "warning")


def _lenient_file(data, f, loaded: LoadedSplit, limit, problems, gold_rank, seen, file_task, score_tasks) -> int:
    """Emulate the official scorer on one file; returns how many items of tasks outside --task it left out."""
    from dialeval.benchmarks.dstc6.lenient import emulate_official, gold_rank_from_slots

    def candidates_of(did):
        t = loaded.dialog_task.get(did)
        return loaded.indexes[t].candidate_ids[loaded.indexes[t].position[did]] if t is not None else None

    left_out = 0

    def outside(did) -> bool:
        nonlocal left_out
        t = loaded.dialog_task.get(did) if isinstance(did, str) else None
        if t is None or t in score_tasks or file_task is not None:
            return False
        left_out += 1
        return True

    res = emulate_official(data, f.name, limit, candidates_of, problems=problems, outside=outside)
    for did, slots in res.slots.items():
        t = loaded.dialog_task.get(did)
        if t is None or (file_task is not None and t != file_task):
            problems.append(Problem("official-quirk", "", f"dialog {did[:60]!r} is not in this answer key: ignored", "warning", f.name))
            continue
        seen[did] = f.name
        key = loaded.keys.get(t)
        if key is not None:
            gold_rank[did] = gold_rank_from_slots(slots, key.gold.get(did))
    return left_out
