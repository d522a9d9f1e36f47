"""ScoreReport: tidy result records with signatures, and their renderings (rich table, JSON, CSV, pandas).

A record is one number: ``{split, task, metric, average, value, n, signature}``. ``task`` is 1-6 for a
test file, or ``"all"`` for an aggregate; ``average`` is ``"micro"`` (pooled over items) or ``"macro"``
(mean of the per-file values) on aggregates and null otherwise. The JSON form follows
``schemas/score-report.schema.json``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialeval import __version__
from dialeval.problems import Problem
from dialeval.signature import Signature

if TYPE_CHECKING:  # numpy is imported only when numbers are computed (validate never needs it)
    import numpy as np

    from dialeval.ranks import GoldRanks

METRICS = ("p@1", "p@2", "p@5", "mrr")
RECORD_FIELDS = ("split", "task", "metric", "average", "value", "n", "signature")


def metric_values(gold_rank: np.ndarray, conversation_id: np.ndarray | None = None) -> dict[str, float]:
    """Every reported metric of one group of predictions."""
    from dialeval.metrics.ranking import hit_rate_at_k, mrr, per_dialog_accuracy
    out = {
        "p@1": hit_rate_at_k(gold_rank, 1),
        "p@2": hit_rate_at_k(gold_rank, 2),
        "p@5": hit_rate_at_k(gold_rank, 5),
        "mrr": mrr(gold_rank),
    }
    if conversation_id is not None:
        out["per-dialog"] = per_dialog_accuracy(gold_rank, conversation_id)
    return out


@dataclass
class ScoreReport:
    signature: Signature  # options shared by every record (no split/task/metric/avg)
    submission: dict
    splits: list[str]
    tasks: list[int]
    valid: bool
    problems: list[Problem] = field(default_factory=list)
    ranks: GoldRanks | None = None
    records: list[dict] = field(default_factory=list)

    # ---- building -------------------------------------------------------------------------------
    def compute(self) -> ScoreReport:
        """Fill ``records`` from ``ranks``: per file, per split (micro + macro) and across splits."""
        self.records = []
        r = self.ranks
        if r is None or not self.valid:
            return self
        per_dialog = r.has_conversations()
        files: list[tuple[str, int, dict[str, float], int]] = []
        for split in self.splits:
            in_split = r.split == split
            split_files = []
            for task in self.tasks:
                m = in_split & (r.task == task)
                if not m.any():
                    continue
                vals = metric_values(r.gold_rank[m], r.conversation_id[m] if per_dialog else None)
                n = int(m.sum())
                self._add(split, task, None, vals, n)
                split_files.append((split, task, vals, n))
            files.extend(split_files)
            if split_files:
                m = in_split
                self._aggregate(split, split_files, r.gold_rank[m], r.conversation_id[m] if per_dialog else None)
        if len(self.splits) > 1 and files:
            self._aggregate("all", files, r.gold_rank, r.conversation_id if per_dialog else None)
        return self

    def _aggregate(self, split, files, gold_rank, conv) -> None:
        import numpy as np

        n = int(gold_rank.shape[0])
        self._add(split, "all", "micro", metric_values(gold_rank, conv), n)
        macro = {k: float(np.mean([f[2][k] for f in files])) for k in files[0][2]}
        self._add(split, "all", "macro", macro, n)

    def _add(self, split, task, average, values: dict[str, float], n: int) -> None:
        for metric, value in values.items():
            sig = self.signature.with_fields(split=split, task=task, metric=metric, avg=average)
            self.records.append(
                {
                    "split": split,
                    "task": task,
                    "metric": metric,
                    "average": average,
                    "value": round(float(value), 6),
                    "n": n,
                    "signature": sig.format(),
                }
            )

    # ---- access ---------------------------------------------------------------------------------
    def value(self, metric: str, split: str | None = None, task: int | str = "all", average: str | None = None):
        """Look one number up, e.g. ``report.value("p@1", "tst1", 3)`` or ``report.value("mrr", average="micro")``."""
        split = split or (self.splits[0] if len(self.splits) == 1 else "all")
        if task == "all" and average is None:
            average = "micro"
        for rec in self.records:
            if rec["split"] == split and rec["task"] == task and rec["metric"] == metric and rec["average"] == average:
                return rec["value"]
        raise KeyError(f"no {metric} for split={split} task={task} average={average}")

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def rank_distribution(self) -> list[dict]:
        from dialeval.metrics.ranking import rank_distribution

        out = []
        r = self.ranks
        if r is None or not self.valid:
            return out
        for split in self.splits:
            for task in self.tasks:
                m = (r.split == split) & (r.task == task)
                if m.any():
                    for rank, count in rank_distribution(r.gold_rank[m]).items():
                        out.append({"split": split, "task": task, "rank": rank, "count": count})
        return out

    # ---- renderings -----------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "dialeval_version": __version__,
            "signature": self.signature.format(),
            "submission": self.submission,
            "splits": self.splits,
            "tasks": self.tasks,
            "valid": self.valid,
            "counts": {"errors": len(self.errors), "warnings": len(self.warnings)},
            "problems": [p.to_json() for p in self.problems],
            "results": self.records,
            "rank_distribution": self.rank_distribution(),
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n"

    def to_csv_text(self) -> str:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=RECORD_FIELDS, lineterminator="\n")
        w.writeheader()
        for rec in self.records:
            w.writerow({**rec, "average": rec["average"] or ""})
        return buf.getvalue()

    def to_dataframe(self):
        """The records as a pandas DataFrame (one row per number), columns as in the JSON records."""
        import pandas as pd

        return pd.DataFrame(self.records, columns=list(RECORD_FIELDS))

    def per_item_lines(self) -> list[str]:
        """JSONL rows (dialog id, split, task, candidates, gold rank). Reveals the key: organizers only."""
        r = self.ranks
        if r is None:
            return []
        return [
            json.dumps(
                {"dialog_id": d, "split": s, "task": int(t), "n_candidates": int(n), "gold_rank": int(g)}
            )
            for d, s, t, n, g in zip(r.dialog_id, r.split, r.task, r.n_candidates, r.gold_rank)
        ]
