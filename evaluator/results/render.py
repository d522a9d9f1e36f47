"""Renderings of a ScoreReport: JSON document, CSV, pandas, per-item JSONL, and rich tables.

Computation lives in :mod:`dialeval.results.report`; nothing here changes a number. Rounding: values are stored
rounded to 6 decimals in the records; tables show 4.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import TYPE_CHECKING

from dialeval import __version__

if TYPE_CHECKING:
    from dialeval.results.report import ScoreReport

RECORD_FIELDS = ("benchmark", "split", "group", "subset", "metric", "average", "value", "n", "signature")
"""Columns of a result record (JSON ``results`` entries, CSV header, DataFrame columns)."""


def report_json(report: ScoreReport) -> dict:
    return {
        "dialeval_version": __version__,
        "benchmark": report.benchmark,
        "signature": report.signature.format(),
        "data": report.data.to_json() if report.data is not None else None,
        "submission": report.submission,
        "splits": report.splits,
        "groups": report.groups,
        "metrics": report.metrics,
        "valid": report.valid,
        "counts": {"errors": len(report.errors), "warnings": len(report.warnings)},
        "problems": [p.to_json() for p in report.problems],
        "results": report.records,
        "rank_distribution": report.rank_distribution(),
        "notes": report.notes,
    }


def json_text(report: ScoreReport) -> str:
    return json.dumps(report_json(report), indent=2) + "\n"


def csv_text(report: ScoreReport) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=RECORD_FIELDS, lineterminator="\n")
    w.writeheader()
    for rec in report.records:
        w.writerow({**rec, "average": rec["average"] or "", "subset": rec["subset"] or ""})
    return buf.getvalue()


def dataframe(report: ScoreReport):
    import pandas as pd

    return pd.DataFrame(report.records, columns=list(RECORD_FIELDS))


def per_item_lines(report: ScoreReport) -> list[str]:
    t = report.table
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
            row[k] = round(float(v[i]), 6)
        lines.append(json.dumps(row))
    return lines


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def _label(m: str) -> str:
    return m.upper() if len(m) <= 5 else m


def print_table(report: ScoreReport, console=None) -> None:
    """A table per split (a row per group, its subsets, and the micro/macro aggregates) + the signature."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    metrics = report.metrics
    has_subsets = any(r["subset"] for r in report.records)
    if console is None:
        console = Console(highlight=False)
        # Not a terminal (a log, a pipe): never wrap a number or a metric name, whatever the width.
        needed = 16 + (18 if has_subsets else 0) + sum(max(9, len(_label(m)) + 3) for m in metrics) + 10
        if not console.is_terminal and needed > console.width:
            console = Console(highlight=False, width=needed)
    for split in report.splits + (["all"] if len(report.splits) > 1 else []):
        table = Table(title=f"{escape(split)}" + (" (all splits)" if split == "all" else ""), title_justify="left")
        table.add_column(report.group_label, no_wrap=True)
        if has_subsets:
            table.add_column("subset", no_wrap=True)
        for m in metrics:
            table.add_column(_label(m), justify="right", no_wrap=True)
        table.add_column("n", justify="right", no_wrap=True)
        rows: dict[tuple, dict] = defaultdict(dict)
        for r in report.records:
            if r["split"] == split:
                rows[(r["group"], r["subset"], r["average"])][r["metric"]] = r
        single = len({g for g, _, _ in rows if g != "all"}) == 1
        for (group, subset, avg), vals in rows.items():
            if group == "all" and single and split != "all":
                continue  # one group: its aggregate repeats it
            label = f"all ({avg})" if group == "all" else group
            lead = [escape(label)] + ([escape(subset or "")] if has_subsets else [])
            n = next(iter(vals.values()))["n"]
            table.add_row(*lead, *(_fmt(vals[m]["value"]) if m in vals else "-" for m in metrics), str(n),
                          end_section=(group == "all" and avg == "micro") or False)
        console.print(table)
    print_footer(report, console)


def print_footer(report: ScoreReport, console) -> None:
    from rich.markup import escape

    console.print(f"signature: {escape(report.signature.format())}", soft_wrap=True)
    if report.data is not None:
        line = f"data: {escape(report.data.location)} (hash {report.data.digest})"
        release = getattr(report.data, "release", None)
        if release == "modified":
            line += " — MODIFIED copy of a published release: not comparable with published numbers"
        elif release:
            line += f" — the published {escape(release)} release"
        if report.data.embedded_default:
            line += " — the embedded default challenge (simulated), not a published test set"
        console.print(line)
    for note in report.notes:
        console.print(escape(note), style="dim")


def print_summary(report: ScoreReport, console=None) -> None:
    """One compact table: a row per split (micro over its groups) and the overall micro/macro rows."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console(highlight=False)
    metrics = report.metrics
    table = Table(title=f"all {report.group_label}s", title_justify="left")
    for col in ["split", "average", *[_label(m) for m in metrics], "n"]:
        table.add_column(col, justify="left" if col in ("split", "average") else "right")
    rows: dict[tuple, dict] = defaultdict(dict)
    for r in report.records:
        if r["group"] == "all":
            rows[(r["split"], r["average"])][r["metric"]] = r
    for (split, avg), vals in rows.items():
        if split != "all" and avg == "macro":
            continue
        n = next(iter(vals.values()))["n"]
        table.add_row(split, avg, *(_fmt(vals[m]["value"]) if m in vals else "-" for m in metrics), str(n))
    console.print(table)
    print_footer(report, console)
