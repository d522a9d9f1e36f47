"""DSTC7 Track 1 (NOESIS: subtasks 1-5, Ubuntu and Advising) and DSTC8 Track 2 subtask 1 (NOESIS II).

``--data`` is one released JSON file or a folder of them (:mod:`dialeval.formats.dstc7`); the dataset and subtask
come from the submission's file name (``Ubuntu_subtask_1.json``), else the data file's name or its ``scenario``,
and name the group (``ubuntu-1``). The correct ids come from the data's ``options-for-correct-answers`` or from the
ground-truth TSV given with ``--keys``. Subtask 2 ranks ids of the 120,000-candidate pool (``--pool FILE``, or the
one ``*pool*`` file beside the data); subtask 4 (every DSTC8 example) may rank ``NONE``, which is correct exactly
when no correct id is among the example's options. Submissions: :mod:`dialeval.benchmarks.listed`.

Metrics: R@k (success@k), MRR, MAP (textbook average precision over the correct ids) and the challenge's ranking
score, (R@10 + MRR) / 2. ``--lenient`` gives ``evaluations/metrics.py``'s numbers (its R@100 and MAP included).
A zip of ranking files (the challenge's submission) is scored member by member; DSTC8's ``--contexts``
(:data:`~dialeval.benchmarks.listed.CONTEXTS`) gives the official scorer's examples or its baseline's.
"""

from __future__ import annotations

from pathlib import Path

from dialeval.benchmarks.base import Option, Request, parse_split_names
from dialeval.benchmarks.items import ItemSet
from dialeval.benchmarks.itemset import ItemSetBenchmark
from dialeval.benchmarks.listed import CONTEXTS, answered_splits, listed_gold, one_file, shared_pool, side_file
from dialeval.core.errors import UsageError
from dialeval.formats.dstc7 import NONE, RANKING, name_fields, read_data

SUBTASK_2_LISTED = 100
"""A subtask 2 ranking lists the top 100 of the pool (submission.rst); strict mode refuses more, while the official
script reads every listed id (a correct id at 150 still earns 1/150 of MRR), and so does ``--lenient``."""
LENIENT_NOTES = (
    "lenient: R@k counts the examples whose first listed correct id is within the top k, over the ground truth's "
    "examples; R@100 counts a correct id listed at any position",
    "lenient: MAP is evaluations/metrics.py's, the mean over the correct ids in ground-truth order of (index + 1) / "
    "(submitted position + 1), over every id the ground truth lists (an empty or repeated one too): not average "
    "precision, and it can exceed 1",
    "lenient: an example ranked twice counts its last ranking, an id listed twice its first position; ids outside "
    "the example are ignored, confidences are not read",
    "lenient: only the ground truth's ids are upper-cased: a submitted id in another case matches nothing",
)


def _data_split(name: str) -> str | None:
    """The split of a released data file's name in a folder, else None: data files name their dataset and split (a
    run such as ``Ubuntu_subtask_1.json`` does not), and a pool file is no data file."""
    dataset, _, split = name_fields(name)
    return split if name.endswith(".json") and dataset and "pool" not in name.lower() else None


class DSTC7(ItemSetBenchmark):
    name = "dstc7"
    title = "DSTC7 Track 1 (NOESIS) response selection, subtasks 1-5, Ubuntu and Advising"
    group_label = "subtask"
    split_names = ("train", "dev", "test")
    data_name = "DSTC7 Track 1"
    split_descriptions = {"train": "training examples", "dev": "development examples",
                          "test": "test examples (the ground truth was released after the challenge)"}
    group_descriptions = {f"{key}-{n}": f"{label}: the next utterance among {text}"
                          for key, label in (("ubuntu", "Ubuntu IRC"), ("advising", "Advising"))
                          for n, text in enumerate(("100 candidates", "the 120,000-candidate pool",
                                                    "100 candidates, several of them correct (paraphrases)",
                                                    "100 candidates, or NONE when none is correct",
                                                    "100 candidates, with external knowledge"), 1)}
    default_metrics = ("r@1", "r@10", "r@50", "r@100", "mrr", "map", "noesis-score")
    submission_formats = ("ranking JSON [{example-id, candidate-ranking: [{candidate-id, confidence}]}]",)
    submission_suffixes = (".json",)
    options = (Option("lenient", "dstc7, dstc8: the official evaluations/metrics.py numbers, listing its definitions."),
               Option("pool", "dstc7, dstc8: subtask 2's candidate pool file (default: the one *pool* file beside "
                      "the data).", kind="text"))
    separate_keys = True
    archive_members = True
    listed, lenient_notes, shared_word = RANKING, LENIENT_NOTES, "pool"
    none_subtasks: frozenset[int] = frozenset({4})

    def _files(self, data: Path) -> list[Path]:
        return sorted(p for p in data.iterdir() if _data_split(p.name)) if data.is_dir() else [data]

    def scoring_files(self, data: Path, splits: list[str]) -> list[Path]:
        """The splits' data files and every ``*pool*`` file (subtask 2's pool, found beside the data; all of them,
        so that several are refused as they are with the whole folder). The ground truth comes with ``--keys``."""
        return sorted(p for p in data.iterdir() if _data_split(p.name) in splits or "pool" in p.name.lower())

    def key_splits(self, data: Path, keys: Path, splits: list[str]) -> list[str]:
        at = [(name_fields(p.name)[2] or "test", p) for p in self._files(Path(data))]
        return answered_splits([(s, read_data(p)) for s, p in at if s in splits], keys, RANKING)

    def splits(self, data: Path) -> list[str]:
        return sorted({name_fields(p.name)[2] or "test" for p in self._files(Path(data))})

    def present(self, data: Path) -> dict[str, list[str]]:
        """The one data file the submission answers: of its dataset and subtask (subtask 5 is scored on subtask 1's
        files) and of ``--split``; without one, of the split whose examples it ranks."""
        request, sub = self.request, Path(self.request.submission)
        dataset, subtask, _ = name_fields(sub.name)
        splits = None if request.split in (None, "all", ["all"]) else parse_split_names(request.split)

        def fits(p: Path) -> bool:
            d, s, sp = name_fields(p.name)
            return d in (dataset or d, None) and s in (subtask or s, 1 if subtask == 5 else subtask, None) and \
                (splits is None or (sp or "test") in splits)

        self.df = df = one_file([read_data(p) for p in self._files(data) if fits(p)], sub, RANKING, data)
        scenario = str(df.one("scenario"))
        self.subtask = subtask or name_fields(df.path.name)[1] or (scenario.isdigit() and int(scenario)) or 1
        self.group = f"{dataset or name_fields(df.path.name)[0] or self.name}-{self.subtask}"
        return {name_fields(df.path.name)[2] or df.one("data-split") or "test": [self.group]}

    def splits_of(self, submission, data) -> list[str]:
        """The split of the one data file a submission answers (grading a run given without --split)."""
        self.request = Request(submission, Path(data))
        return list(self.present(Path(data)))

    def select_groups(self, requested: list[str]) -> list[str]:
        if not {self.group, str(self.subtask)} & set(requested):
            raise UsageError(f"{self.name}: the submission answers {self.group} only")
        return [self.group]

    def load(self, data, split, group, with_gold, problems) -> ItemSet:
        df, request, none_ok = self.df, self.request, self.subtask in self.none_subtasks
        if request.options.get("pool") and self.subtask != 2:  # given, so expected to count: never ignored
            raise UsageError(f"--pool: only subtask 2 ranks a shared candidate pool; {df.path.name} is {self.group} "
                             "data, whose examples list their own candidates")
        pool, pool_file = self._pool(df, none_ok) if self.subtask == 2 else (None, None)
        allowed = [pool or frozenset((*o, NONE) if none_ok else o) for o in df.options]
        official = str.upper if request.options.get("lenient") else None  # the script upper-cases the TSV's ids
        gold, ids = listed_gold(df, allowed, request.keys, RANKING, none_ok, official) if with_gold else (None, df.ids)
        at = {e: i for i, e in enumerate(df.ids)}
        files = (df.path, *([request.keys] if request.keys else []), *([pool_file] if pool_file else []))
        return ItemSet(group, ids, [allowed[at[e]] if e in at else frozenset() for e in ids], gold, files=files,
                       longest=SUBTASK_2_LISTED if self.subtask == 2 else None, none_id=NONE if none_ok else None)

    def _pool(self, df, none_ok: bool):
        """Subtask 2's pool (``--pool``, the one ``*pool*`` file beside the data, else the data's own candidates)
        and the file it came from."""
        path = side_file(self.request.options.get("pool"), df.path.parent, "pool")
        pool, note = shared_pool(path, RANKING, df.options, df.correct or (), 120_000 + none_ok, "subtask 2")
        self.notes.extend([note] if note else [])
        return pool | {NONE} if none_ok and note is None else pool, path

    def item_values(self, where, gold) -> dict[str, float]:
        if not self.request.options.get("lenient"):
            return super().item_values(where, gold)
        from dialeval.metrics.ranking import dstc7_official_ap

        return {"map": dstc7_official_ap(where, len(gold)), "r@100": float(any(q is not None for q in where))}


class DSTC8(DSTC7):
    """DSTC8 Track 2 subtask 1: DSTC7's files and rules, and ``"NONE"`` may be ranked in every example."""

    name = "dstc8"
    title = "DSTC8 Track 2 (NOESIS II) subtask 1 response selection, Ubuntu and Advising"
    data_name = "DSTC8 Track 2"
    group_descriptions = {f"{key}-1": f"{label}: the next utterance among 100 candidates, or NONE when none is "
                          "correct" for key, label in (("ubuntu", "Ubuntu IRC"), ("advising", "Advising"))}
    default_metrics = ("r@1", "r@10", "r@50", "mrr", "map", "noesis-score")
    none_subtasks = frozenset({1, 2, 3, 4, 5})
    options = (*DSTC7.options, CONTEXTS)
