"""Reported results: numbers without a submission (a paper's table, a challenge overview), imported as-is.

Input: CSV with columns ``team``, ``split``, ``task`` (or ``group``), one column per metric (``p@1``, ``p@2``,
``mrr``, ...), ``source`` (where the numbers were published) and optionally ``published_band`` (the group
the source put the team in) and ``system``; or a JSON list of objects with the same keys. Each team becomes
one run of kind ``reported`` on the given board: its records are the published per-(split, task) numbers
plus macro averages (mean over the files, as overviews report them; there are no item counts to pool).
They are shown with a "reported" badge and never re-scored or banded. Importing the same file again
changes nothing (the grading key is a hash of the team's rows).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections import defaultdict
from pathlib import Path

from dialeval import __version__
from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.core.errors import UsageError

META_COLUMNS = {"team", "system", "split", "task", "group", "source", "published_band", "note"}


def _rows(path: Path) -> list[dict]:
    from dialeval.files.read import read_text

    text = read_text(path, what="a CSV or JSON file of reported results")
    if path.suffix.lower() == ".json":
        try:
            rows = json.loads(text)
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno})") from None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UsageError(f"{path}: expected a JSON list of objects")
        return rows
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        raise UsageError(f"{path}: no rows")
    return rows


def _number(v, where: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise UsageError(f"{where}: {str(v)[:30]!r} is not a number") from None
    if not math.isfinite(x):
        raise UsageError(f"{where}: not a finite number")
    return x


def parse_reported(path: Path, benchmark: str, team_prefix: str = "") -> list[dict]:
    """One dict per team: team, system, source, note, records (tidy, with signatures)."""
    rows = _rows(path)
    by_team: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for i, r in enumerate(rows, 2):
        team = str(r.get("team", "")).strip()
        split = str(r.get("split", "")).strip()
        group = str(r.get("task", r.get("group", ""))).strip()
        if not team or not split or not group:
            raise UsageError(f"{path}: row {i}: needs team, split and task (or group)")
        by_team[(team, str(r.get("system") or "reported").strip())].append({**r, "_split": split, "_group": group,
                                                                           "_line": i})
    out = []
    for (team, system), trs in by_team.items():
        metrics = [k for k in trs[0] if k not in META_COLUMNS and not k.startswith("_") and k]
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
            per[key] = {m: _number(r.get(m), f"{path}: row {r['_line']} column {m}") for m in metrics
                        if str(r.get(m, "")).strip() != ""}
        records = []
        src_field = hashlib.sha256(source.encode()).hexdigest()[:8]

        def sig(split, group, metric, avg, src_field=src_field):
            return (f"{benchmark}|reported|source:{src_field}|split:{split}|task:{group}|metric:{metric}"
                    f"|avg:{avg or 'none'}|v:{__version__}")

        splits = list(dict.fromkeys(s for s, _ in per))
        for (split, group), vals in per.items():
            for m, v in vals.items():
                records.append({"split": split, "group": group, "subset": None, "metric": m, "average": None,
                                "value": round(v, 6), "n": None, "signature": sig(split, group, m, None)})
        for m in metrics:
            for split in splits:
                vs = [vals[m] for (s, _), vals in per.items() if s == split and m in vals]
                if len(vs) > 1:
                    records.append({"split": split, "group": "all", "subset": None, "metric": m, "average": "macro",
                                    "value": round(sum(vs) / len(vs), 6), "n": None, "signature": sig(split, "all", m, "macro")})
            vs = [vals[m] for vals in per.values() if m in vals]
            if len(splits) > 1 and vs:
                records.append({"split": "all", "group": "all", "subset": None, "metric": m, "average": "macro",
                                "value": round(sum(vs) / len(vs), 6), "n": None, "signature": sig("all", "all", m, "macro")})
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

    created = unchanged = 0
    for t in teams if teams is not None else parse_reported(path, benchmark, team_prefix):
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
