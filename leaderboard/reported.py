"""Reported results: numbers without a submission (a paper's table, a challenge overview), imported as-is.

Input: CSV with columns ``team``, ``split``, ``task`` (or ``group``), one column per metric (``p@1``, ``p@2``,
``mrr``, ...), ``source`` (where the numbers were published) and optionally ``published_band`` (the group
the source put the team in) and ``system``; or a JSON list of objects with the same keys. Each team becomes
one run of kind ``reported`` on the given board: its records are the published per-(split, task) numbers
plus macro averages (mean over the files, as overviews report them; there are no item counts to pool).
They are shown with a "reported" badge and never re-scored or banded. Importing the same file again
changes nothing (the grading key is a hash of the team's rows).

Every other column must be a metric of the benchmark (:meth:`Benchmark.own_metric`; any case, stored under its
registered name): a typo is never imported as one more metric. All problems of a file are said at once, each at
its ``file:line:column`` (JSON: ``file#/pointer``), and nothing is imported (exit 1).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from collections import defaultdict
from pathlib import Path

from dialeval import __version__
from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.core.errors import SubmissionFault, UsageError, did_you_mean
from dialeval.core.problems import counted
from dialeval.leaderboard.registry import team_key

META_COLUMNS = {"team", "system", "split", "task", "group", "source", "published_band", "note"}
NAME_MAX = 120  # as schemas/team.schema.json: a team or system name, at most this long, no control characters
_CONTROL = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


class InvalidReportedFile(SubmissionFault):
    """A reported-results file with wrong rows or columns: every problem, one line each (``file:line:column`` in
    a CSV, ``file#/pointer`` in JSON), said at once before this error; nothing is imported (exit 1: the file's
    fault, as a submission's)."""

    def __init__(self, path: Path, problems: list[str], columns: str = ""):
        self.details = tuple(problems)
        super().__init__(f"{path}: {counted(len(problems), 'problem')}, nothing imported{columns}")


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")  # RFC 6901


def _table(path: Path) -> tuple[list[str], list[tuple[str, dict]], list[tuple[str, str]], list[str]]:
    """``(column names, [(where, row)], [(where, name)] per column, problems)`` of a CSV or JSON file; ``where``
    is ``file:line`` (a row) / ``file:line:column`` (a column) in a CSV, a JSON pointer in JSON."""
    from dialeval.files.read import read_text

    text = read_text(path, what="a CSV or JSON file of reported results")
    if path.suffix.lower() == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno})") from None
        except RecursionError:
            raise UsageError(f"{path}: nested too deeply (expected a JSON list of flat objects)") from None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UsageError(f"{path}: expected a JSON list of objects")
        if not rows:
            raise UsageError(f"{path}: no rows")
        columns: dict[str, str] = {}
        for i, r in enumerate(rows):
            for k in r:
                columns.setdefault(k, f"{path}#/{i}/{_pointer_token(k)}")
        return (list(columns), [(f"{path}#/{i}", r) for i, r in enumerate(rows)],
                [(where, k) for k, where in columns.items()], [])
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    while header == []:  # blank lines before the header
        header = next(reader, None)
    if header is None:
        raise UsageError(f"{path}: no rows")
    head_line = reader.line_num
    names = [h.strip() for h in header]
    out, problems = [], []
    for cells in reader:
        if not cells:
            continue
        where = f"{path}:{reader.line_num}"
        if len(cells) > len(names):
            problems.append(f"{where}: {len(cells)} cells, the header (line {head_line}) names {len(names)} columns")
        out.append((where, dict(zip(names, cells + [""] * (len(names) - len(cells)), strict=False))))
    if not out:
        raise UsageError(f"{path}: no rows")
    return names, out, [(f"{path}:{head_line}:{j}", n) for j, n in enumerate(names, 1)], problems


def _metric_columns(columns: list[tuple[str, str]], benchmark: str) -> tuple[dict[str, str], list[str]]:
    """``{column: registered metric name}`` and the problems: a column neither of :data:`META_COLUMNS` nor a
    metric of ``benchmark`` (with a "did you mean"), or a second column of the same metric."""
    from dialeval.benchmarks import registry
    from dialeval.core.errors import did_you_mean

    bench = registry.get(benchmark)
    known = [*bench.default_metrics, *bench.extra_metrics, *sorted(META_COLUMNS)]
    metric_of, first, problems = {}, {}, []
    for where, name in columns:
        if name in META_COLUMNS or not name:  # an unnamed column (a trailing comma) holds nothing to import
            continue
        metric = bench.own_metric(name)
        if metric is None:
            problems.append(f"{where}: column {name[:60]!r} is not a metric of {benchmark} nor a column of reported "
                            f"results{did_you_mean(name, known)}")
        elif metric in first:
            problems.append(f"{where}: column {name[:60]!r} is {metric} again (first at {first[metric]})")
        else:
            metric_of[name], first[metric] = metric, where
    return metric_of, problems


def _number(v, where: str, problems: list[str]) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        problems.append(f"{where}: {str(v)[:30]!r} is not a number")
        return None
    if not math.isfinite(x):
        problems.append(f"{where}: not a finite number")
        return None
    return x


def _is_proportion(metric: str) -> bool:
    """Whether ``metric`` is a share of items, within 0..1 (P@K, hits@K, R@K, RN@K, MRR, MAP, the accuracies)."""
    from dialeval import metrics

    return metrics.family(metric) != metric or metric in ("mrr", "map", "per-response-accuracy", "per-dialog-accuracy")


def parse_reported(path: Path, benchmark: str, team_prefix: str = "") -> list[dict]:
    """One dict per team: team, system, source, note, records (tidy, with signatures). Every problem of the file
    (unknown columns, rows without team/split/task, cells that are not numbers) is raised at once:
    :class:`InvalidReportedFile`."""
    from dialeval import metrics
    from dialeval.benchmarks import registry

    bench = registry.get(benchmark)
    names, rows, columns, problems = _table(path)
    metric_of, column_problems = _metric_columns(columns, benchmark)
    problems = column_problems + problems
    is_json = path.suffix.lower() == ".json"
    column_no = {name: j for j, name in enumerate(names, 1)}
    by_team: dict[tuple[str, str], list[dict]] = defaultdict(list)
    spelled: dict[str, tuple[str, str]] = {}  # team_key -> (first spelling, where)
    for where, r in rows:
        team = str(r.get("team", "")).strip()
        split = str(r.get("split", "")).strip()
        group = str(r.get("task", r.get("group", ""))).strip()
        if not team or not split or not group:
            problems.append(f"{where}: needs team, split and task (or group)")
            continue
        # a split or task the benchmark does not have (a typo, another benchmark's table) would be imported as
        # numbers no ranking scope ever shows; "all" is a published average over them
        group_column = "task" if "task" in r else "group"
        for column, value, known in (("split", split, bench.split_names), (group_column, group, bench.group_names)):
            if known and value != "all" and value not in known:
                at = f"{where}/{column}" if is_json else f"{where}:{column_no[column]}: column {column}"
                problems.append(f"{at}: {value[:30]!r} is not a {column} of {benchmark} (one of: "
                                f"{', '.join(known)}){did_you_mean(value, known)}")
        system = str(r.get("system") or "reported").strip()
        for what, name in (("team", team_prefix + team), ("system", system)):  # the rules team.json's names follow
            if len(name) > NAME_MAX or _CONTROL.search(name):
                problems.append(f"{where}: {what} must be a name without control characters (at most {NAME_MAX})")
        first, first_at = spelled.setdefault(team_key(team_prefix + team), (team, where))
        if first != team:  # one team, one spelling: "Café" and "CAFÉ" would be two teams that read alike
            problems.append(f"{where}: team {team[:60]!r} is {first[:60]!r} ({first_at}) spelt differently (case, "
                            "spacing or Unicode form); spell it one way")
        values = {}
        for k, metric in metric_of.items():
            if str(r.get(k, "")).strip() != "":
                at = f"{where}/{_pointer_token(k)}" if is_json else f"{where}:{column_no[k]}: column {k[:60]}"
                values[metric] = x = _number(r.get(k), at, problems)
                if x is not None and not 0 <= x <= 1 and _is_proportion(metric):
                    problems.append(f"{at}: {str(r.get(k)).strip()[:30]} is outside 0..1 ({metric} is a proportion; "
                                    "a percentage is divided by 100)")
        by_team[(team, system)].append(
            {**r, "_split": split, "_group": group, "_values": values,
             "_metrics": [metric_of[k] for k in r if k in metric_of]})
    if problems:
        columns = ""
        if any(" is not a metric of " in p for p in column_problems):  # which names would have done
            bench = registry.get(benchmark)
            families = sorted({metrics.family(m) for m in bench.default_metrics} - set(bench.default_metrics))
            columns = (f" ({benchmark}'s metrics: {', '.join((*bench.default_metrics, *bench.extra_metrics))}"
                       f"{' (any k of ' + ', '.join(families) + ')' if families else ''}; other columns: "
                       f"{', '.join(sorted(META_COLUMNS))})")
        raise InvalidReportedFile(path, problems, columns)
    out = []
    for (team, system), trs in by_team.items():
        metrics = trs[0]["_metrics"]
        sources = sorted({str(r.get("source") or "").strip() for r in trs} - {""})
        source = "; ".join(sources) or path.name
        bands = sorted({str(r.get("published_band") or "").strip() for r in trs} - {""})
        seen = set()
        per: dict[tuple[str, str], dict[str, float]] = {}
        for r in trs:
            key = (r["_split"], r["_group"])
            if key in seen:  # a table that repeats rows: the overview's team-1 table lists tst1 rows twice
                continue
            seen.add(key)
            per[key] = r["_values"]
        records = []
        src_field = hashlib.sha256(source.encode()).hexdigest()[:8]

        def sig(split, group, metric, avg, src_field=src_field):
            return (f"{benchmark}|reported|source:{src_field}|split:{split}|task:{group}|metric:{metric}"
                    f"|avg:{avg or 'none'}|v:{__version__}")

        splits = list(dict.fromkeys(s for s, _ in per))
        for (split, group), vals in per.items():
            for m, v in vals.items():
                records.append({"split": split, "group": group, "subset": None, "metric": m, "average": None,
                                "value": v, "n": None, "signature": sig(split, group, m, None)})
        for m in metrics:
            for split in splits:
                vs = [vals[m] for (s, _), vals in per.items() if s == split and m in vals]
                if len(vs) > 1:
                    records.append({"split": split, "group": "all", "subset": None, "metric": m, "average": "macro",
                                    "value": sum(vs) / len(vs), "n": None, "signature": sig(split, "all", m, "macro")})
            vs = [vals[m] for vals in per.values() if m in vals]
            if len(splits) > 1 and vs:
                records.append({"split": "all", "group": "all", "subset": None, "metric": m, "average": "macro",
                                "value": sum(vs) / len(vs), "n": None, "signature": sig("all", "all", m, "macro")})
        out.append({"team": team_prefix + team, "system": system, "source": source,
                    "note": f"published band: {bands[0]}" if bands else None, "records": records,
                    "splits": splits, "groups": list(dict.fromkeys(g for _, g in per)), "metrics": metrics})
    return out


def import_reported(reg, path: Path, board: str, benchmark: str = DEFAULT_BENCHMARK, team_prefix: str = "",
                    teams: list[dict] | None = None) -> tuple[int, int]:
    """Record every team of ``path`` as a reported run on ``board``; returns (created, already there).
    ``teams``: ``parse_reported(path, ...)`` read already (before the registry was opened)."""
    from dialeval.leaderboard.registry import now_utc
    from dialeval.leaderboard.scoring import Graded

    teams = teams if teams is not None else parse_reported(path, benchmark, team_prefix)
    reg.check_board_benchmark(board, benchmark)
    # a team registered under another spelling is refused before anything is written: nothing half-imported
    clashes = [f"{path}: team {t['team'][:60]!r} is the registered team {other[:60]!r} spelt differently (case, "
               "spacing or Unicode form); spell it as registered"
               for t in teams if (other := reg.team_spelling(t["team"])) not in (None, t["team"])]
    if clashes:
        raise InvalidReportedFile(path, clashes)
    created = unchanged = 0
    for t in teams:
        key = hashlib.sha256(json.dumps(["reported", board, benchmark, t], sort_keys=True).encode()).hexdigest()
        graded = Graded(True, [], t["records"], None, benchmark, t["splits"], t["groups"], t["metrics"], None, None)
        _, new = reg.record_run(team={"team": t["team"], "system": t["system"]}, graded=graded, grading_key=key,
                                kind="reported", board=board, submitted_at=now_utc(), source_name=path.name,
                                sha256=None, reported_source=t["source"], note=t["note"])
        created += new
        unchanged += not new
    return created, unchanged


def threshold_band(mean_p1: float) -> str:
    """The DSTC6 overview's fixed P@1 thresholds, applied to a mean P@1: solved / 0.9-1.0 / 0.5-0.9 / below 0.5."""
    if mean_p1 >= 1.0 - 1e-9:
        return "solved (P@1 = 1.0)"
    if mean_p1 > 0.9:
        return "0.9 < P@1 < 1.0"
    if mean_p1 > 0.5:
        return "0.5 < P@1 < 0.9"
    return "P@1 < 0.5"
