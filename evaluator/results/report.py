"""ScoreReport: compute tidy result records (one per number) from a RankTable and a list of metrics.

A record is ``{benchmark, split, group, subset, metric, average, value, n, signature}``. ``group`` is the
benchmark's task / file (``"1"`` ... ``"5"`` for DSTC6) or ``"all"`` for an aggregate; ``subset`` narrows a
group further (``"turn=2"``, ``"status=book"``) and is null otherwise; ``average`` is ``"micro"`` (pooled
over items) or ``"macro"`` (mean of the per-group values) on aggregates and null otherwise; ``n`` counts
the items behind the number: an item the metric leaves out (an embedding metric under ``empty:skip``, see
:meth:`dialeval.metrics.Metric.compute_left_out`) is not counted, and a number with no item left has no record. The report's serialised forms (JSON document, CSV, per-item JSONL, pandas) are
here, with every value at full precision: a report is a record, not a display. Only the rich tables of
:mod:`dialeval.results.render` (which reads reports, never the other way round) round for the eye.
The JSON form follows ``schemas/score-report.schema.json``.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dialeval import __version__
from dialeval.core.problems import Problem
from dialeval.core.signature import Signature

if TYPE_CHECKING:  # numpy is imported only when numbers are computed (validate never needs it)
    from dialeval.core.ranks import RankTable
    from dialeval.files.identity import DataIdentity
    from dialeval.metrics import Metric
    from dialeval.results.stats import BootstrapCI

RECORD_FIELDS = ("benchmark", "split", "group", "subset", "metric", "average", "value", "n", "signature")
"""Columns of a result record (JSON ``results`` entries, CSV header, DataFrame columns)."""
CI_FIELDS = ("ci_low", "ci_high")
"""With ``score --ci``: each record's interval, after its ``value`` (null on a macro average)."""


@dataclass
class ScoreReport:
    signature: Signature  # options shared by every record (no split/group/metric/avg)
    submission: dict
    splits: list[str]
    groups: list[str]
    valid: bool
    problems: list[Problem] = field(default_factory=list)
    table: RankTable | None = None
    data: DataIdentity | None = None
    metrics: list[str] = field(default_factory=list)
    group_label: str = "task"
    records: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines a reader must see under the numbers
    ci: BootstrapCI | None = None  # each record's bootstrap interval, when asked for (`score --ci`)
    _metric_of: dict = field(default_factory=dict, repr=False)  # the metrics computed, by name (for intervals)

    @property
    def benchmark(self) -> str:
        return self.signature.benchmark

    @property
    def ranks(self) -> RankTable | None:
        """The per-item rank table (alias kept for the 0.1 API)."""
        return self.table

    # ---- building -------------------------------------------------------------------------------
    def compute(self, metrics: list[Metric], subsets=None, ci: BootstrapCI | None = None) -> ScoreReport:
        """Fill ``records``: per group, per split (micro + macro over groups) and across splits.

        ``subsets(table) -> [(label, mask)]`` optionally adds breakdowns inside each group (e.g. by turn).
        ``ci``: give each record (but a macro average, a mean of means) its percentile bootstrap interval over the
        record's units, ``ci_low``/``ci_high``, and sign how (:meth:`BootstrapCI.signature_fields`).
        """
        self.records = []
        self.metrics = [m.name for m in metrics]
        self.ci = ci
        t = self.table
        if t is None or not self.valid:
            return self
        if ci is not None:
            self.signature = self.signature.with_fields(**ci.signature_fields())
        self._metric_of = {m.name: m for m in metrics}
        per_group: list[tuple[str, str, dict[str, float], int]] = []
        for split in self.splits:
            in_split = t.where(split=split)
            split_groups = []
            for group in self.groups:
                mask = in_split & t.where(group=group)
                if not mask.any():
                    continue
                sub = t.take(mask)
                vals = _values(metrics, sub)
                self._add(split, group, None, None, vals, len(sub), _units(metrics, sub), sub)
                split_groups.append((split, group, vals, len(sub)))
                for label, smask in (subsets(sub) if subsets else []):
                    if smask.any():
                        part = sub.take(smask)
                        self._add(split, group, label, None, _values(metrics, part), len(part), _units(metrics, part),
                                  part)
            per_group.extend(split_groups)
            if split_groups:  # always present, so 'all' can be looked up whatever the groups
                self._aggregate(split, split_groups, t.take(in_split), metrics)
        if len(self.splits) > 1 and per_group:
            self._aggregate("all", per_group, t, metrics)
        return self

    def _aggregate(self, split, groups, table, metrics) -> None:
        import numpy as np

        n = len(table)
        # one group holding every row: its values are the micro average already (same rows in the same order)
        micro = groups[0][2] if len(groups) == 1 and groups[0][3] == n else _values(metrics, table)
        units = _units(metrics, table)
        self._add(split, "all", None, "micro", micro, n, units, table)
        macro = {}
        for m in metrics:  # over the groups that have a value (one whose items were all left out has none)
            per_group = [g[2][m.name][0] for g in groups if g[2][m.name][1] < g[3]]
            macro[m.name] = (float(np.mean(per_group)) if per_group else float("nan"), micro[m.name][1])
        self._add(split, "all", None, "macro", macro, n, units)

    def _add(self, split, group, subset, average, values: dict[str, tuple[float, int]], n: int,
             units: dict[str, int] | None = None, table: RankTable | None = None) -> None:
        """One record per metric; ``values[metric]`` is ``(value, items left out)``, ``n`` the items; a record's ``n``
        is its metric's units (``units``: conversations for per-dialog accuracy) less those left out. ``table``:
        the rows behind the records, for their intervals (``ci``; a macro average has none)."""
        data = self.data.label(split) if self.data is not None else None
        base = self.signature.with_fields(data=data) if data else self.signature
        for metric, (value, left_out) in values.items():
            if left_out and left_out == n:
                continue  # every item left out: no number (the report's notes say how many were)
            fields = {"split": split, self.group_label: group}
            if subset:
                fields["subset"] = subset
            sig = base.with_fields(**fields, metric=metric, avg=average)
            size = (units or {}).get(metric, n)
            record = {
                "benchmark": self.benchmark,
                "split": split,
                "group": group,
                "subset": subset,
                "metric": metric,
                "average": average,
                "value": float(value),  # full precision: rounding is for tables
                "n": size - left_out,
                "signature": sig.format(),
            }
            if self.ci is not None:
                low, high = self._interval(metric, float(value), table)
                record.update(ci_low=low, ci_high=high)
                record = {k: record[k] for k in self.columns}  # the interval right after the value it bounds
                if low is not None:  # the unit resampled joins the signature, as `compare` signs it
                    unit = "conversation" if self._metric_of[metric].level == "conversation" else "item"
                    record["signature"] = sig.with_fields(unit=unit).format()
            self.records.append(record)

    def _interval(self, metric: str, value: float, table: RankTable | None) -> tuple[float | None, float | None]:
        """``(low, high)`` of the record's percentile bootstrap interval; ``(None, None)`` without rows (a macro
        average)."""
        if table is None:
            return None, None
        from dialeval.results import stats

        units = stats.unit_values(table, self._metric_of[metric])
        iv = stats.interval(units.values, units.clusters, self.ci.resamples, self.ci.seed, self.ci.level,
                            estimate=value)
        return iv.low, iv.high

    # ---- access ---------------------------------------------------------------------------------
    def value(self, metric: str, split: str | None = None, group: int | str = "all", average: str | None = None,
              subset: str | None = None):
        """One number, e.g. ``report.value("p@1", "tst1", 3)`` or ``report.value("mrr", average="micro")``.

        Without ``split``: the only split, or the cross-split aggregate. Without ``group``: the split's
        aggregate (micro), or the only group when the split has one.
        """
        split = split or (self.splits[0] if len(self.splits) == 1 else "all")
        group = str(group)
        if metric == "per-dialog":
            metric = "per-dialog-accuracy"
        rows = [r for r in self.records if r["split"] == split and r["metric"] == metric and r["subset"] == subset]
        if group == "all" and average is None:
            if not any(r["group"] == "all" for r in rows) and len({r["group"] for r in rows}) == 1:
                group = rows[0]["group"]
            else:
                average = "micro"
        for rec in rows:
            if rec["group"] == group and rec["average"] == average:
                return rec["value"]
        raise KeyError(f"no {metric} for split={split} group={group} average={average}")

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error" and p.code]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning" and p.code]

    @property
    def counts(self) -> dict[str, int]:
        """How many errors and warnings there are in all: a summary line stands for the ``count`` it does not list
        one by one (the 123 missing items behind 20 listed ones and their summary), so the totals agree with the
        stderr listing's."""
        return {"errors": sum(p.count for p in self.errors), "warnings": sum(p.count for p in self.warnings)}

    def rank_distribution(self) -> list[dict]:
        """Counts of gold ranks per split and group (rank-based benchmarks only)."""
        out = []
        t = self.table
        if t is None or not self.valid or not t.gold_rank.any() and t.values:  # value-only benchmarks have no ranks
            return out
        from dialeval.metrics.ranking import rank_distribution  # numpy: only when there are numbers

        for split in self.splits:
            for group in self.groups:
                m = (t.split == split) & (t.group == group)
                if m.any():
                    for rank, count in rank_distribution(t.gold_rank[m]).items():
                        out.append({"split": split, "group": group, "rank": rank, "count": count})
        return out

    # ---- serialised forms --------------------------------------------------------------------
    @property
    def listed_problems(self) -> list[Problem]:
        """The problems that have a code (those a report counts); see :attr:`not_listed`."""
        return [p for p in self.problems if p.code]

    @property
    def not_listed(self) -> list[str]:
        """Notes without a problem code, such as a reader's "more problems not listed": never counted."""
        return [p.message for p in self.problems if not p.code]

    @property
    def columns(self) -> tuple[str, ...]:
        """A record's fields in order: :data:`RECORD_FIELDS`, with :data:`CI_FIELDS` after ``value`` under ``ci``."""
        return RECORD_FIELDS if self.ci is None else (*RECORD_FIELDS[:7], *CI_FIELDS, *RECORD_FIELDS[7:])

    def to_json(self) -> dict:
        ci = {"ci": self.ci.to_json()} if self.ci is not None else {}  # only when asked for: reports stay as they were
        return {
            "dialeval_version": __version__,
            "benchmark": self.benchmark,
            "signature": self.signature.format(),
            "data": self.data.to_json() if self.data is not None else None,
            "submission": self.submission,
            "splits": self.splits,
            "groups": self.groups,
            "metrics": self.metrics,
            "valid": self.valid,
            "counts": self.counts,
            "problems": [p.to_json() for p in self.listed_problems],
            "not_listed": self.not_listed,
            "results": self.records,
            "rank_distribution": self.rank_distribution(),
            "notes": self.notes,
            **ci,
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"

    def to_csv_text(self) -> str:
        buf = io.StringIO()
        import csv  # only for --csv

        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        w.writeheader()
        for rec in self.records:  # csv writes floats with repr: every digit, like the JSON
            w.writerow({**rec, "average": rec["average"] or "", "subset": rec["subset"] or ""})
        return buf.getvalue()

    def to_dataframe(self):
        """The records as a pandas DataFrame (one row per number), columns as in the JSON records."""
        import pandas as pd

        return pd.DataFrame(self.records, columns=list(self.columns))

    def per_item_lines(self) -> list[str]:
        """JSONL rows (item id, split, group, candidates, gold rank). Reveals the key: organizers only."""
        t = self.table
        if t is None:
            return []
        lines = []
        for i in range(len(t)):
            row = {"item_id": t.item_id[i], "split": t.split[i], "group": t.group[i],
                   "conversation_id": t.conversation_id[i], "n_candidates": int(t.n_candidates[i]),
                   "gold_rank": int(t.gold_rank[i])}
            if t.ties[i]:
                row["ties"] = int(t.ties[i])
            for k, v in t.values.items():
                row[k] = None if v[i] != v[i] else float(v[i])  # NaN: the metric left the item out
            lines.append(json.dumps(row))
        return lines


def _values(metrics: list[Metric], table: RankTable) -> dict[str, tuple[float, int]]:
    return {m.name: m.compute_left_out(table) for m in metrics}


def _units(metrics: list[Metric], table: RankTable) -> dict[str, int]:
    """What each metric is a mean over: the table's rows, or its conversations for a conversation-level metric (per-dialog
    accuracy is a share of conversations, so its ``n`` counts them, as ``rank`` and ``compare`` do)."""
    if not any(m.level == "conversation" for m in metrics):
        return {}
    import numpy as np

    keys = np.char.add(np.char.add(table.split.astype(str), "\x1f"), table.conversation_id.astype(str))
    conversations = len(np.unique(keys))
    return {m.name: conversations for m in metrics if m.level == "conversation"}


def version() -> str:
    return __version__
