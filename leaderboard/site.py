"""The static leaderboard site: Jinja2 templates (autoescaped), vanilla JS, inline SVG — opens from ``file://``.

Pages: ``index.html`` (every board), ``board-<slug>.html`` (the ``--title`` heading and a "last updated" date,
ranking with significance bands and intervals on a labelled axis, a progress-over-time chart, superseded
resubmissions, reported results, a compact per-task view: tasks as columns, one split x metric at a time chosen
with CSS-only radio buttons; downloads), ``team-<n>.html`` (one per team, a labelled bar chart per run).
Downloads ``board-<slug>.csv`` / ``.json`` carry every published record with its signature.
Deterministic: "last updated" is the latest grading time in the registry, never the clock, so the same
registry builds the same bytes.

Order: runs are ordered by when a grader first saw them (``graded_at``, then run id), the order
:mod:`dialeval.leaderboard.grade` judges phases and quotas by: a team's latest run, the run that replaces a
superseded one, tie-breaks, the progress chart and "last updated". team.json's ``submitted_at`` is the team's own
word (a run can be backdated) and is shown as information only.

What is published, and what never is:
* only score records and run metadata — never per-item results, answer keys or team contact addresses;
* splits listed in ``hidden_splits`` appear only with ``private=True`` (then every page says PRIVATE);
  aggregates that pool a hidden split are dropped and the ranking is recomputed on the public splits;
* team-supplied text is escaped by Jinja2 autoescaping (element text and attributes), JSON embedded in pages
  uses the ``tojson`` filter (``<``, ``>``, ``&``, ``'`` as ``\\u`` escapes), links must be http(s), and CSV
  cells beginning with ``=``, ``+``, ``-``, ``@``, tab or CR are prefixed with ``'`` (no spreadsheet formulas);
* team-written names cannot spoof: bidi controls and other invisible format characters show as ``\\u202e``-style
  escapes inside ``<bdi>`` (see :func:`visible`), long names are cut with an ellipsis and a full-name tooltip.
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import io
import json
import math
import re
import shutil
import unicodedata
from pathlib import Path

from dialeval import __version__
from dialeval.core.errors import UsageError

HERE = Path(__file__).resolve().parent
CSV_COLUMNS = ("run_id", "team", "system", "kind", "benchmark", "board", "split", "group", "subset", "metric",
               "average", "value", "n", "signature")
# a board's downloads: every published record, and for a ranked run its place in the ranking (rank shared by
# equal scores, band, score and 95 % interval on the ranking's scope, adjusted p-value against the band above)
BOARD_COLUMNS = ("run_id", "rank", "band", "tied", "score", "ci_low", "ci_high", "p_vs_band_above", "team", "system",
                 "kind", "submitted_at", "benchmark", "board", "split", "group", "subset", "metric", "average",
                 "value", "n", "signature", "ranking_signature")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(v):
    """A CSV cell that no spreadsheet reads as a formula (text beginning with = + - @ tab CR gets a ') and
    that shows control, bidi and other invisible characters as ``\\u202e``-style escapes (a spreadsheet would
    obey a right-to-left override, or hide a zero-width space)."""
    if isinstance(v, str):
        v = visible(v) if not v.isascii() or any(c < " " or c == "\x7f" for c in v) else v
        return "'" + v if v.startswith(_FORMULA) else v
    return "" if v is None else v


def safe_url(url) -> str:
    return url if isinstance(url, str) and re.match(r"^https?://[^\s\"'<>`]+$", url) else ""


# ---- team-written text in HTML ------------------------------------------------------------------------------
# Autoescaping stops markup, not spoofing: a U+202E in a team name reverses what the reader sees, and a zero-width
# or other invisible format character makes two different names look the same. The page shows such characters
# as the same visible escapes the CLI prints (dialeval.core.termsafe), plus every other Unicode "Cf" (format)
# character (U+200E/U+200F marks, U+061C, zero-width spaces, soft hyphen...), which a terminal shows but a browser
# hides. Each name is also isolated in <bdi>, so right-to-left text inside it cannot reorder its neighbours.
NAME_CUT = 80  # characters shown before the ellipsis; the full name is in the tooltip (CSS may cut earlier)


def visible(text) -> str:
    """``text`` with control, bidi and other invisible format characters as visible ``\\uXXXX`` escapes."""
    from dialeval.core.termsafe import safe

    s = safe("" if text is None else text)
    if s.isascii():
        return s
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in s)


def _marked(text: str):
    """HTML of ``visible(text)`` with each escape in a <span class="esc"> so it reads apart from typed text."""
    from markupsafe import Markup, escape

    v = visible(text)
    if v == text:
        return escape(v)
    out = []
    # walk the original and escape char by char, so an escape the team typed literally is not highlighted
    for ch in text:
        e = visible(ch)
        if e == ch:
            out.append(str(escape(ch)))
        else:
            out.append(f'<span class="esc" title="invisible character U+{ord(ch):04X}">{escape(e)}</span>')
    return Markup("".join(out))


def name_html(text, cut: int = NAME_CUT, cls: str = "name"):
    """A team-written name as isolated (<bdi>), visible HTML; cut with an ellipsis, the full name in the tooltip."""
    from markupsafe import Markup, escape

    s = "" if text is None else str(text)
    if len(s) <= cut:
        return Markup(f'<bdi class="{cls}" title="{escape(visible(s))}">{_marked(s)}</bdi>')
    # a cut name can take the keyboard focus, which shows it whole (the tooltip needs a mouse)
    return Markup(f'<bdi class="{cls} cut" tabindex="0" title="{escape(visible(s))}">{_marked(s[:cut - 1] + "…")}'
                  '</bdi>')


def text_html(text):
    """Longer team-written text (descriptions, notes): isolated and visible, never cut."""
    from markupsafe import Markup

    return Markup(f"<bdi>{_marked('' if text is None else str(text))}</bdi>")


def slug(name: str) -> str:
    """A board's file-name part: the name itself when it is a safe file name, else its safe letters and a short
    hash of the name, so two boards ("a/b" and "a-b", or two long names alike in their first 60 letters) never
    share a page and one never replaces the other's."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "board"
    if s == name and len(s) <= 60:
        return s
    return f"{s[:52]}-{hashlib.blake2b(name.encode('utf-8', 'surrogatepass'), digest_size=3).hexdigest()}"


# ---- collecting what a board publishes ----------------------------------------------------------------
def _public_records(records: list[dict], run_splits: list[str], hidden: set[str]) -> list[dict]:
    if not hidden:
        return records
    pools_hidden = bool(set(run_splits) & hidden)
    return [r for r in records if r["split"] not in hidden and not (r["split"] == "all" and pools_hidden)]


def _headline(records: list[dict], metric: str, split: str | None) -> float | None:
    rows = [r for r in records if r["metric"] == metric and r.get("subset") is None
            and (split is None or r["split"] == split)]
    for avg in ("micro", "macro"):
        hit = [r for r in rows if r["group"] == "all" and r.get("average") == avg
               and (split is not None or r["split"] == "all")]
        if hit:
            return hit[0]["value"]
    groups = [r for r in rows if r.get("average") is None]
    if split is not None and len(groups) == 1:
        return groups[0]["value"]
    if split is None and len({r["split"] for r in groups}) == 1 and len(groups) == 1:
        return groups[0]["value"]
    return None


def superseded_runs(runs, rule: str = "latest", score=None) -> dict[int, int]:
    """{old run id: the run that counts instead}: a team's other valid graded runs, each replaced by the one that
    counts under the board's rule (challenge.toml ``counts``):

    * ``latest``: the latest run (by :func:`arrival`: when a grader first saw it, then run id);
    * ``best-public``: the best score on the visible splits (``score(run)``; equal scores: the earliest);
    * ``chosen``: the latest run the team marked ``"chosen": true`` in team.json, else its latest run.

    Never by team.json's ``submitted_at``: a backdated resubmission would not be "latest", and a run could
    appear replaced by an older one.

    A team's submissions compete as one entry. Baselines are reference systems, not entries: each baseline
    system stands on its own (its latest run).
    """
    groups: dict[tuple, list] = {}
    for r in runs:
        if r.status != "valid" or r.kind == "reported":
            continue
        key = (r.kind, r.team, r.system) if r.kind == "baseline" else (r.kind, r.team)
        groups.setdefault(key, []).append(r)
    out = {}
    for key, rs in groups.items():
        latest = max(rs, key=arrival)
        counted = latest
        if key[0] != "baseline" and rule == "best-public" and score is not None:
            scored = [(v, r) for r in rs if (v := score(r)) is not None]
            if scored:  # the best score; equal scores: the earliest run
                counted = max(scored, key=lambda vr: (vr[0], -_when(vr[1].graded_at), -vr[1].run_id))[1]
        elif key[0] != "baseline" and rule == "chosen":
            chosen = [r for r in rs if getattr(r, "chosen", False)]
            counted = max(chosen, key=arrival) if chosen else latest
        out.update({r.run_id: counted.run_id for r in rs if r.run_id != counted.run_id})
    return out


def arrival(run) -> tuple:
    """The trusted order of runs: when a grader first saw the run (``graded_at``), then run id (the order runs
    were recorded). Never team.json's ``submitted_at``, which the team writes."""
    return _when(run.graded_at), run.run_id


def board_challenge(reg, board: str):
    """The challenge.toml kept for ``board`` (a :class:`~dialeval.leaderboard.challenge.Challenge`), or None."""
    from dialeval.leaderboard import challenge as challenges

    source = reg.challenge_source(board)
    return challenges.parse(source, f"the challenge.toml kept for board {board}") if source else None


def counted_runs(reg, runs, metric: str, challenge=None, hidden=frozenset()) -> dict[int, int]:
    """:func:`superseded_runs` under the board's rule. ``best-public`` compares the runs on the splits public
    while the challenge runs: not ``hidden``, not in a hidden phase (revealed or not, so a reveal never changes
    which run counts, and the test split never chooses it)."""
    rule = challenge.counts if challenge is not None else "latest"
    if rule != "best-public":
        return superseded_runs(runs, rule)
    secret = set(hidden) | {s for p in challenge.phases if p.hidden for s in (p.splits or [])}

    def score(r):
        return _visible_score(_public_records(reg.records(run_id=r.run_id), r.splits, secret), metric)
    return superseded_runs(runs, rule, score)


def _visible_score(records: list[dict], metric: str) -> float | None:
    """A run's score over the splits the page shows: its overall number, else the item-weighted (micro) mean of
    its per-split numbers (the overall number pools a hidden split and is not published)."""
    v = _headline(records, metric, None)
    if v is not None:
        return v
    rows = [r for r in records if r["metric"] == metric and r.get("subset") is None and r["group"] == "all"
            and r.get("average") == "micro" and r["split"] != "all" and r.get("n")]
    n = sum(r["n"] for r in rows)
    return sum(r["value"] * r["n"] for r in rows) / n if n else None


def board_superseded(reg, board: str, at: str | None = None) -> dict[int, int]:
    """The runs the public site leaves out of the board's ranking as superseded, as :func:`build_site` decides
    them (the board's challenge.toml counting rule, see :func:`counted_runs`; the benchmark's first metric):
    ``dialeval rank`` ranks the same runs. ``at`` is accepted for callers that judge phases at a time; which run
    counts does not depend on it (best-public never looks at a hidden phase's splits, revealed or not)."""
    from dialeval.leaderboard.scoring import benchmark_info

    runs = reg.runs(board=board)
    if not runs:
        return {}
    try:
        metric = benchmark_info(runs[0].benchmark)["default_metrics"][0]
    except UsageError:
        metric = "hits@1"
    return counted_runs(reg, runs, metric, board_challenge(reg, board))


def collect_board(reg, board: str, hidden: set[str], private: bool, all_runs: bool = False, challenge=None) -> dict:
    from dialeval.leaderboard.bands import rank_board
    from dialeval.leaderboard.reported import threshold_band
    from dialeval.leaderboard.scoring import benchmark_info

    secret = set(hidden)  # what the public site hides, also on a private build: best-public compares public scores
    hidden = set() if private else set(hidden)
    runs = reg.runs(board=board)
    benchmark = runs[0].benchmark
    try:
        info = benchmark_info(benchmark)
    except UsageError:
        info = {"name": benchmark, "title": benchmark, "group_label": "group", "default_metrics": ["hits@1"],
                "data_name": benchmark, "split_descriptions": {}, "group_names": {}, "group_descriptions": {},
                "problem_codes": {}}
    metric = info["default_metrics"][0]
    records = {r.run_id: _public_records(reg.records(run_id=r.run_id), r.splits, hidden) for r in runs}
    splits = sorted({s for r in runs for s in r.splits if s not in hidden})
    graded_splits = sorted({s for r in runs if r.kind != "reported" and r.status == "valid" for s in r.splits})
    scope = "all" if not hidden or not set(graded_splits) & hidden else [s for s in graded_splits if s not in hidden]
    counts = challenge.counts if challenge is not None else "latest"
    superseded = counted_runs(reg, runs, metric, challenge, secret)
    n_sent = reg.submission_counts(board)
    exclude = frozenset() if all_runs else frozenset(superseded)
    ranking = rank_board(reg, board, metric, scope, exclude=exclude) if graded_splits and scope else None
    metrics = list(dict.fromkeys(m for r in runs if r.status == "valid" for m in r.metrics))
    by_id = {r.run_id: r for r in runs}

    def run_view(r, extra=None) -> dict:
        recs = records[r.run_id]
        return {"run_id": r.run_id, "team": r.team, "system": r.system, "kind": r.kind, "status": r.status,
                "submitted_at": r.submitted_at, "graded_at": r.graded_at, "url": safe_url(r.team_url), "description": r.description or "",
                "paper": safe_url(r.paper_url), "code": safe_url(r.code_url),
                "sha256": (r.sha256 or "")[:12], "source": r.reported_source or "", "note": r.note or "",
                "published_band": (r.note or "")[len("published band: "):] if (r.note or "").startswith(
                    "published band: ") else "",
                "team_page": f"team-{_team_index(reg, r.team)}.html",
                "by_split": {s: _headline(recs, metric, s) for s in splits},
                "superseded": superseded.get(r.run_id), "n_sent": n_sent.get(r.team, 0), **(extra or {})}

    ranked = []
    if ranking is not None:
        for pos, row in enumerate(ranking.rows, 1):
            ranked.append(run_view(by_id[row.run_id], {
                "rank": pos, "band": row.band, "score": row.score, "low": row.low, "high": row.high,
                "p_next": row.p_next, "note_rank": row.note, "differs_from": row.differs_from,
                "p_differs_text": row.p_differs_text}))
        _mark_ties(ranked)
        _p_above(ranked, ranking)
    reported = []
    for r in runs:
        if r.kind != "reported":
            continue
        score = _headline(records[r.run_id], metric, None)
        reported.append(run_view(r, {"score": score, "threshold_band": threshold_band(score) if score is not None
                                     and metric in ("p@1", "hits@1") else ""}))
    reported.sort(key=lambda v: (-(v["score"] if v["score"] is not None else -1), v["team"]))
    codes = {**_shared_codes(), **info.get("problem_codes", {})}
    rejected = [run_view(r, {"n_errors": r.n_errors, "errors": _error_codes(reg, r.run_id, codes)})
                for r in runs if r.status == "rejected"]
    # a superseded run's score is on the ranking's scope, from its own items: hiding a split removes that
    # split's numbers, never the run's
    old = [] if all_runs else [run_view(r, {"score": _scope_score(reg, r.run_id, metric, scope)})
                               for r in runs if r.run_id in superseded]
    for v in old:
        new = by_id[v["superseded"]]
        v["replaced_by"] = {"run_id": new.run_id, "system": new.system, "submitted_at": new.submitted_at,
                            "graded_at": new.graded_at}
    table_metrics = [m for m in metrics if m != "per-dialog-accuracy"][:4] or metrics
    per_task = _per_task([*ranked, *reported], records, splits, table_metrics)
    ranking_signature = ranking.signature if ranking else ""
    rank_of = {v["run_id"]: v for v in ranked}
    downloads = []
    for v in [*ranked, *old, *reported]:
        r = by_id[v["run_id"]]
        rv = rank_of.get(r.run_id, {})
        for rec in records[r.run_id]:
            downloads.append({"run_id": r.run_id, "rank": rv.get("shared_rank"), "band": rv.get("band"),
                              "tied": bool(rv.get("tied")) if rv else None,
                              "score": rv.get("score"), "ci_low": rv.get("low"), "ci_high": rv.get("high"),
                              "p_vs_band_above": rv.get("p_above_text") or None,
                              "team": r.team, "system": r.system, "kind": r.kind, "submitted_at": r.submitted_at,
                              "benchmark": r.benchmark, "board": board, "split": rec["split"], "group": rec["group"],
                              "subset": rec.get("subset"), "metric": rec["metric"], "average": rec.get("average"),
                              "value": rec["value"], "n": rec.get("n"), "signature": rec["signature"],
                              "ranking_signature": ranking_signature if rv else None})
    shown_runs = [by_id[v["run_id"]] for v in ranked] or [r for r in runs if r.status == "valid"
                                                           and r.kind != "reported"]
    data = data_statement([reg.data_identity(r.run_id) for r in shown_runs], info["data_name"],
                          _release_of([rec for r in shown_runs for rec in records[r.run_id]]))
    if not shown_runs and reported:  # nothing scored here: the numbers are what their sources published
        data = {"kind": "unknown", "release": "",
                "text": "the numbers their sources published (reported results; no data were scored here)"}
    return {"name": board, "slug": slug(board), "benchmark": benchmark, "title": info["title"],
            "data": data, "release": data.get("release", ""),
            "group_label": info["group_label"], "metric": metric, "splits": splits, "metrics": table_metrics,
            "split_info": [{"name": sp, "text": info["split_descriptions"].get(sp, "")} for sp in splits],
            "group_names": info["group_names"],
            "group_info": [{"name": g, "short": info["group_names"].get(g, ""),
                            "text": info["group_descriptions"].get(g, "")}
                           for g in sorted({g for t in per_task for g in t["groups"]}, key=_group_order)],
            "ranked": ranked, "reported": reported, "rejected": rejected, "per_task": per_task, "superseded": old,
            "all_runs": all_runs, "has_baselines": any(v["kind"] == "baseline" for v in ranked),
            "n_graded": sum(1 for r in runs if r.kind != "reported"), "counts": counts,
            "challenge_page": f"challenge-{slug(board)}.html" if challenge is not None else "",
            "deadlines": challenge.deadlines() if challenge is not None else [],
            "updated": max((r.graded_at for r in runs), default=""),
            "ranking_signature": ranking_signature, "ranking_notes": ranking.notes if ranking else [],
            "band_rule": ranking.rule_text if ranking else "",
            "matrix": _matrix(ranked, ranking) if ranking else None,
            "scope": ranking.scope if ranking else "", "downloads": downloads,
            "hidden": sorted(hidden), "n_bands": max((v["band"] or 0 for v in ranked), default=0)}


def _mark_ties(ranked: list[dict]) -> None:
    """Runs with the same score share a rank ("3=") and are marked tied; the listed order among them is the
    run a grader saw first (graded_at, then run id)."""
    for i, v in enumerate(ranked):
        first = i
        while first > 0 and ranked[first - 1]["score"] == v["score"]:
            first -= 1
        v["shared_rank"] = ranked[first]["rank"]
        v["tied"] = (i > 0 and ranked[i - 1]["score"] == v["score"]) or (
            i + 1 < len(ranked) and ranked[i + 1]["score"] == v["score"])


def _p_above(ranked: list[dict], ranking) -> None:
    """Each banded run's adjusted p-value against the band above (the smallest over that band's runs: the
    strongest evidence that it belongs lower), as text; "" in band 1 or unbanded."""
    band_runs: dict[int, list[int]] = {}
    for v in ranked:
        if v["band"]:
            band_runs.setdefault(v["band"], []).append(v["run_id"])
    for v in ranked:
        v["p_above_text"] = ""
        v["differs_from_team"] = ""
        if not v["band"] or v["band"] == 1:
            continue
        tested = [ranking.pairs[(a, v["run_id"])] for a in band_runs.get(v["band"] - 1, [])
                  if (a, v["run_id"]) in ranking.pairs]
        if tested:
            v["p_above_text"] = min(tested)[1]
        if v.get("differs_from"):
            other = ranked[v["differs_from"] - 1]
            v["differs_from_team"] = f"{other['team']} / {other['system']}"


def _matrix(ranked: list[dict], ranking) -> dict | None:
    """The pairwise significance matrix of the banded runs: rows and columns in rank order, each cell the
    Holm-adjusted p-value as text and whether it is significant (p < alpha); and, for phones, each run's list
    of the runs it differs from."""
    rows = [v for v in ranked if v["band"]]
    if len(rows) < 2:
        return None
    cells = []
    for a in rows:
        line = []
        for b in rows:
            key = (a["run_id"], b["run_id"]) if a["rank"] < b["rank"] else (b["run_id"], a["run_id"])
            hit = ranking.pairs.get(key) if a is not b else None
            line.append(None if hit is None else {"text": hit[1], "sig": hit[0] < ranking.alpha})
        cells.append(line)
    compact = []
    for a, line in zip(rows, cells):
        differs = [b["rank"] for b, c in zip(rows, line) if c and c["sig"]]
        same = [b["rank"] for b, c in zip(rows, line) if c and not c["sig"]]
        compact.append({"row": a, "differs": differs, "same": same})
    return {"rows": rows, "cells": cells, "compact": compact, "alpha": ranking.alpha}


def _scope_score(reg, run_id: int, metric: str, scope) -> float | None:
    """A run's ``metric`` on the ranking's scope ("all" or a list of splits), from its per-item results, as the
    ranking computes it; None without per-item results or items in scope."""
    import numpy as np

    from dialeval.metrics import get
    from dialeval.results import stats

    table = reg.table(run_id)
    if table is None:
        return None
    if scope not in (None, "all"):
        table = table.take(np.isin(table.split.astype(str), list(scope)))
    if not len(table):
        return None
    return float(stats.unit_values(table, get(metric)).mean)


def _shared_codes() -> dict[str, str]:
    from dialeval.core.problems import CODES

    return dict(CODES)


def _error_codes(reg, run_id: int, meanings: dict[str, str]) -> list[dict]:
    """A rejected run's error codes with their counts and meanings: the code says what is wrong without
    publishing the messages (which quote the submission)."""
    from collections import Counter

    counts = Counter(p["code"] for p in reg.problems(run_id) if p["severity"] == "error" and p["code"])
    return [{"code": c, "count": n, "meaning": meanings.get(c, "")} for c, n in sorted(counts.items())]


def data_statement(identities: list[dict], data_name: str, release: str) -> dict:
    """What a board's data are, in words: ``{"kind", "text", "release"}``, kind one of ``release``,
    ``simulated``, ``unknown`` (``modified`` counts as unknown: published names with other content).

    ``identities``: the data identities of the runs shown (the registry's ``data_json``); ``release``: what
    the records' signatures name (:func:`_release_of`)."""
    sims = [d.get("simulated") or ({"generator": "dialeval-simulator"} if d.get("embedded_default") else None)
            for d in identities]
    if identities and all(sims):
        seeds = sorted({str(x["seed"]) for x in sims if x.get("seed") is not None})
        seed = f" (seed {', '.join(seeds)})" if seeds else ""
        return {"kind": "simulated", "release": "",
                "text": f"simulated with dialeval's simulator{seed}, not the {data_name} data"}
    if identities and all(d.get("sample") for d in identities):
        return {"kind": "unknown", "release": "",
                "text": f"data that match no published release (dialeval's constructed sample data, not the "
                        f"{data_name} data)"}
    if release and release != "modified":
        return {"kind": "release", "release": release, "text": f"the published {release} release"}
    if release == "modified":
        return {"kind": "unknown", "release": "modified",
                "text": "data that match no published release (files carry published names with other content: "
                        "not comparable with published numbers)"}
    return {"kind": "unknown", "release": "", "text": "data that match no published release"}


def _release_of(records: list[dict]) -> str:
    """The published release the board's ranked numbers were scored on, from their signatures' ``data:`` field
    (``data:dstc6/tst1#…``): its name when every record names the same one, ``modified`` when any data file
    differed from its release, ``""`` for data of no known release (or a mix)."""
    names = set()
    for rec in records:
        field = next((p[5:] for p in str(rec.get("signature", "")).split("|") if p.startswith("data:")), "")
        names.add(field.split("/", 1)[0] if "/" in field.split("#", 1)[0] else "")
    if "modified" in names:
        return "modified"
    return names.pop() if len(names) == 1 else ""


def _group_order(g: str):
    return (0, int(g)) if g.isdigit() else (1, g)


def _per_task(shown: list[dict], records: dict, splits: list[str], metrics: list[str]) -> list[dict]:
    """One compact table per split x metric: runs as rows, groups (tasks) as columns; the page shows one at a time."""
    tables = []
    for si, split in enumerate(splits):
        cells: dict[int, dict] = {}
        groups: set[str] = set()
        for v in shown:
            for rec in records[v["run_id"]]:
                if (rec["split"] == split and rec["group"] != "all" and rec.get("subset") is None
                        and rec.get("average") is None):
                    cells.setdefault(v["run_id"], {})[(rec["metric"], rec["group"])] = rec["value"]
                    groups.add(rec["group"])
        gs = sorted(groups, key=_group_order)
        if not gs:
            continue
        for mi, m in enumerate(metrics):
            rows = [{**v, "cells": [cells[v["run_id"]].get((m, g)) for g in gs]} for v in shown if v["run_id"] in cells]
            tables.append({"split": split, "metric": m, "si": si, "mi": mi, "groups": gs, "rows": rows,
                           "winners": _winners(rows, gs)})
    return tables


def _winners(rows: list[dict], groups: list[str]) -> list[dict]:
    """Per group, the best value and the runs that reach it: among teams' submissions when there are any
    (baselines and reported results are references, not winners), else among every row. Marks each winning
    cell (``row["best"]``, one flag per group)."""
    pool = [r for r in rows if r["kind"] == "submission"] or rows
    out = []
    for r in rows:
        r["best"] = [False] * len(groups)
    for i, g in enumerate(groups):
        vals = [r["cells"][i] for r in pool if r["cells"][i] is not None]
        if not vals:
            out.append({"group": g, "value": None, "runs": []})
            continue
        top = max(vals)
        best = [r for r in pool if r["cells"][i] == top]
        for r in best:
            r["best"][i] = True
        out.append({"group": g, "value": top, "runs": best})
    return out


_TEAM_INDEX: dict[tuple[int, str], int] = {}


def _team_index(reg, team: str) -> int:
    key = (id(reg), team)
    if key not in _TEAM_INDEX:
        names = [r[0] for r in reg.db.execute("SELECT name FROM teams ORDER BY team_id")]
        for i, n in enumerate(names, 1):
            _TEAM_INDEX[(id(reg), n)] = i
    return _TEAM_INDEX.get(key, 0)


# ---- charts (numbers only; the template draws them) ---------------------------------------------------
def axis(values, steps=(0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0)) -> tuple[float, float, list[float]]:
    """A (low, high, ticks) scale covering ``values`` on round numbers, at most 6 ticks."""
    vals = [v for v in values if v is not None]
    if not vals:
        return 0.0, 1.0, [0.0, 0.25, 0.5, 0.75, 1.0]
    lo, hi = min(vals), max(vals)
    for step in steps:
        a, b = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
        if b == a:  # all equal: show a step below (scores often sit at a metric's top, 1.0)
            a, b = (a - step, b) if a >= step else (a, b + step)
        if (b - a) / step <= 5:
            break
    n = int(round((b - a) / step))
    return round(a, 6), round(b, 6), [round(a + i * step, 6) for i in range(n + 1)]


def _tick_label(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") if v != int(v) else f"{int(v)}"


def interval_chart(rows: list[dict], width: int = 180) -> dict:
    """x positions (0..width) of each row's estimate and interval on one shared axis, with its ticks."""
    lo, hi, ticks = axis([x for r in rows for x in (r.get("score"), r.get("low"), r.get("high"))])
    pad = 12  # keeps the end tick labels inside the header's drawing

    def x(v):
        return None if v is None else round(pad + (min(max(v, lo), hi) - lo) / (hi - lo) * (width - 2 * pad), 1)
    return {"width": width, "ticks": [{"x": x(t), "label": _tick_label(t)} for t in ticks],
            "rows": {r["run_id"]: {"x": x(r.get("score")), "lo": x(r.get("low")), "hi": x(r.get("high"))}
                     for r in rows}}


def split_bars(by_split: dict, height: int = 120, bar: int = 36, gap: int = 14, left: int = 40) -> dict:
    """Bars of one run's score per split on a 0..1 axis, with y ticks; x = split."""
    bars = []
    top = 12
    for i, (split, v) in enumerate(by_split.items()):
        h = 0 if v is None else round(max(0.0, min(1.0, v)) * height, 1)
        bars.append({"split": split, "value": v, "x": left + gap + i * (bar + gap), "y": height - h + top, "h": h,
                     "w": bar})
    ticks = [{"y": round(top + height - t * height, 1), "label": _tick_label(t)} for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
    return {"bars": bars, "width": left + gap + len(bars) * (bar + gap), "height": height + top + 40,
            "base": height + top, "top": top, "left": left, "ticks": ticks}


def _when(ts: str) -> float:
    try:
        return _dt.datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def progress_chart(rows: list[dict], width: int = 680, height: int = 220, n_xticks: int = 5,
                   deadlines: list[tuple[str, str]] | None = None) -> dict | None:
    """Each graded run as a point (when a grader first saw it, score), the best score so far as a step line, and
    each phase's deadline (label, RFC 3339 time) as a marked vertical line; the time axis covers all of them."""
    pts = sorted(((_when(r["graded_at"]), r["graded_at"], r) for r in rows if r.get("score") is not None),
                 key=lambda p: (p[0], p[2]["run_id"]))
    if not pts:
        return None
    left, right, top, bottom = 46, 40, 10, 40  # room for the axis labels and the last date
    lo, hi, ticks = axis([p[2]["score"] for p in pts])
    marks = [(label, stamp, _when(stamp)) for label, stamp in (deadlines or [])]
    t0 = min([pts[0][0], *(m[2] for m in marks)])
    t1 = max([pts[-1][0], *(m[2] for m in marks)])

    def x(t):
        return round(left + (0.5 if t1 == t0 else (t - t0) / (t1 - t0)) * (width - left - right), 1)

    def y(v):
        return round(top + (hi - v) / (hi - lo) * (height - top - bottom), 1)

    points, path, best = [], [], None
    for t, stamp, r in pts:
        points.append({"x": x(t), "y": y(r["score"]), "team": r["team"], "system": r["system"], "score": r["score"],
                       "date": stamp, "superseded": bool(r.get("superseded")), "kind": r["kind"]})
        if best is None:
            path.append(f"M{x(t)},{y(r['score'])}")
            best = r["score"]
        elif r["score"] > best:  # the best so far only rises: a step at the run that raised it
            path.append(f"H{x(t)}V{y(r['score'])}")
            best = r["score"]
    path.append(f"H{x(pts[-1][0])}")
    xticks = []
    for t in ([t0] if t1 == t0 else [t0 + (t1 - t0) * i / (n_xticks - 1) for i in range(n_xticks)]):
        xticks.append({"x": x(t), "label": _dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d")})
    return {"width": width, "height": height, "left": left, "right": width - right, "top": top,
            "base": height - bottom, "points": points, "path": "".join(path),
            "yticks": [{"y": y(v), "label": _tick_label(v)} for v in ticks], "xticks": xticks,
            "deadlines": [{"x": x(t), "label": label, "date": stamp} for label, stamp, t in marks]}


# ---- rendering ----------------------------------------------------------------------------------------
def _env():
    import jinja2  # lazy: only the site needs it

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)

    def num(v, digits=3):
        return "–" if v is None else f"{v:.{digits}f}"

    env.filters["num"] = num
    env.filters["name"] = name_html
    env.filters["text"] = text_html
    env.filters["plain"] = visible
    env.filters["sortkey"] = lambda v: "" if v is None else f"{v:.6f}"
    return env


def build_site(reg, out: Path, private: bool = False, hidden_splits: list[str] | None = None,
               title: str = "dialeval leaderboard", all_runs: bool = False, reveal: bool = False,
               now: str | None = None) -> Path:
    """Render every board of ``reg`` into ``out`` (replaced atomically); returns the path of index.html.

    ``all_runs``: rank every run, resubmissions included (marked superseded); by default only the run that counts
    for each team is ranked (its latest, or what the board's challenge.toml ``counts`` says) and its other runs
    are listed apart as superseded. A board graded with a challenge.toml gets its challenge page, and the splits
    of its hidden phases stay off the public site until the phase has ended (at ``now``: an RFC 3339 time, else
    ``DIALEVAL_NOW``, else the clock) and ``reveal`` is given.
    """
    from dialeval.files.outdir import atomic_output_dir
    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import dialeval_wheel
    from dialeval.leaderboard.outdir import SITE, hidden_by_board
    from dialeval.leaderboard.own_wheel import wheel_name

    hidden = set(hidden_splits or [])
    boards = reg.boards()
    if not boards:
        raise UsageError(f"{reg.path}: no runs to publish")
    # before anything is written: a misspelled hidden split would publish the real one
    hidden_of = hidden_by_board(hidden, {b: {s for r in reg.runs(board=b) for s in r.splits} for b in boards})
    at = challenges.now(now)
    board_challenge = {}
    for b in boards:
        source = reg.challenge_source(b)
        board_challenge[b] = challenges.parse(source, f"the challenge.toml kept for board {b}") if source else None
    # decided before anything is written: --reveal before a hidden phase has ended is refused
    board_hidden = {b: hidden_of[b] | challenges.hidden_splits(board_challenge[b], at, reveal) for b in boards}
    out = Path(out)
    env = _env()
    _TEAM_INDEX.clear()  # team page numbers are this build's own (cleared after it too: nothing kept between builds)
    # an earlier site is replaced (built beside, swapped in whole); any other non-empty folder is refused
    with atomic_output_dir(out, SITE, force=True, protect={"the registry": reg.path}) as tmp:
        (tmp / "static").mkdir()
        for f in (HERE / "static").iterdir():
            if f.is_file():
                shutil.copyfile(f, tmp / "static" / f.name)
        common = {"site_title": title, "private": private, "version": __version__}
        views = []
        team_runs: dict[str, list[dict]] = {}
        for b in boards:
            ch = board_challenge[b]
            view = collect_board(reg, b, board_hidden[b], private, all_runs, challenge=ch)
            view["chart"] = interval_chart(view["ranked"])
            view["progress"] = progress_chart([*view["ranked"], *view["superseded"]], deadlines=view["deadlines"])
            # phones get a chart drawn for their width, so its text stays 11 px instead of shrinking to fit
            view["progress_narrow"] = progress_chart([*view["ranked"], *view["superseded"]], 360, 220, 3,
                                                     deadlines=view["deadlines"])
            views.append(view)
            if ch is not None:
                if not (tmp / wheel_name()).exists():  # the scorer the page tells teams to install (not on PyPI)
                    (tmp / wheel_name()).write_bytes(dialeval_wheel())
                _write(tmp / view["challenge_page"], env.get_template("challenge.html").render(
                    board=view, ch=ch, paragraphs=challenges.paragraphs, commands=challenges.submit_commands(ch, __version__),
                    wheel=wheel_name(),
                    hidden_now=sorted(board_hidden[b]) if not private else [],
                    page_title=f"{ch.title} · {title}", **common))
            _write(tmp / f"board-{view['slug']}.html",
                   env.get_template("board.html").render(board=view, page_title=f"{b} · {title}", **common))
            # ASCII JSON: names stay exact, their bidi and invisible characters written as \\u escapes
            _write(tmp / f"board-{view['slug']}.json", json.dumps(
                {"board": b, "benchmark": view["benchmark"], "generated_by": f"dialeval {__version__}",
                 "private": private, "data": view["data"]["text"], "scope": view["scope"],
                 "ranking_signature": view["ranking_signature"], "ranking": _ranking_json(view),
                 "records": view["downloads"]},
                indent=1, ensure_ascii=True) + "\n")
            _write(tmp / f"board-{view['slug']}.csv", _csv(view["downloads"], BOARD_COLUMNS))
            for v in [*view["ranked"], *view["superseded"], *view["reported"], *view["rejected"]]:
                team_runs.setdefault(v["team"], []).append({**v, "board": b, "board_slug": view["slug"],
                                                            "metric": view["metric"]})
        for team, rows in team_runs.items():
            idx = _team_index(reg, team)
            by_board = {}
            for r in rows:
                by_board.setdefault(r["board"], []).append({**r, "chart": split_bars(r["by_split"])})
            _write(tmp / f"team-{idx}.html", env.get_template("team.html").render(
                team=team, url=next((r["url"] for r in rows if r["url"]), ""), boards=by_board,
                page_title=f"{visible(team)} · {title}", **common))
        _write(tmp / "index.html", env.get_template("index.html").render(
            boards=views, page_title=title, updated=max((v["updated"] for v in views), default=""), **common))
    _TEAM_INDEX.clear()
    return out / "index.html"


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def _csv(rows: list[dict], columns=CSV_COLUMNS) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_cell(r.get(c)) for c in columns])
    return buf.getvalue()


def _ranking_json(view: dict) -> list[dict]:
    """The ranking as the board shows it: one entry per ranked run."""
    return [{"rank": v["shared_rank"], "position": v["rank"], "band": v["band"], "tied": v["tied"],
             "run_id": v["run_id"], "team": v["team"], "system": v["system"], "kind": v["kind"],
             "score": v["score"], "ci_low": v["low"], "ci_high": v["high"],
             "p_vs_band_above": v["p_above_text"] or None,
             "differs_from_rank": v["differs_from"], "p_differs": v["p_differs_text"] or None,
             "submitted_at": v["submitted_at"], "paper": v["paper"] or None, "code": v["code"] or None}
            for v in view["ranked"]]


# ---- organizer exports ----------------------------------------------------------------------------------
def export_jsonl(reg, out: Path, with_contact: bool = False) -> int:
    """One run per line (schemas/run-record.schema.json), records included; no per-item data."""
    from dialeval.files.write import atomic_write_text

    lines = []
    for r in reg.runs():
        rec = {"run_id": r.run_id, "team": r.team, "system": r.system, "description": r.description,
               "url": r.team_url, "kind": r.kind, "status": r.status, "benchmark": r.benchmark, "board": r.board,
               "submitted_at": r.submitted_at, "graded_at": r.graded_at, "sha256": r.sha256,
               "data_digest": r.data_digest, "splits": r.splits, "dialeval_version": r.version,
               "reported_source": r.reported_source, "note": r.note, "chosen": bool(r.chosen),
               "problems": reg.problems(r.run_id),
               "records": [{k: x[k] for k in ("split", "group", "subset", "metric", "average", "value", "n",
                                              "signature")} for x in reg.records(run_id=r.run_id)]}
        if with_contact:
            rec["contact"] = reg.team_contact(r.team)
        lines.append(json.dumps(rec, ensure_ascii=False, sort_keys=True))
    atomic_write_text(out, "".join(line + "\n" for line in lines))
    return len(lines)


def export_csv(reg, out: Path, with_contact: bool = False) -> int:
    """Every score record with its run's team, system and board (formula-safe cells)."""
    from dialeval.files.write import atomic_write_text

    rows = []
    for r in reg.runs():
        for x in reg.records(run_id=r.run_id):
            row = {**x, "team": r.team, "system": r.system, "kind": r.kind, "board": r.board}
            if with_contact:
                row["contact"] = reg.team_contact(r.team)
            rows.append(row)
    cols = CSV_COLUMNS + (("contact",) if with_contact else ())
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in rows:
        w.writerow([csv_cell(row.get(c)) for c in cols])
    atomic_write_text(out, buf.getvalue())
    return len(rows)
