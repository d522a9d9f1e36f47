"""Rank the runs of a board with significance bands, and compare two runs — over the registry's per-item ranks.

The statistics are :mod:`dialeval.results.stats`; this module chooses which runs and units take part:

* **rank**: every valid graded run of the board (reported results never: they have no items) that covers
  the scope's items (a split, or everything the board's runs were scored on). Runs covering fewer items are
  listed after the banded ones without a band, with a note. Order: the metric (micro over the units), equal
  scores by submission time (earliest first), then run id.
* **compare**: two runs on the units both have, per metric: paired bootstrap interval of the difference,
  bootstrap and approximate-randomization p-values, and each run's own interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.results import stats


@dataclass
class RankedRun:
    run_id: int
    team: str
    system: str
    kind: str
    submitted_at: str
    score: float
    band: int | None  # None: not banded (reported, or partial coverage)
    low: float | None = None
    high: float | None = None
    p_next: float | None = None  # Holm-adjusted p-value against the next banded run
    n: int = 0
    note: str = ""

    def to_json(self) -> dict:
        r = stats._r
        return {"run_id": self.run_id, "team": self.team, "system": self.system, "kind": self.kind,
                "submitted_at": self.submitted_at, "score": r(self.score), "band": self.band, "low": r(self.low),
                "high": r(self.high), "p_next": r(self.p_next), "n": self.n, "note": self.note}


@dataclass
class Ranking:
    board: str
    metric: str
    scope: str  # a split name or "all"
    rows: list[RankedRun] = field(default_factory=list)
    signature: str = ""
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"board": self.board, "metric": self.metric, "scope": self.scope, "signature": self.signature,
                "notes": self.notes, "runs": [r.to_json() for r in self.rows]}


def _scoped(table, scope):
    """Rows of ``scope``: None/"all" = every row, a split name, or a list of split names."""
    if scope in (None, "all"):
        return table
    if isinstance(scope, list | tuple):
        return table.take(np.isin(table.split.astype(str), list(scope)))
    return table.take(table.split == scope)


def scope_label(scope) -> str:
    if scope in (None, "all"):
        return "all"
    return "+".join(scope) if isinstance(scope, list | tuple) else str(scope)


def rank_board(reg, board: str, metric: str, scope: str | None = None, alpha: float = stats.DEFAULT_ALPHA,
               resamples: int | None = None, seed: int = stats.DEFAULT_SEED, intervals: bool = True) -> Ranking:
    """Rank the board's valid graded runs by ``metric`` on ``scope`` and band them (see the module docstring)."""
    from dialeval.metrics import get

    m = get(metric)
    runs = [r for r in reg.runs(board=board, status="valid") if r.kind != "reported"]
    label = scope_label(scope)
    ranking = Ranking(board, m.name, label)
    wanted = None if label == "all" else ([scope] if isinstance(scope, str) else list(scope))
    units = {}
    for r in runs:
        if wanted is not None and not set(wanted) & set(r.splits):
            continue
        t = reg.table(r.run_id)
        if t is None:
            continue
        t = _scoped(t, scope)
        if not len(t):
            continue
        units[r.run_id] = stats.unit_values(t, m)
    if not units:
        return ranking
    all_keys = np.unique(np.concatenate([u.keys for u in units.values()]))
    full = [rid for rid, u in units.items() if len(u) == len(all_keys)]
    partial = [rid for rid in units if rid not in full]
    by_id = {r.run_id: r for r in runs}
    if full:
        values = np.stack([units[rid].values for rid in full])  # keys are sorted and complete: aligned
        clusters = units[full[0]].clusters
        tiebreak = [(by_id[rid].submitted_at, rid) for rid in full]
        banding = stats.bands(values, clusters, tiebreak, m.name, alpha, resamples, seed, units[full[0]].level)
        ranking.signature = banding.signature + f"|ci:bs{stats.DEFAULT_RESAMPLES}|scope:{label}"
        for pos, i in enumerate(banding.order):
            rid = full[i]
            r = by_id[rid]
            nxt = banding.order[pos + 1] if pos + 1 < len(banding.order) else None
            row = RankedRun(rid, r.team, r.system, r.kind, r.submitted_at, banding.scores[pos], banding.band[pos],
                            n=len(all_keys), p_next=float(banding.p_adjusted[i, nxt]) if nxt is not None else None)
            if intervals:
                iv = stats.interval(units[rid].values, units[rid].clusters, stats.DEFAULT_RESAMPLES, seed)
                row.low, row.high = iv.low, iv.high
            ranking.rows.append(row)
    for rid in sorted(partial, key=lambda x: (-units[x].mean, by_id[x].submitted_at, x)):
        r = by_id[rid]
        row = RankedRun(rid, r.team, r.system, r.kind, r.submitted_at, units[rid].mean, None, n=len(units[rid]),
                        note=f"covers {len(units[rid])} of {len(all_keys)} items: not banded")
        if intervals:
            iv = stats.interval(units[rid].values, units[rid].clusters, stats.DEFAULT_RESAMPLES, seed)
            row.low, row.high = iv.low, iv.high
        ranking.rows.append(row)
    if partial:
        ranking.notes.append(f"{len(partial)} run(s) cover only part of the items and are listed without a band")
    return ranking


def compare_runs(table_a, table_b, metrics: list[str], resamples: int = stats.DEFAULT_RESAMPLES,
                 seed: int = stats.DEFAULT_SEED, confidence: float = stats.DEFAULT_CONFIDENCE, scope: str | None = None,
                 base_signature: str = "") -> list[stats.PairedResult]:
    from dialeval.metrics import resolve

    a, b = _scoped(table_a, scope), _scoped(table_b, scope)
    if not len(a) or not len(b):
        raise UsageError(f"no scored items in scope {scope}")
    try:
        return stats.compare_tables(a, b, resolve(metrics), resamples, seed, confidence, base_signature)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _group_keys() -> tuple[str, ...]:
    """Signature keys that name a group: each benchmark's own group label (task, file, ...)."""
    from dialeval.benchmarks import registry

    return tuple(sorted({f"{b.group_label}:" for b in registry.all_benchmarks()}))


def common_signature(records_a: list[dict], records_b: list[dict]) -> str:
    """The options both runs were scored with (signature fields that name no split/group/metric), or ''."""
    def base(recs):
        drop = ("split:", "group:", "metric:", "avg:", "subset:", "data:", *_group_keys())
        out = set()
        for r in recs:
            out.add("|".join(p for p in r["signature"].split("|") if not p.startswith(drop)))
        return out
    sa, sb = base(records_a), base(records_b)
    both = sa & sb
    return sorted(both)[0] if len(both) == 1 else ""
