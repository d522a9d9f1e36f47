"""``dialeval validate`` and ``dialeval score``: parse options, call :mod:`dialeval.api`, print."""

from __future__ import annotations

import sys
from collections import defaultdict

import click

from dialeval.errors import UsageError
from dialeval.problems import CODES, Problem

SCREEN_PER_CODE = 5


def _tasks(values: tuple[str, ...]) -> list[int] | None:
    out: list[int] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            if "-" in part:
                a, _, b = part.partition("-")
                if not (a.isdigit() and b.isdigit()) or int(a) > int(b):
                    raise UsageError(f"--task: cannot read {part!r} (use e.g. 1,3 or 1-5)")
                out.extend(range(int(a), int(b) + 1))
            elif part.isdigit():
                out.append(int(part))
            else:
                raise UsageError(f"--task: cannot read {part!r} (use e.g. 1,3 or 1-5)")
    return sorted(set(out)) or None


def common_options(f):
    f = click.option("--challenge", type=click.Path(file_okay=False), default=None,
                     help="Challenge directory (tst1/ ... folders). Default: $DIALEVAL_CHALLENGE, else the embedded default.")(f)
    f = click.option("--split", default=None,
                     help="Split(s) to check: tst1, 'tst1,tst2' or 'all'. Default: all splits for a directory or "
                          "archive; for one file, the challenge's only split.")(f)
    f = click.option("--task", "task", multiple=True, help="Only these tasks, e.g. --task 1 or --task 1,3-5.")(f)
    f = click.option("--lenient", is_flag=True,
                     help="Official-compatible mode: reproduce the official DSTC6 scorer, listing every quirk applied.")(f)
    f = click.option("--candidate-limit", type=int, default=10, show_default=True,
                     help="Slots per dialog in --lenient mode (the official nb_candidate).")(f)
    f = click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schemas/score-report).")(f)
    f = click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the report (JSON or CSV) to FILE.")(f)
    f = click.option("--max-problems", type=int, default=SCREEN_PER_CODE, show_default=True,
                     help="Problems shown on screen per code (all of them are in --json).")(f)
    return f


def _print_problems(problems: list[Problem], per_code: int) -> None:
    if not problems:
        return
    stream = click.get_text_stream("stderr")

    def write(text: str) -> None:  # ids may hold lone surrogates (valid JSON escapes) no encoder accepts
        stream.write(text.encode("utf-8", "backslashreplace").decode("utf-8"))

    by_code: dict[tuple[str, str], list[Problem]] = defaultdict(list)
    for p in problems:
        by_code[(p.severity, p.code)].append(p)
    n_err = sum(1 for p in problems if p.severity == "error")
    n_warn = len(problems) - n_err
    write(f"{n_err} error(s), {n_warn} warning(s)\n")
    for (sev, code), items in sorted(by_code.items(), key=lambda kv: (kv[0][0] != "error", kv[0][1])):
        write(f"  {sev} [{code}] x{len(items)}: {CODES.get(code, '')}\n")
        for p in items[:per_code]:
            write(f"    {p.where()}: {p.message}\n")
        if len(items) > per_code:
            write(f"    ... and {len(items) - per_code} more (all are listed in --json)\n")


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def render_table(report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    metrics = ["p@1", "p@2", "p@5", "mrr"]
    if any(r["metric"] == "per-dialog" for r in report.records):
        metrics.append("per-dialog")
    for split in report.splits + (["all"] if len(report.splits) > 1 else []):
        table = Table(title=f"{split}" + (" (all splits)" if split == "all" else ""), title_justify="left")
        table.add_column("task")
        for m in metrics:
            table.add_column(m.upper() if m != "per-dialog" else "per-dialog", justify="right")
        table.add_column("n", justify="right")
        rows: dict[tuple, dict] = defaultdict(dict)
        for r in report.records:
            if r["split"] == split:
                rows[(r["task"], r["average"])][r["metric"]] = r
        for (task, avg), vals in rows.items():
            label = f"task {task}" if task != "all" else f"all ({avg})"
            n = next(iter(vals.values()))["n"]
            table.add_row(label, *(_fmt(vals[m]["value"]) if m in vals else "-" for m in metrics), str(n),
                          end_section=(task == "all" and avg == "micro") or False)
        console.print(table)
    console.print(f"signature: {report.signature.format()}")
    console.print("(P@k is a hit rate: gold among the top k, over the answer-key items; micro pools items, macro "
                  "averages per file)", style="dim")


def render_summary(report) -> None:
    """One compact table: a row per split (micro over its tasks) and the overall micro/macro rows."""
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    metrics = ["p@1", "p@2", "p@5", "mrr"]
    table = Table(title="all tasks", title_justify="left")
    for col in ["split", "average", *[m.upper() for m in metrics], "n"]:
        table.add_column(col, justify="left" if col in ("split", "average") else "right")
    rows: dict[tuple, dict] = defaultdict(dict)
    for r in report.records:
        if r["task"] == "all":
            rows[(r["split"], r["average"])][r["metric"]] = r
    for (split, avg), vals in rows.items():
        if split != "all" and avg == "macro":
            continue
        n = next(iter(vals.values()))["n"]
        table.add_row(split, avg, *(_fmt(vals[m]["value"]) if m in vals else "-" for m in metrics), str(n))
    console.print(table)
    console.print(f"signature: {report.signature.format()}")


def _emit(report, as_json: bool, as_csv: bool, out: str | None) -> None:
    from dialeval.formats.jsonio import atomic_write_text

    if out:
        text = report.to_csv_text() if (as_csv or out.endswith(".csv")) and not as_json else report.to_json_text()
        atomic_write_text(out, text)
        click.echo(f"report written to {out}", err=True)
    if as_json and not out:
        sys.stdout.write(report.to_json_text())
    elif as_csv and not out:
        sys.stdout.write(report.to_csv_text())


@click.command("validate")
@click.argument("submission", type=click.Path())
@common_options
def validate_cmd(submission, challenge, split, task, lenient, candidate_limit, as_json, out, max_problems):
    """Check SUBMISSION (a result JSON, a directory in the official layout, or a .tgz) against the test files.

    Needs no answer keys. Exit 0 valid, 1 invalid, 2 usage or I/O error.
    """
    from dialeval.api import validate

    report = validate(submission, split, challenge, _tasks(task), lenient, candidate_limit)
    _emit(report, as_json, False, out)
    if not as_json or out:
        _print_problems(report.problems, max_problems)
        n = len(report.warnings)
        status = "valid" if report.valid else "INVALID"
        click.echo(f"{submission}: {status} ({len(report.errors)} error(s), {n} warning(s); "
                   f"split {', '.join(report.splits)}; mode {'lenient' if lenient else 'strict'})")
    return 0 if report.valid else 1


@click.command("score")
@click.argument("submission", type=click.Path())
@common_options
@click.option("--keys", type=click.Path(file_okay=False), default=None,
              help="Directory holding the answer keys (<stem>.answers.json), if not beside the test files.")
@click.option("--csv", "as_csv", is_flag=True, help="Print the results as CSV (same columns as the JSON records).")
@click.option("--per-item", type=click.Path(dir_okay=False), default=None,
              help="Write JSONL (dialog id, task, gold rank) to FILE. ORGANIZERS ONLY: it reveals the answer key.")
def score_cmd(submission, challenge, split, task, lenient, candidate_limit, as_json, out, max_problems, keys, as_csv,
              per_item):
    """Validate and score SUBMISSION: P@1, P@2, P@5 and MRR per task file, per split (micro and macro).

    Exit 0 scored, 1 invalid (strict mode) or a submission the official scorer would crash on (--lenient),
    2 usage or I/O error.
    """
    from dialeval.api import score

    report = score(submission, split, challenge, keys, _tasks(task), lenient, candidate_limit)
    _emit(report, as_json, as_csv, out)
    if not (as_json or as_csv) or out:
        _print_problems(report.problems, max_problems)
        if report.valid:
            render_table(report)
        else:
            click.echo(f"{submission}: INVALID, not scored ({len(report.errors)} error(s)); "
                       "see above, or --json for the full list", err=True)
    if per_item and report.valid:
        from dialeval.formats.jsonio import atomic_write_text

        atomic_write_text(per_item, "".join(line + "\n" for line in report.per_item_lines()))
    return 0 if report.valid else 1
