"""Rich tables of a ScoreReport for the terminal: the only place a value is rounded (to 4 decimals).

Computation and the serialised forms (JSON, CSV, per-item JSONL, pandas, all at full precision) live in
:mod:`dialeval.results.report`; this module reads reports and is never imported by it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from dialeval.metrics import label as _label

if TYPE_CHECKING:
    from dialeval.results.report import ScoreReport


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def _cell(record: dict) -> str:
    """A record's value, and its interval when it has one (``score --ci``)."""
    if record.get("ci_low") is None:
        return _fmt(record["value"])
    return f"{_fmt(record['value'])} [{_fmt(record['ci_low'])}, {_fmt(record['ci_high'])}]"


def print_table(report: ScoreReport, console=None) -> None:
    """A table per split (a row per group, its subsets, and the micro/macro aggregates) + the signature."""
    from rich.markup import escape
    from rich.table import Table

    from dialeval.core.termsafe import print_table, table_console

    metrics = report.metrics
    has_subsets = any(r["subset"] for r in report.records)
    console = console or table_console()  # piped: as wide as the lines, unless COLUMNS says otherwise
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
            table.add_row(*lead, *(_cell(vals[m]) if m in vals else "-" for m in metrics), str(n),
                          end_section=(group == "all" and avg == "micro") or False)
        print_table(console, table)  # never a number or a metric name cut, whatever the width
    if report.ci is not None:
        ci = report.ci
        legend = (f"[lo, hi]: {ci.level * 100:g} % percentile bootstrap interval ({ci.resamples} resamples of the items, "
                  f"whole conversations where there are any; seed {ci.seed}); a macro average has none")
        console.print(escape(legend), style="dim", soft_wrap=True)
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
        elif getattr(report.data, "sample", False):
            line += " — dialeval's sample data (constructed), not a published test set"
        console.print(line)
    # a changed published file is already said by the data line above and, by the command, once on stderr
    said = set(report.data.warnings()) if report.data is not None else set()
    for note in report.notes:
        if note in said:
            continue
        console.print(escape(note), style="dim", soft_wrap=True)  # a note's columns stay lined up, never wrapped


def print_summary(report: ScoreReport, console=None) -> None:
    """One compact table: a row per split (micro over its groups) and the overall micro/macro rows."""
    from rich.table import Table

    from dialeval.core.termsafe import print_table, table_console

    console = console or table_console()
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
    print_table(console, table)
    print_footer(report, console)
