"""DSTC7 Track 1 (NOESIS: subtasks 1-5, Ubuntu and Advising) and DSTC8 Track 2 subtask 1 (NOESIS II).

``--data`` is one released JSON file or a folder of them (:mod:`dialeval.formats.dstc7`); the dataset and subtask
come from the submission's file name (``Ubuntu_subtask_1.json``), else the data file's name or its ``scenario``,
and name the group (``ubuntu-1``). The correct ids come from the data's ``options-for-correct-answers`` or from the
ground-truth TSV given with ``--keys``. Subtask 2 ranks ids of the file's whole pool; subtask 4 (every DSTC8
example) may rank ``NONE``, which is correct exactly when no correct id is among the example's options.

Metrics: R@k (success@k: a correct id among the top k), MRR, MAP (textbook average precision over the correct
ids) and the challenge's ranking score, (R@10 + MRR) / 2. ``--lenient`` gives ``evaluations/metrics.py``'s numbers
(its R@100 and MAP included) and lists the definitions it applies.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.benchmarks.base import Benchmark, Evaluation, Option, Request, data_identity, file_sha256
from dialeval.benchmarks.base import parse_split_names as split_names
from dialeval.core.errors import UsageError
from dialeval.core.problems import Capped, Problem
from dialeval.core.ranks import RankTable
from dialeval.files.read import read_bytes
from dialeval.formats.dstc7 import NONE, example_ids, name_fields, read_data, read_keys, read_rankings
from dialeval.metrics.ranking import average_precision, dstc7_official_ap

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


POOL_SIZE = 120_000


class WholePool:
    """Subtask 2's pool when the data file lists no candidates (the organisers released the 120,000-candidate
    pool as a file of its own, which is not read): every id is taken to be in it, and the report says so."""

    def __contains__(self, _id) -> bool:
        return True

    def issuperset(self, _ids) -> bool:
        return True

    def __len__(self) -> int:
        return POOL_SIZE


class DSTC7(Benchmark):
    name = "dstc7"
    title = "DSTC7 Track 1 (NOESIS) response selection, subtasks 1-5, Ubuntu and Advising"
    group_label = "subtask"
    split_names = ("train", "dev", "test")
    data_name = "DSTC7 Track 1"
    split_descriptions = {"train": "training examples", "dev": "development examples",
                          "test": "test examples (the ground truth was released after the challenge)"}
    group_descriptions = {f"{key}-{n}": f"{label}: {text}" for key, label in (("ubuntu", "Ubuntu IRC"),
                                                                          ("advising", "Advising"))
                          for n, text in (
        (1, "the next utterance among 100 candidates"),
        (2, "the next utterance among the file's whole pool of candidates"),
        (3, "the next utterance among 100 candidates, several of them correct (paraphrases)"),
        (4, "the next utterance among 100 candidates, or NONE when none is correct"),
        (5, "the next utterance among 100 candidates, with external knowledge"))}
    default_metrics = ("r@1", "r@10", "r@50", "r@100", "mrr", "map", "noesis-score")
    submission_formats = ("ranking JSON [{example-id, candidate-ranking: [{candidate-id, confidence}]}]",)
    options = (Option("lenient", "dstc7, dstc8: the official evaluations/metrics.py numbers, listing its definitions."),)
    separate_keys = True
    none_subtasks: frozenset[int] = frozenset({4})

    def _files(self, data: Path) -> list[Path]:
        # in a folder, released data files name their dataset and split (a run such as Ubuntu_subtask_1.json does not)
        return sorted(p for p in data.iterdir() if p.suffix == ".json" and None not in name_fields(p.name)[::2]) \
            if data.is_dir() else [data]

    def splits(self, data: Path) -> list[str]:
        return sorted({name_fields(p.name)[2] or "test" for p in self._files(Path(data))})

    def _data_file(self, request: Request, dataset, subtask):
        """The one data file a submission answers: of its dataset and subtask (subtask 5 is scored on subtask 1's
        files) and of ``--split``; without one, of the split whose examples it ranks (the skeleton's split rule)."""
        data, sub = Path(request.data), Path(request.submission)
        splits = None if request.split in (None, "all", ["all"]) else split_names(request.split)

        def fits(p: Path) -> bool:
            d, s, sp = name_fields(p.name)
            return d in (dataset or d, None) and s in (subtask or s, 1 if subtask == 5 else subtask, None) and \
                (splits is None or (sp or "test") in splits)

        files = [read_data(p) for p in self._files(data) if fits(p)]
        if len(files) > 1:
            named = example_ids(read_bytes(sub, what="a DSTC7 submission"))
            files = [f for f in files if named.intersection(f.ids)] or files
        if len(files) != 1:
            found = ", ".join(f.path.name for f in files[:4]) or "none"
            raise UsageError(f"{data}: {len(files)} data files fit {sub.name} (found: {found}): give --data FILE or --split")
        return files[0]

    def evaluate(self, request: Request) -> Evaluation:
        sub = Path(request.submission)
        dataset, subtask, _ = name_fields(sub.name)
        df = self._data_file(request, dataset, subtask)
        dataset = dataset or name_fields(df.path.name)[0] or self.name
        subtask = subtask or name_fields(df.path.name)[1] or df.scenario or 1
        split, group = name_fields(df.path.name)[2] or df.split or "test", f"{dataset}-{subtask}"
        if request.groups and not {group, str(subtask)} & set(request.groups):
            raise UsageError(f"{self.name}: the submission answers {group} only")
        none_ok = subtask in self.none_subtasks
        pool = None if subtask != 2 else frozenset().union(*df.options, *(df.correct or ())) if any(df.options) \
            else WholePool()
        allowed = [pool or frozenset(o) for o in df.options]
        notes = ["subtask 2: the data file lists no candidates, and the pool file is not read: ranked ids are not "
                 "checked against the pool"] if isinstance(pool, WholePool) else []
        lenient = bool(request.options.get("lenient"))
        gold, ids = self._gold(request, df, allowed, none_ok, lenient)
        problems = Capped(make=lambda message, severity: Problem("", "", message, severity, sub.name))
        at_data = {e: i for i, e in enumerate(df.ids)}
        ranked = read_rankings(read_bytes(sub, what="a DSTC7 submission"), sub.name,
                               {e: i for i, e in enumerate(ids)}, lambda i: allowed[i], lambda i: none_ok, problems,
                               strict=not lenient)
        for i in range(len(ids)):
            if i not in ranked and not problems.full("missing-dialog", "warning"):
                problems.append(Problem("missing-dialog", "", f"example {ids[i]} is not ranked: it scores 0", "warning",
                                        sub.name))
        n = [len(allowed[at_data[e]]) + none_ok if e in at_data else 0 for e in ids]
        table = None if gold is None else self._table(ids, gold, ranked, lenient, split, group, n)
        used = [df.path, *([request.keys] if request.keys else [])]
        identity = data_identity(used, df.path.parent, splits={split: used})
        info = {"path": str(sub), "kind": "file", "sha256": file_sha256(sub), "format": "dstc7-ranking"}
        return Evaluation(table=table, problems=problems.close(), splits=[split], groups=[group], data=identity,
                          submission=info, signature_fields={"mode": "lenient" if lenient else "strict"},
                          notes=notes + (list(LENIENT_NOTES) if lenient else []))

    def _gold(self, request: Request, df, allowed, none_ok: bool, lenient: bool):
        """(correct ids per scored example, the scored examples' ids): the data's examples, or in lenient mode with
        ``--keys`` the ground truth's (what the official script scores); (None, data ids) when only validating."""
        if not request.scoring:
            return None, df.ids
        keys = read_keys(request.keys) if request.keys is not None else None
        if keys is not None and lenient:
            return [[g.upper() for g in keys[e]] for e in keys], list(keys)
        if keys is not None:
            missing = [e for e in df.ids if e not in keys]
            if missing:
                raise UsageError(f"{request.keys}: no line for example {missing[0]} ({len(missing)} examples in all)")
        elif df.correct is None:
            raise UsageError(f"{df.path}: the correct answers are withheld (a test file): give --keys GROUND_TRUTH.tsv")
        out = []
        given = df.correct if keys is None else [list(dict.fromkeys(g.strip() for g in keys[e] if g.strip())) for e in df.ids]
        for e, c, a in zip(df.ids, given, allowed, strict=True):
            found = [g.upper() if lenient else g for g in c if g in a]  # lenient: as the official TSV would list them
            if not found and not none_ok:
                raise UsageError(f"{df.path}: example {e} has no correct answer among its options")
            out.append(found or [NONE])
        return out, df.ids

    def _table(self, ids, gold, ranked, lenient: bool, split: str, group: str, n_candidates) -> RankTable:
        rank, ap = np.zeros(len(ids), np.int32), np.zeros(len(ids))
        for i, listed in ranked.items():
            first: dict[str, int] = {}
            for j, c in enumerate(listed):
                if isinstance(c, str) and c not in first:
                    first[c] = j
            where = [first.get(g) for g in gold[i]]
            found = [q + 1 for q in where if q is not None]
            rank[i] = min(found, default=0)
            ap[i] = dstc7_official_ap(where, len(gold[i])) if lenient else average_precision(found, len(gold[i]))
        values = {"map": ap, **({"r@100": (rank > 0).astype(np.float64)} if lenient else {})}
        return RankTable.build(benchmark=self.name, split=split, group=group, item_ids=ids, gold_rank=rank,
                               n_candidates=n_candidates, values=values)


class DSTC8(DSTC7):
    """DSTC8 Track 2 subtask 1: DSTC7's files and rules, and ``"NONE"`` may be ranked in every example."""

    name = "dstc8"
    title = "DSTC8 Track 2 (NOESIS II) subtask 1 response selection, Ubuntu and Advising"
    data_name = "DSTC8 Track 2"
    group_descriptions = {f"{key}-1": f"{label}: the next utterance among 100 candidates, or NONE when none is "
                          "correct" for key, label in (("ubuntu", "Ubuntu IRC"), ("advising", "Advising"))}
    default_metrics = ("r@1", "r@10", "r@50", "mrr", "map", "noesis-score")
    none_subtasks = frozenset({1, 2, 3, 4, 5})
