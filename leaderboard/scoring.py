"""The one place the leaderboard touches the scoring API (kept small so it follows :mod:`dialeval.api`).

:func:`score_submission` returns a plain :class:`Graded` — validity, problems, tidy records, the per-item
RankTable, the data identity and the submission's hash — through ``dialeval.api.score``, so a graded run's
numbers are exactly what ``dialeval score`` prints for the same submission.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dialeval import __version__

if TYPE_CHECKING:
    from dialeval.core.ranks import RankTable
    from dialeval.results.report import ScoreReport


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
    missing: int = 0  # answer-key items the submission does not rank (missing-dialog warnings): scored as misses
    errors: int = 0  # the errors the report counts (as `validate` counts them; a "more not listed" note is none)


def score_submission(submission: str | Path, benchmark: str, data: str | Path, keys: str | Path | None = None,
                     split=None, groups: list[str] | None = None, options: dict | None = None,
                     text_metrics: dict | None = None, ties: str | None = None) -> Graded:
    """Validate and score one submission strictly. Usage / I/O faults raise :class:`~dialeval.core.errors.UsageError`.

    ``text_metrics``: ``api.score``'s ``metrics``, ``embedding_preset``, ``vectors`` and ``vectors_format``, for
    a caller that wants the embedding metrics' per-item values in the table (the benchmark's metrics otherwise)."""
    from dialeval import api

    report = api.score(str(submission), split, keys=str(keys) if keys else None, tasks=groups or None,
                       benchmark=benchmark, data=str(data), options=dict(options or {}),
                       **({"ties": ties} if ties else {}), **(text_metrics or {}))
    return _from_report(report, benchmark)


def _from_report(report: ScoreReport, benchmark: str) -> Graded:
    data = report.data
    valid = bool(report.valid)
    return Graded(
        valid=valid,
        problems=[p.to_json() for p in report.problems],
        records=[dict(r) for r in report.records] if valid else [],
        table=report.table if valid else None,
        benchmark=report.benchmark or benchmark,
        splits=list(report.splits),
        groups=[str(g) for g in report.groups],
        metrics=list(report.metrics),
        data_digest=data.digest if data is not None else None,
        data_location=data.location if data is not None else None,
        data_json=data.to_json() if data is not None else {},
        submission_sha256=(report.submission or {}).get("sha256"),
        missing=sum(p.count for p in report.problems if p.code == "missing-dialog"),
        errors=report.counts["errors"],
    )


def benchmark_info(name: str) -> dict:
    """Title, group label and default metrics of a registered benchmark (for the site and ``rank``)."""
    from dialeval.benchmarks import registry

    b = registry.get(name)
    return {"name": b.name, "title": getattr(b, "title", b.name), "group_label": getattr(b, "group_label", "task"),
            "default_metrics": list(getattr(b, "default_metrics", ("hits@1",))),
            "data_name": getattr(b, "data_name", "") or b.name,
            "split_descriptions": dict(getattr(b, "split_descriptions", {})),
            "group_names": dict(getattr(b, "group_names", {})),
            "group_descriptions": dict(getattr(b, "group_descriptions", {})),
            "problem_codes": dict(getattr(b, "problem_codes", {}))}
