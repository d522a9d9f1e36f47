"""bAbI dialog tasks 1-6 (Bordes & Weston 2017), scored straight from the FB text files.

Data: the release's folder (``dialog-babi-task{N}-{name}-{split}.txt``, splits ``trn dev tst tst-OOV``; task 6
has no ``tst-OOV``; tasks 1-5 share ``dialog-babi-candidates.txt``, task 6 has its own). Every bot turn is one
item, ranked against the task's whole candidate file.

Ids (stable: they depend only on the data files):

- item id ``<file stem>:<conversation>:<line ID>``, e.g. ``dialog-babi-task5-full-dialogs-tst:17:9`` =
  the bot turn on the line with ID 9 of the 17th conversation (1-based, file order) of that file;
- conversation id ``<file stem>:<conversation>``; turn = the bot turn's position in its conversation (1-based);
- candidate id = the 1-based line number of the candidate in the task's candidate file, as a string (``"1"``
  ... ``"4212"`` for tasks 1-5, ``"1"`` ... ``"2407"`` for task 6).

Gold: the format has no answer ids, only the bot utterance, so the gold of an item is the candidate (or
candidates) whose text equals the bot utterance exactly. Data text is never normalised.

Submissions: the DSTC6 result format keyed by these ids (a top-k ranking is enough for accuracy), or JSON
scores ``{"format": "scores", "items": {item id: {candidate id: score}}}`` under a tie policy, or (one task
at a time) a ``.npy``/``.csv`` matrix with one row per item in file order and one column per candidate line.
Metrics: per-response accuracy (hit@1 over every bot turn) and per-dialog accuracy (share of conversations
whose every bot turn is a hit@1), as fractions.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from dialeval.benchmarks.base import Evaluation, Request, task_numbers
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.core.errors import UsageError
from dialeval.core.problems import Problem
from dialeval.files.read import memo_key, not_a_folder
from dialeval.formats.convert import BABI_CANDIDATES, BABI_SPLITS, BABI_TASK_FILES, babi_splits
from dialeval.formats.dstc6 import TASK_DESCRIPTIONS
from dialeval.formats.fbdialog import IdsByText, TextByLineNumber

TASKS = tuple(sorted(BABI_TASK_FILES))


def task_file(data: Path, task: int, split: str) -> Path:
    return Path(data) / f"{BABI_TASK_FILES[task]}-{split}.txt"


def candidates_file(data: Path, task: int) -> Path:
    return Path(data) / BABI_CANDIDATES[task]


def present(data: Path) -> dict[str, list[int]]:
    """``{split: [tasks whose file exists]}`` in the release's split order.

    A name that exists but is not a regular file (a FIFO, a link to a device) counts as present, so that
    reading it says what it is instead of "no file"."""
    data = Path(data)
    if not data.is_dir():
        raise not_a_folder(data, "bAbI data directory")
    out: dict[str, list[int]] = {}
    for split in BABI_SPLITS:
        tasks = [t for t in TASKS if split in babi_splits(t) and task_file(data, t, split).exists()]
        if tasks:
            out[split] = tasks
    return out


@lru_cache(maxsize=4)
def _candidates(path: str, size: int, mtime_ns: int) -> tuple[tuple[str, ...], IdsByText, TextByLineNumber]:
    from dialeval.formats.fbdialog import CandidateFile

    cands = CandidateFile(path)
    if not len(cands):
        raise UsageError(f"{path}: no candidates (an empty candidate file?)")
    ids = tuple(map(str, cands.linenos))
    return ids, IdsByText(cands, ids), TextByLineNumber(cands)


def load_candidates(data: Path, task: int) -> tuple[tuple[str, ...], IdsByText, TextByLineNumber]:
    """``(candidate ids in file order, text -> ids, id -> text)`` of a task's candidate file (memoised).

    The file is streamed into compact storage (:class:`~dialeval.formats.fbdialog.CandidateFile`): ``text ->
    ids`` has ``get(text, default)`` (a frozenset of ids), ``id -> text`` is a read-only mapping."""
    path = candidates_file(data, task)
    return _candidates(*memo_key(path, f"is {data} the bAbI dialog data directory?"))


@lru_cache(maxsize=32)
def _parse(path: str, size: int, mtime_ns: int):
    """(item ids, conversation ids, turns, bot utterances, file line numbers) of one task file (memoised)."""
    from dialeval.formats.fbdialog import iter_lines

    stem = Path(path).stem
    item_ids: list[str] = []
    conv_ids: list[str] = []
    turns: list[int] = []
    bots: list[str] = []
    linenos: list[int] = []
    conv = turn = 0
    for ln in iter_lines(path):
        if ln.bot is None:
            continue
        if ln.conversation != conv:
            conv, turn = ln.conversation, 0
        turn += 1
        item_ids.append(f"{stem}:{conv}:{ln.lid}")
        conv_ids.append(f"{stem}:{conv}")
        turns.append(turn)
        bots.append(ln.bot)
        linenos.append(ln.lineno)
    return item_ids, conv_ids, turns, bots, linenos


def load_items(data: Path, task: int, split: str, with_gold: bool = True, problems: list[Problem] | None = None):
    """The :class:`~dialeval.benchmarks.items.ItemSet` of one task file (group = the task number as a string).

    A bot utterance that is no candidate's text (never the case in the release) leaves its item without
    gold (a miss for every system) and adds a warning naming the file and line. The parsed file is memoised
    (keyed by path, size and modification time); each call returns a fresh ItemSet.
    """
    from dialeval.benchmarks.items import ItemSet

    path = task_file(data, task, split)
    key = memo_key(path, f"is {data} the bAbI dialog data directory?")
    ids, by_text, texts = load_candidates(data, task)
    item_ids, conv_ids, turns, bots, linenos = _parse(*key)
    if not item_ids:
        raise UsageError(f"{path}: no bot turns (not a bAbI dialog file?)")
    gold = None
    if with_gold:
        empty: frozenset[str] = frozenset()
        gold = [by_text.get(b, empty) for b in bots]
        no_gold = [n for n, g in zip(linenos, gold, strict=True) if not g]
        if no_gold and problems is not None:
            more = f" (and {len(no_gold) - 1} more lines)" if len(no_gold) > 1 else ""
            problems.append(Problem(
                "answer-not-candidate", "", f"line {no_gold[0]} of the data file: the bot utterance is not a line of "
                f"{candidates_file(data, task).name}{more}; such items count as misses for every system", "warning",
                path.name))
    return ItemSet(str(task), list(item_ids), ids, gold, list(conv_ids), list(turns), texts,
                   files=(path, candidates_file(data, task)))


class Babi(ItemSetBenchmark):
    name = "babi"
    public_data_note = ("every bot turn (an item's answer) is written on its line after the user's, and is the context "
                        "of the turns after it: no copy of a test file hides an answer it still needs")
    title = "bAbI dialog tasks 1-6 (restaurant booking, DSTC2): per-response / per-dialog accuracy, full candidate file"
    group_label = "task"
    split_names = BABI_SPLITS
    one_split = True
    data_name = "bAbI dialog"
    split_descriptions = {
        "trn": "training dialogs",
        "dev": "development dialogs",
        "tst": "test dialogs, same knowledge base as training",
        "tst-OOV": "test dialogs on a second knowledge base (out-of-vocabulary entities); tasks 1-5 only",
    }
    group_names = {"1": "API calls", "2": "API refine", "3": "options", "4": "phone/address", "5": "full dialogs", "6": "DSTC2"}
    group_descriptions = {**TASK_DESCRIPTIONS,
                          "6": "real human-bot dialogs from the second Dialog State Tracking Challenge (DSTC2), converted"}
    default_metrics = ("per-response-accuracy", "per-dialog-accuracy")
    submission_formats = (
        "dstc6-result keyed by bAbI item ids (<file stem>:<conversation>:<line ID>), candidate ids = line numbers",
        'JSON scores {"format": "scores", "items": {item id: {candidate id: score}}}',
        ".npy / headerless .csv matrix (one task: a row per bot turn, a column per candidate line)",
    )
    problem_codes = {  # this benchmark's own codes (the shared ones: core.problems.CODES)
        "answer-not-candidate": "(warning) a bot utterance in the data that is no line of the candidate file (counts as a miss)",
    }

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [str(t) for t in ts] for s, ts in present(data).items()}

    def scoring_files(self, data: Path, splits: list[str]) -> list[Path]:
        """The splits' task files and the candidate files of their tasks; never a trn file."""
        tasks = present(data)
        return [f for s in splits for t in tasks.get(s, ()) for f in (task_file(data, t, s), candidates_file(data, t))]

    def load(self, data, split, group, with_gold, problems):
        return load_items(data, int(group), split, with_gold=with_gold, problems=problems)

    def select_groups(self, requested: list[str]) -> list[str]:
        return [str(t) for t in task_numbers(requested, TASKS, "bAbI")]

    def split_of_id(self, item_id: str) -> str | None:
        stem = item_id.partition(":")[0]
        return next((s for s in _LONGEST_FIRST if stem.endswith("-" + s)), None)

    def other_split_ids(self, data: Path, split: str, groups: list[str]):
        from dialeval.benchmarks.rankings import fb_item_ids

        return fb_item_ids(task_file(data, int(t), split) for t in groups)

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        return {"tasks": [int(g) for g in ev.groups], "gold": "text", "nc": "all",
                "ties": self.signed_ties(request, ev)}


_LONGEST_FIRST = sorted(BABI_SPLITS, key=len, reverse=True)  # tst-OOV before tst
