"""The one place the leaderboard touches the scoring API (kept small so it follows :mod:`dialeval.api`).

:func:`score_submission` returns a plain :class:`Graded` — validity, problems, tidy records, the per-item
RankTable, the data identity and the submission's hash — whatever shape the API's report has. It prefers
``dialeval.api.score(submission, benchmark=..., data=...)``; while that API is older it drives the benchmark
registry directly (``Benchmark.evaluate`` + ``ScoreReport.compute``), which is what the API does.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval import __version__

if TYPE_CHECKING:
    from dialeval.ranks import RankTable


@dataclass
class Graded:
    valid: bool
    problems: list[dict]  # Problem.to_json() dicts
    records: list[dict]  # tidy records {benchmark, split, group, subset, metric, average, value, n, signature}
    table: RankTable | None
    benchmark: str
    splits: list[str]
    groups: list[str]
    metrics: list[str]
    data_digest: str | None
    data_location: str | None
    data_json: dict = field(default_factory=dict)
    submission_sha256: str | None = None
    version: str = __version__


def _new_api():
    """``api.score`` and its parameter names when it takes ``benchmark`` and ``data``, else None."""
    try:
        from dialeval import api
    except ImportError:  # pragma: no cover - api is part of the package
        return None
    fn = getattr(api, "score", None)
    if fn is None:
        return None
    params = set(inspect.signature(fn).parameters)
    return (fn, params) if {"benchmark", "data"} <= params else None


def score_submission(submission: str | Path, benchmark: str, data: str | Path, keys: str | Path | None = None,
                     split=None, groups: list[str] | None = None, options: dict | None = None) -> Graded:
    """Validate and score one submission strictly. Usage / I/O faults raise :class:`~dialeval.errors.UsageError`."""
    options = dict(options or {})
    found = _new_api()
    if found is not None:
        fn, params = found
        kw = {"benchmark": benchmark, "data": str(data), "split": split, "keys": str(keys) if keys else None}
        if groups:
            kw["groups" if "groups" in params else "tasks"] = groups
        if options:
            kw["options"] = options
        return _from_report(fn(str(submission), **{k: v for k, v in kw.items() if k in params}), benchmark)
    return _via_registry(submission, benchmark, data, keys, split, groups, options)


def _via_registry(submission, benchmark, data, keys, split, groups, options) -> Graded:
    from dialeval.benchmarks import registry
    from dialeval.benchmarks.base import Request
    from dialeval.metrics import resolve
    from dialeval.report import ScoreReport
    from dialeval.signature import Signature

    bench = registry.get(benchmark)
    ev = bench.evaluate(Request(submission=submission, data=Path(data), split=split,
                                keys=Path(keys) if keys else None, groups=groups, options=options))
    sig = Signature(bench.name).with_fields(**ev.signature_fields)
    report = ScoreReport(sig, ev.submission, ev.splits, ev.groups, ev.valid, list(ev.problems), ev.table, ev.data,
                         group_label=bench.group_label)
    if ev.valid and ev.table is not None:
        report.compute(resolve(bench.metrics_for(ev)))
    return _from_report(report, benchmark)


def _from_report(report, benchmark: str) -> Graded:
    data = getattr(report, "data", None)
    table = getattr(report, "table", None)
    valid = bool(report.valid)
    return Graded(
        valid=valid,
        problems=[p.to_json() for p in report.problems],
        records=[dict(r) for r in report.records] if valid else [],
        table=table if valid else None,
        benchmark=getattr(report, "benchmark", benchmark),
        splits=list(report.splits),
        groups=[str(g) for g in getattr(report, "groups", [])],
        metrics=list(getattr(report, "metrics", [])),
        data_digest=getattr(data, "digest", None),
        data_location=getattr(data, "location", None),
        data_json=data.to_json() if data is not None and hasattr(data, "to_json") else {},
        submission_sha256=(report.submission or {}).get("sha256"),
    )


def benchmark_info(name: str) -> dict:
    """Title, group label and default metrics of a registered benchmark (for the site and ``rank``)."""
    from dialeval.benchmarks import registry

    b = registry.get(name)
    return {"name": b.name, "title": getattr(b, "title", b.name), "group_label": getattr(b, "group_label", "task"),
            "default_metrics": list(getattr(b, "default_metrics", ("hits@1",)))}
