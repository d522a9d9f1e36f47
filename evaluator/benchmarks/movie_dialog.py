"""Movie Dialog dataset (Dodge et al. 2016), tasks 1-4, scored with hits@k straight from the FB text files.

Data: the release's files (see :mod:`dialeval.formats.movie`): ``task{N}_{name}_{split}.txt`` for the splits
present (``train``, ``dev``, ``test``), ``entities.txt`` (candidates of tasks 1-3) and the Reddit candidate
file of the split (task 4). Every exchange (``ID question<TAB>answer``) is one item.

Ids (stable: they depend only on the data files):

- item id ``<file stem>:<conversation>:<line ID>``, e.g. ``task1_qa_test:17:1`` = the exchange on the line with
  ID 1 of the 17th conversation (1-based, file order); conversation id ``<file stem>:<conversation>``;
  turn = the exchange's position in its conversation (task 3: 1, 2, 3);
- tasks 1-3: candidate id ``e<N>`` = the entity on line N of ``entities.txt`` (75,542 candidates);
- task 4: candidate id ``c<N>`` = the N-th candidate of the Reddit candidate file (1-based, blank lines not
  counted) and ``reply`` = the item's own true reply: 10,001 candidates per item.

Gold: tasks 1-3 answers are entity lists joined with ", "; they are split against ``entities.txt``
(:func:`dialeval.formats.movie.split_answer`, never on the comma) and every entity of the answer is a gold
(hits@k = any gold among the top k). Answer parts that match no entity are organizer-data faults: a warning
names the file and lines, the item is scored against the entities that do match, and an item with none
counts as a miss for every system. Task 4: ``reply`` plus any file candidate with exactly the reply's text.

Submissions: the DSTC6 result format or JSON scores keyed by these ids, or a ``.npy``/``.csv`` matrix (one task
at a time: a row per item in file order, a column per candidate in id order, ``reply`` last). In the two JSON
forms a candidate may also be given by its text: the exact text of an entity / candidate maps to its id;
any other string is compared after ParlAI-style normalisation (lower-case, punctuation -> space, a/an/the
dropped, spaces collapsed) — then every candidate and gold of the submission is compared that way, texts
normalising alike count as one candidate, and the report says so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Evaluation, Request, task_numbers
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.benchmarks.textids import names_to_ids
from dialeval.core.problems import Problem
from dialeval.formats import movie

TASKS = tuple(sorted(movie.TASK_NAMES))
TURN_GROUPS = ("3",)
"""Groups whose report breaks the numbers down by turn position (QA+Recs: recommend, question, recommend)."""


def load_task(data: Path, task: int, split: str, problems: list[Problem], with_gold: bool = True) -> ItemSet:
    """One task file's items (group = the task number; :func:`dialeval.formats.movie.read_task`), the reply texts
    (task 4) in ``extra``. ``with_gold`` False: ids only (a task outside ``--task``, or validation)."""
    f = movie.read_task(data, task, split, with_gold)
    if f.partial:
        lines = ", ".join(map(str, f.partial[:5])) + (", ..." if len(f.partial) > 5 else "")
        none = (f"; {f.unmatched} of them match no entity at all and count as misses for every system"
                if f.unmatched else "")
        problems.append(Problem(
            "answer-not-entity", "", f"line {f.partial[0]} of the data file: {len(f.partial)} answer(s) have parts "
            f"that match no line of {movie.ENTITIES} (lines {lines}); those items are scored against the entities "
            f"that do match{none}", "warning", f.path.name))
    return ItemSet(str(task), f.item_ids, f.candidates, f.gold, f.conversation_ids, f.turns, files=f.files,
                   extra=f.replies)


class MovieDialog(ItemSetBenchmark):
    name = "movie-dialog"
    public_data_note = ("every exchange's answer is written on its line after the question, and is the context of the "
                        "exchanges after it")
    title = "Movie Dialog dataset: QA, recommendations, QA+recs (entity candidates), Reddit (10,001 candidates); hits@k"
    group_label = "task"
    split_names = movie.SPLITS
    one_split = True
    data_name = "Movie Dialog"
    split_descriptions = {"train": "training examples", "dev": "development examples", "test": "test examples"}
    group_names = {"1": "QA", "2": "Recs", "3": "QA+Recs", "4": "Reddit"}
    group_descriptions = {
        "1": "factoid questions about movies (11 question types); hits@1",
        "2": "recommend a movie from the user's liked movies; hits@100",
        "3": "a recommendation, a question about it, a second recommendation; hits@10",
        "4": "real movie discussions from Reddit: the true reply among 10,001 candidates; hits@10",
    }
    default_metrics = ("hits@1", "hits@10", "hits@100")
    submission_formats = (
        "dstc6-result keyed by item ids (<file stem>:<conversation>:<line ID>); candidates as ids or text",
        'JSON scores {"format": "scores", "items": {item id: {candidate id or text: score}}}',
        ".npy / headerless .csv matrix (one task: a row per item, a column per candidate)",
    )
    problem_codes = {  # this benchmark's own codes (the shared ones: core.problems.CODES)
        "answer-not-entity": "(warning) a Movie Dialog answer with parts that match no line of entities.txt",
        "text-normalised": "(warning) candidates given as text matched after normalisation (lower-case, no punctuation or a/an/the)",
    }

    def present(self, data: Path) -> dict[str, list[str]]:
        return {s: [str(t) for t in ts] for s, ts in movie.present(data).items()}

    def scoring_files(self, data: Path, splits: list[str]) -> list[Path]:
        """The splits' task files, ``entities.txt`` (tasks 1-3's candidates) and the splits' Reddit candidate files
        (task 4), where the release's task folders hold them too; never a train file."""
        tasks = movie.present(data)
        out = [movie.task_path(data, t, s) for s in splits for t in tasks.get(s, ())]
        if any(t != 4 for s in splits for t in tasks.get(s, ())):
            out.append(Path(data) / movie.ENTITIES)
        return out + [movie.reddit_candidates_path(data, s) for s in splits
                      if 4 in tasks.get(s, ()) and movie.has_reddit_candidates(data, s)]

    def load(self, data, split, group, with_gold, problems):
        return load_task(data, int(group), split, problems, with_gold=with_gold)

    def select_groups(self, requested: list[str]) -> list[str]:
        return [str(t) for t in task_numbers(requested, TASKS, "Movie Dialog")]

    def loadable(self, data: Path, split: str, group: str) -> bool:
        return group != "4" or movie.has_reddit_candidates(data, split)

    def outside_ids(self, data: Path, split: str, group: str) -> list[str]:
        """Task 4's item ids without its candidate file (read from the task file alone)."""
        return movie.task_item_ids(movie.task_path(data, int(group), split))

    def split_of_id(self, item_id: str) -> str | None:
        return item_id.partition(":")[0].rpartition("_")[2]

    def other_split_ids(self, data: Path, split: str, groups: list[str]):
        from dialeval.benchmarks.rankings import fb_item_ids

        return fb_item_ids(movie.task_path(data, int(t), split) for t in groups)

    def translate(self, request, sets, problems, notes, tmp):
        """Candidates given as text (:func:`~dialeval.benchmarks.textids.names_to_ids`): by exact text, else the whole
        submission as normalised text."""
        # the tasks asked for only: items of the others are left out, so their strings never change the reading
        own, data = [s for s in sets if not s.optional], Path(request.data)
        return names_to_ids(Path(request.submission), own,
                            lambda s: movie.CandidateNames(int(s.group), s.extra, data, s.split),
                            movie.ID_PATTERN, tmp, problems, notes, normalised_code="text-normalised")

    def signature_fields(self, request: Request, ev: Evaluation) -> dict:
        normalised = any(p.code == "text-normalised" for p in ev.problems)
        return {"tasks": [int(g) for g in ev.groups], "gold": "normalised-text" if normalised else "id", "nc": "all",
                "ties": self.signed_ties(request, ev)}

    def subsets(self, table) -> list[tuple[str, object]]:
        """Task 3 (QA+Recs): the numbers by turn position too (1 recommend, 2 question, 3 recommend)."""
        if not len(table) or str(table.group[0]) not in TURN_GROUPS:
            return []
        return groups_by_turn(table)


def groups_by_turn(table) -> list[tuple[str, np.ndarray]]:
    """``[("turn 1", mask), ("turn 2", mask), ...]`` over the turn positions present (rows with turn 0 left out)."""
    turns = sorted(int(t) for t in np.unique(table.turn) if t > 0)
    if len(turns) < 2:
        return []
    return [(f"turn {t}", table.turn == t) for t in turns]
