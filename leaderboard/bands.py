"""Rank the runs of a board with significance bands, and compare two runs — over the registry's per-item ranks.

The statistics are :mod:`dialeval.results.stats`; this module chooses which runs and units take part:

* **rank**: every valid graded run of the board (reported results never: they have no items) that covers
  the scope's items (a split, or everything the board's runs were scored on). Runs covering fewer items are
  listed after the banded ones without a band, with a note. Order: the metric (micro over the units), equal
  scores by submission time (earliest first), then run id. Bands follow a named rule (:data:`RULES`):
  ``pairwise`` (default; no two runs of one band differ significantly) or ``neighbour`` (the DSTC6
  overview's chaining, kept to reproduce it). A board holding only reported results is listed as reported,
  unbanded, with a note saying why.
* **compare**: two runs on the units both have, per metric: paired bootstrap interval of the difference,
  bootstrap and approximate-randomization p-values, McNemar's exact p-value where it applies (0/1 metrics on
  independent items), and each run's own interval.

Signatures of both start like a score record's: the benchmark, the data identity of the scope (``data:tst1#…``,
``data:all#…``), the scoring options both runs share, and the split scope (``split:tst1``, ``split:all``), then
the metric and the test's settings, the version last.
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
    submitted_at: str | None
    score: float
    band: int | None  # None: not banded (reported, or partial coverage)
    low: float | None = None
    high: float | None = None
    p_next: float | None = None  # Holm-adjusted p-value against the next banded run
    n: int = 0
    note: str = ""
    p_next_text: str = "-"  # p_next for people: "< 0.0004" when it is a resampling floor, never a bare number
    differs_from: int | None = None  # a band's first run: position (1-based) of the run above it differs from
    p_differs_text: str = ""  # that pair's adjusted p-value as text

    def to_json(self) -> dict:
        r = stats._r
        return {"run_id": self.run_id, "team": self.team, "system": self.system, "kind": self.kind,
                "submitted_at": self.submitted_at, "score": r(self.score), "band": self.band, "low": r(self.low),
                "high": r(self.high), "p_next": r(self.p_next), "p_next_text": self.p_next_text,
                "differs_from": self.differs_from, "p_differs_text": self.p_differs_text or None, "n": self.n,
                "note": self.note}


@dataclass
class Ranking:
    board: str
    metric: str
    scope: str  # a split name or "all"
    rows: list[RankedRun] = field(default_factory=list)
    signature: str = ""
    notes: list[str] = field(default_factory=list)
    rule: str = "pairwise"
    test: str = ""  # the test the bands used ("mcnemar", "ar"); "" when nothing was banded
    reported_only: bool = False  # the board holds only reported results: rows listed, none banded
    alpha: float = stats.DEFAULT_ALPHA
    # adjusted p-value of every tested pair of banded runs, {(run id, run id): (p, text)} with the better-ranked
    # run first (the site's significance matrix; untested pairs of the neighbour rule are absent)
    pairs: dict[tuple[int, int], tuple[float, str]] = field(default_factory=dict)

    @property
    def rule_text(self) -> str:
        """The band rule and the test in words, for pages (the site's board page shows it)."""
        return RULES[self.rule] + (f"; test: {TEST_TEXT[self.test]}" if self.test in TEST_TEXT else "")

    def to_json(self) -> dict:
        return {"board": self.board, "metric": self.metric, "scope": self.scope, "signature": self.signature,
                "rule": self.rule, "rule_text": self.rule_text, "test": self.test,
                "reported_only": self.reported_only, "notes": self.notes, "runs": [r.to_json() for r in self.rows]}


RULES = stats.RULES
TEST_TEXT = {
    "mcnemar": "McNemar's exact test on the items one run gets right and the other wrong",
    "ar": "approximate randomization (outputs swapped per conversation at random), enough resamples for Holm "
          "to be able to reject; a p-value at the resampling floor shows as \"< 1/(R+1)\"",
}


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
               resamples: int | None = None, seed: int = stats.DEFAULT_SEED, intervals: bool = True,
               rule: str = "pairwise", test: str = "auto", exclude: frozenset[int] = frozenset()) -> Ranking:
    """Rank the board's valid graded runs by ``metric`` on ``scope`` and band them (see the module docstring).

    ``exclude``: run ids left out (the site's superseded resubmissions).
    """
    from dialeval.metrics import get

    m = get(metric)
    valid = [r for r in reg.runs(board=board, status="valid") if r.run_id not in exclude]
    runs = [r for r in valid if r.kind != "reported"]
    reported = [r for r in valid if r.kind == "reported"]
    label = scope_label(scope)
    ranking = Ranking(board, m.name, label, rule=rule, alpha=alpha)
    if not runs and reported:
        return _reported_ranking(reg, ranking, reported, scope)
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
    if reported:
        ranking.notes.append(f"{len(reported)} reported result(s) not ranked: published numbers without "
                             "per-item results cannot be tested")
    if not units:
        ranking.notes.append(f"no graded run has items in scope {label}")
        return ranking
    all_keys = np.unique(np.concatenate([u.keys for u in units.values()]))
    full = [rid for rid, u in units.items() if len(u) == len(all_keys)]
    partial = [rid for rid in units if rid not in full]
    by_id = {r.run_id: r for r in runs}
    if full:
        values = np.stack([units[rid].values for rid in full])  # keys are sorted and complete: aligned
        clusters = units[full[0]].clusters
        # equal scores: the run a grader saw first (graded_at, then run id), never team.json's submitted_at
        tiebreak = [(by_id[rid].graded_at, rid) for rid in full]
        try:
            banding = stats.bands(values, clusters, tiebreak, m.name, alpha, resamples, seed, units[full[0]].level,
                                  rule=rule, test=test)
        except ValueError as e:
            raise UsageError(str(e)) from None
        ranking.test = banding.test
        splits = sorted({str(s) for s in np.char.partition(all_keys.astype(str), stats._SEP)[:, 0]})
        if label == "all" and len(splits) == 1:  # a board of one split names it, as compare signs the same runs
            label = ranking.scope = splits[0]
        head, data_notes = scope_signature(by_id[full[0]].benchmark, [reg.records(rid) for rid in full], splits,
                                           label, every_split=label == "all", strict=False)
        ranking.notes.extend(data_notes)
        ranking.signature = _join_signature(head, banding.signature + f"|ci:bs{stats.DEFAULT_RESAMPLES}|conf:95")
        pos_of = {i: pos for pos, i in enumerate(banding.order, 1)}
        for x, i in enumerate(banding.order):
            for j in banding.order[x + 1:]:
                if rule == "pairwise" or abs(pos_of[i] - pos_of[j]) == 1:
                    ranking.pairs[(full[i], full[j])] = (float(banding.p_adjusted[i, j]), banding.p_text(i, j))
        for pos, i in enumerate(banding.order):
            rid = full[i]
            r = by_id[rid]
            nxt = banding.order[pos + 1] if pos + 1 < len(banding.order) else None
            # the run's value as `score` reports it (the bands' means sum the units in key order: the last bit
            # can differ)
            row = RankedRun(rid, r.team, r.system, r.kind, r.submitted_at, units[rid].mean, banding.band[pos],
                            n=len(all_keys), p_next=float(banding.p_adjusted[i, nxt]) if nxt is not None else None,
                            p_next_text=banding.p_text(i, nxt) if nxt is not None else "-")
            why = banding.differs_from[pos]
            if why is not None:
                row.differs_from, row.p_differs_text = pos_of[why], banding.p_text(why, i)
            if intervals:
                iv = stats.interval(units[rid].values, units[rid].clusters, stats.DEFAULT_RESAMPLES, seed,
                                    estimate=units[rid].mean)
                row.low, row.high = iv.low, iv.high
            ranking.rows.append(row)
    for rid in sorted(partial, key=lambda x: (-units[x].mean, by_id[x].graded_at, x)):
        r = by_id[rid]
        row = RankedRun(rid, r.team, r.system, r.kind, r.submitted_at, units[rid].mean, None, n=len(units[rid]),
                        note=f"covers {len(units[rid])} of {len(all_keys)} items: not banded")
        if intervals:
            iv = stats.interval(units[rid].values, units[rid].clusters, stats.DEFAULT_RESAMPLES, seed,
                                estimate=units[rid].mean)
            row.low, row.high = iv.low, iv.high
        ranking.rows.append(row)
    if partial:
        ranking.notes.append(f"{len(partial)} run(s) cover only part of the items and are listed without a band")
    return ranking


def _reported_ranking(reg, ranking: Ranking, reported, scope) -> Ranking:
    """A board of reported results only: their published numbers in order, none banded, and one note why."""
    ranking.reported_only = True
    label = ranking.scope
    rows = []
    for r in reported:
        score = _reported_score(reg.records(r.run_id), ranking.metric, label)
        if score is not None:
            rows.append(RankedRun(r.run_id, r.team, r.system, r.kind, r.submitted_at, score, None,
                                  note=r.note or ""))
    rows.sort(key=lambda x: (-x.score, x.team, x.run_id))
    ranking.rows = rows
    ranking.notes.append(f"reported results only: published numbers without per-item results, listed as "
                         f"reported and not banded ({len(rows)} of {len(reported)} report {ranking.metric} "
                         f"on {label})")
    return ranking


def _reported_score(records: list[dict], metric: str, label: str) -> float | None:
    """A reported run's number for ``metric`` on the scope: the aggregate over groups (micro, else macro),
    else the only group's value."""
    rows = [r for r in records if r["metric"] == metric and r.get("subset") is None and r["split"] == label]
    for avg in ("micro", "macro"):
        hit = [r for r in rows if r["group"] == "all" and r.get("average") == avg and r["value"] is not None]
        if hit:
            return float(hit[0]["value"])
    groups = [r for r in rows if r.get("average") is None and r["value"] is not None]
    return float(groups[0]["value"]) if len(groups) == 1 else None


def compare_runs(table_a, table_b, metrics: list[str], resamples: int = stats.DEFAULT_RESAMPLES,
                 seed: int = stats.DEFAULT_SEED, confidence: float = stats.DEFAULT_CONFIDENCE, scope: str | None = None,
                 records_a: list[dict] | None = None, records_b: list[dict] | None = None) -> list[stats.PairedResult]:
    """Paired tests of run A against run B on ``scope`` (a split, or None: every item both have).

    The signatures start with the benchmark, the data identity of the scope and the shared scoring options
    (from the runs' score records), and name the split scope (``split:tst1`` or ``split:all``).
    """
    from dialeval.metrics import resolve

    a, b = _scoped(table_a, scope), _scoped(table_b, scope)
    if scope not in (None, "all") and (not len(a) or not len(b)):  # a typo, or a split one run does not cover
        covers = [", ".join(sorted(set(t.split.astype(str).tolist()))) or "none" for t in (table_a, table_b)]
        raise UsageError(f"--split: {scope_label(scope)!r} is not a split both runs cover (A: {covers[0]}; "
                         f"B: {covers[1]})")
    if not len(a) or not len(b):
        raise UsageError(f"no scored items in scope {scope}")
    splits_a, splits_b = set(a.split.astype(str).tolist()), set(b.split.astype(str).tolist())
    common = sorted(splits_a & splits_b)
    if not common:
        raise UsageError("the two runs share no scored item")
    every = scope is None and splits_a == splits_b
    # "all" only for runs that pool several splits the same way; one split is named (as `score` signs a file)
    label = compare_label(common, every)
    every = label == "all"
    benchmark = str(a.benchmark[0])
    head, _ = scope_signature(benchmark, [records_a or [], records_b or []], common, label, every_split=every,
                              strict=True)
    try:
        return stats.compare_tables(a, b, resolve(metrics), resamples, seed, confidence, head + f"|v:{_version()}")
    except ValueError as e:
        raise UsageError(str(e)) from None


def compare_label(common: list[str], every: bool) -> str:
    """The split scope a comparison signs: ``all`` when both runs cover the same several splits and nothing
    narrowed them, else the splits compared (``tst1``, ``tst1+tst3``)."""
    return "all" if every and len(common) > 1 else "+".join(common)


def _version() -> str:
    from dialeval import __version__

    return __version__


def _group_keys() -> tuple[str, ...]:
    """Signature keys that name a group: each benchmark's own group label (task, file, ...)."""
    from dialeval.benchmarks import registry

    return tuple(sorted({f"{b.group_label}:" for b in registry.all_benchmarks()}))


def _fields(signature: str) -> list[tuple[str, str]]:
    return [tuple(p.partition(":")[::2]) for p in signature.split("|")[1:] if p]


def scope_signature(benchmark: str, records_per_run: list[list[dict]], splits: list[str], label: str,
                    every_split: bool, strict: bool) -> tuple[str, list[str]]:
    """``benchmark|data:…|<shared options>|split:<label>`` for a statistic over several runs, and notes.

    ``data`` is the scope's data identity as the runs' score records name it: ``all#…`` when the scope is every
    split of every run and they agree on it, else the splits' own identities joined by ``+`` (``tst1#…``).
    Runs scored on different data for a split are not comparable: ``strict`` raises a usage error, otherwise
    the field says ``mixed`` and a note says so. Options (every other field but split, group, metric, average,
    subset, data, version) are those the runs share; fields on which they differ are named in ``differ:``.
    """
    drop = {"split", "group", "metric", "avg", "subset", "data", "v", *(k.rstrip(":") for k in _group_keys())}
    data_of: list[dict[str, str]] = []
    options: list[dict[str, str]] = []
    for recs in records_per_run:
        d: dict[str, str] = {}
        o: dict[str, str] = {}
        for rec in recs:
            f = dict(_fields(rec["signature"]))
            if "data" in f:
                d.setdefault(rec["split"], f["data"])
            if rec["split"] in splits or (every_split and rec["split"] == "all"):
                for k, v in _fields(rec["signature"]):
                    if k not in drop:
                        o.setdefault(k, v)
        data_of.append(d)
        options.append(o)
    notes: list[str] = []
    data = ""
    if every_split:
        alls = {d.get("all") for d in data_of}
        if len(alls) == 1 and None not in alls:
            data = alls.pop()
    if not data:
        parts = []
        for s in splits:
            ids = {d.get(s) for d in data_of} - {None}
            if len(ids) > 1:
                msg = f"the runs were scored on different data for {s} ({', '.join(sorted(ids))}): not comparable"
                if strict:
                    raise UsageError(msg)
                notes.append(msg)
                return _head(benchmark, "mixed", options, label), notes
            parts.append(ids.pop() if ids else f"{s}#unknown")
        data = "+".join(parts)
    return _head(benchmark, data, options, label), notes


def _head(benchmark: str, data: str, options: list[dict[str, str]], label: str) -> str:
    keys = list(dict.fromkeys(k for o in options for k in o))
    shared = [k for k in keys if len({o.get(k) for o in options}) == 1]
    differ = [k for k in keys if k not in shared]
    parts = [benchmark, f"data:{data}", *(f"{k}:{options[0][k]}" for k in shared)]
    if differ:
        parts.append(f"differ:{','.join(differ)}")
    parts.append(f"split:{label}")
    return "|".join(parts)


def _join_signature(head: str, tail: str) -> str:
    return f"{head}|{tail}|v:{_version()}"
