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

from dialeval.benchmarks.base import (
    Benchmark,
    Evaluation,
    Option,
    Request,
    data_identity,
    file_sha256,
    parse_split_names,
)
from dialeval.core.errors import UsageError
from dialeval.core.problems import Capped, Problem
from dialeval.core.ranks import RankTable
from dialeval.files.read import read_bytes
from dialeval.formats.dstc7 import NONE, name_fields, read_data, read_keys, read_rankings
from dialeval.metrics.ranking import average_precision, dstc7_official_ap

LENIENT_NOTES = (
    "lenient: R@k counts the examples whose first listed correct id is within the top k, over the ground truth's "
    "examples; R@100 counts a correct id listed at any position",
    "lenient: MAP is evaluations/metrics.py's, the mean over the correct ids in ground-truth order of (index + 1) / "
    "(submitted position + 1): not average precision, and it can exceed 1",
    "lenient: an example ranked twice counts its last ranking, an id listed twice its first position; ids outside "
    "the example are ignored, confidences are not read",
    "lenient: only the ground truth's ids are upper-cased: a submitted id in another case matches nothing",
)


class DSTC7(Benchmark):
    name = "dstc7"
    title = "DSTC7 Track 1 (NOESIS) response selection, subtasks 1-5, Ubuntu and Advising"
    group_label = "subtask"
    split_names = ("train", "dev", "test")
    default_metrics = ("r@1", "r@10", "r@50", "r@100", "mrr", "map", "noesis-score")
    submission_formats = ("ranking JSON [{example-id, candidate-ranking: [{candidate-id, confidence}]}]",)
    options = (Option("lenient", "dstc7, dstc8: the official evaluations/metrics.py numbers, listing its definitions."),)
    separate_keys = True
    none_subtasks: frozenset[int] = frozenset({4})

    def _files(self, data: Path) -> list[Path]:
        if not data.is_dir():
            return [data]
        # released data files name their dataset and split (a run such as Ubuntu_subtask_1.json names no split)
        return sorted(p for p in data.iterdir() if p.suffix == ".json" and None not in name_fields(p.name)[::2])

    def splits(self, data: Path) -> list[str]:
        return sorted({name_fields(p.name)[2] or "test" for p in self._files(Path(data))})

    def evaluate(self, request: Request) -> Evaluation:
        data, sub = Path(request.data), Path(request.submission)
        dataset, subtask, _ = name_fields(sub.name)
        splits = None if request.split in (None, "all", ["all"]) else parse_split_names(request.split)

        def fits(p: Path) -> bool:  # subtask 5 is scored on subtask 1's files
            d, s, sp = name_fields(p.name)
            return (dataset is None or d in (dataset, None)) and (splits is None or (sp or "test") in splits) and \
                (subtask is None or s in (subtask, 1 if subtask == 5 else subtask, None))

        files = [p for p in self._files(data) if fits(p)]
        if len(files) != 1:
            found = ", ".join(p.name for p in files[:4]) or "none"
            raise UsageError(f"{data}: {len(files)} data files fit {sub.name} (found: {found}): give --data FILE or --split")
        df = read_data(files[0])
        dataset = dataset or name_fields(df.path.name)[0] or self.name
        subtask = subtask or name_fields(df.path.name)[1] or df.scenario or 1
        split = name_fields(df.path.name)[2] or df.split or "test"
        group = f"{dataset}-{subtask}"
        if request.groups and group not in request.groups and str(subtask) not in request.groups:
            raise UsageError(f"{self.name}: the submission answers {group} only")
        none_ok = subtask in self.none_subtasks
        pool = frozenset().union(*df.options, *(df.correct or ())) if subtask == 2 else None
        allowed = [pool or frozenset(o) for o in df.options]
        lenient = bool(request.options.get("lenient"))
        gold, ids = self._gold(request, df, allowed, none_ok, lenient)
        problems = Capped(make=lambda message, severity: Problem("", "", message, severity, sub.name))
        index = {e: i for i, e in enumerate(ids)}
        at_data = {e: i for i, e in enumerate(df.ids)}
        raw = read_bytes(sub, what="a DSTC7 submission")
        ranked = read_rankings(raw, sub.name, index if lenient else at_data, lambda i: allowed[i], lambda i: none_ok,
                               problems, strict=not lenient)
        del raw
        for i in range(len(ids)):
            if i not in ranked and not problems.full("missing-dialog", "warning"):
                problems.append(Problem("missing-dialog", "", f"example {ids[i]} is not ranked: it scores 0", "warning",
                                        sub.name))
        table = None
        if gold is not None:
            n = [len(allowed[at_data[e]]) + none_ok if e in at_data else 0 for e in ids]
            table = self._table(ids, gold, ranked, lenient, split, group, n)
        used = [df.path, *([request.keys] if request.keys else [])]
        identity = data_identity(used, data if data.is_dir() else data.parent, splits={split: used})
        info = {"path": str(sub), "kind": "file", "sha256": file_sha256(sub), "format": "dstc7-ranking"}
        return Evaluation(table=table, problems=problems.close(), splits=[split], groups=[group], data=identity,
                          submission=info, signature_fields={"mode": "lenient" if lenient else "strict"},
                          notes=list(LENIENT_NOTES) if lenient else [])

    def _gold(self, request: Request, df, allowed, none_ok: bool, lenient: bool):
        """(correct ids per scored example, the scored examples' ids): the data's examples (strict) or the ground
        truth's (lenient, which scores what the official script scores); (None, data ids) when only validating."""
        if not request.scoring:
            return None, df.ids
        if request.keys is not None:
            keys = read_keys(request.keys)
            if lenient:
                return [[g.upper() for g in keys[e]] for e in keys], list(keys)
            missing = [e for e in df.ids if e not in keys]
            if missing:
                raise UsageError(f"{request.keys}: no line for example {missing[0]} ({len(missing)} examples in all)")
            correct = [keys[e] for e in df.ids]
        elif df.correct is None:
            raise UsageError(f"{df.path}: the correct answers are withheld (a test file): give --keys GROUND_TRUTH.tsv")
        else:
            correct = df.correct
        out = []
        for e, c, a in zip(df.ids, correct, allowed, strict=True):
            found = [g for g in c if g in a]
            if not found and not none_ok:
                raise UsageError(f"{df.path}: example {e} has no correct answer among its options")
            out.append(found or [NONE])
        if lenient:  # the data's own correct ids, as the official TSV would list them
            out = [[g.upper() for g in c] for c in out]
        return out, df.ids

    def _table(self, ids, gold, ranked, lenient: bool, split: str, group: str, n_candidates) -> RankTable:
        rank = np.zeros(len(ids), np.int32)
        ap = np.zeros(len(ids))
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
    default_metrics = ("r@1", "r@10", "r@50", "mrr", "map", "noesis-score")
    none_subtasks = frozenset({1, 2, 3, 4, 5})
