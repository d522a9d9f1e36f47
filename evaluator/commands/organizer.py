"""Organizer commands: ``grade``, ``compare``, ``rank``, ``registry`` (check, export, import), ``leaderboard`` (build).

They parse options, call :mod:`dialeval.leaderboard` and print; everything they do is callable from Python.
Team-supplied text is printed through :func:`dialeval.core.termsafe.safe` (no terminal control sequences).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from dialeval.benchmarks.base import TIE_POLICIES
from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.commands.embed import vectors_options
from dialeval.core.errors import SubmissionFault, UsageError
from dialeval.files.write import not_standard_output

REGISTRY_HELP = "Folder holding registry.sqlite (default: submissions/)."


def _safe(text) -> str:
    try:
        from dialeval.core.termsafe import safe
    except ImportError:  # pragma: no cover
        return str(text)
    return safe(text)


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.4f}"


def _registry_option(f):
    return click.option("--registry", "registry_dir", type=click.Path(file_okay=False), default="submissions",
                        show_default=True, help=REGISTRY_HELP)(f)


# ---- grade ----------------------------------------------------------------------------------------------
@click.command("grade")
@click.argument("runs", type=click.Path(exists=True, file_okay=False))
@click.option("--benchmark", default=DEFAULT_BENCHMARK, show_default=True, help="Benchmark the runs answer.")
@click.option("--data", type=click.Path(), default=None,
              help="The benchmark's data, as for score --data: a folder (or one data file, for benchmarks whose "
                   "release is single files), a fetched release's name, or sample:NAME.")
@click.option("--challenge", type=click.Path(file_okay=False), default=None, help="DSTC6 challenge folder (= --data).")
@click.option("--keys", type=click.Path(), default=None,
              help="Answer keys in a separate folder; for dstc7/dstc8 the ground-truth TSV.")
@click.option("--split", default=None,
              help="Grade new runs on these splits only (default: every split each run covers; a single result "
                   "file: the split its ids belong to). A run holding none of them is left out; a run graded "
                   "before is never recorded again.")
@_registry_option
@click.option("--board", default=None, help="Leaderboard name (default: <benchmark>-<data fingerprint>).")
@click.option("--jobs", type=click.IntRange(1, 256), default=1, show_default=True, help="Grading processes.")
@click.option("--challenge-file", type=click.Path(dir_okay=False), default=None,
              help="The challenge's challenge.toml (schemas/challenge): kept with the board; its phases, quotas and "
                   "counting rule are enforced.")
@click.option("--now", default=None,
              help="When this grade sees the runs (RFC 3339; default: DIALEVAL_NOW, else the clock): recorded as "
                   "each new run's graded_at, and the time its phase and quota day are judged at (team.json's "
                   "submitted_at never is). Give it only to replay runs collected earlier.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def grade_cmd(runs, benchmark, data, challenge, keys, split, registry_dir, board, jobs, challenge_file, now, as_json):
    """Grade every team run in RUNS (each with a team.json) into the registry.

    Unchanged submissions are skipped; invalid ones are recorded as rejected with their problems. Exit 1 when
    a run was rejected or could not be graded (bad team.json), else 0.
    """
    from dialeval.commands.score import resolve_data
    from dialeval.leaderboard.grade import grade

    rules = None
    if challenge_file:
        from dialeval.leaderboard.challenge import load

        rules = load(challenge_file)
    data_dir = resolve_data(benchmark, data, challenge)[0]
    summary = grade(runs, benchmark, data_dir, registry_dir, keys=keys, jobs=jobs, split=split, board=board,
                    challenge=rules, now=now)
    if as_json:
        click.echo(json.dumps({"registry": str(summary.registry), "metric": summary.metric,
                               "runs": [o.__dict__ for o in summary.outcomes]}, indent=2))
        return summary.exit_code
    from rich.markup import escape
    from rich.table import Table

    from dialeval.core.termsafe import print_table, table_console

    # team text and problem codes ("[bad-rank]") are shown as written, never read as rich markup
    t = Table(title=f"graded into {escape(_safe(summary.registry))}", title_justify="left")
    for col in ("entry", "team", "system", "status", "run", summary.metric, "problems"):
        t.add_column(col, overflow="fold")
    for o in summary.outcomes:
        style = {"valid": "green", "rejected": "red", "skipped": "red", "unchanged": "dim", "outside": "dim"}.get(o.status, "")
        t.add_row(escape(_safe(o.entry)), escape(_safe(o.team)), escape(_safe(o.system)), f"[{style}]{o.status}[/]",
                  str(o.run_id or "-"), _fmt(o.headline), escape(_safe(o.message)), style=None)
    print_table(table_console(markup=True, soft_wrap=False), t)
    if summary.challenge:
        which = _safe(challenge_file) if summary.challenge == "given" else "the board's kept challenge.toml"
        click.echo(f"challenge: {which} enforced (phases, quotas)")
    counts = ", ".join(f"{summary.count(s)} {s}" for s in ("valid", "rejected", "unchanged", "skipped", "outside")
                       if summary.count(s))
    click.echo(f"{len(summary.outcomes)} {'entry' if len(summary.outcomes) == 1 else 'entries'}: {counts or 'none'}")
    return summary.exit_code


# ---- compare ----------------------------------------------------------------------------------------------
def _benchmark_command():
    from dialeval.commands.score import BenchmarkCommand  # builds the chosen benchmark's own flags

    return BenchmarkCommand


def _load_run(ref: str, reg_dir: str, benchmark: str, data_root, keys, split, text_metrics=None, tasks=None,
              ties=None, shown=None, options=None):
    """(label, table, records, missing) for a run id in the registry or a submission file scored on the fly (on
    ``data_root()``: the data folder, resolved once for both runs, so a default's notice is said once).
    ``text_metrics`` (embedding metrics asked for: see :func:`score_submission`) need the file: the registry keeps
    each run's gold ranks, not its response texts; so do ``tasks`` and ``ties``, which score the file as `score
    --task` / `--ties` would (a registry run was graded on every task under its tie policy). ``missing``: the
    answer-key items a file does not rank (scored as misses; None for a registry run). ``shown``: the data and
    options to repeat in the hint for an invalid file, so that following it validates what was compared."""
    if ref.isdigit() and not Path(ref).exists():
        from dialeval.leaderboard.registry import Registry

        if text_metrics:
            raise UsageError(f"run {ref}: the registry keeps no response texts, so the embedding metrics "
                             f"({text_metrics['metrics']}) need the submission files (and --data)")
        given_flags = [f"--{k.replace('_', '-')}" for k in options or {}]
        for flag, given in (("--task", tasks), ("--ties", ties), *((f, True) for f in given_flags)):
            if given:
                raise UsageError(f"run {ref}: {flag} applies to runs given as files (a registry run was graded on "
                                 f"every task under its own tie policy); compare the two submission files with "
                                 f"--data")
        with Registry(reg_dir, create=False, reading=True) as reg:
            row = reg.run(int(ref))
            if row.status != "valid":  # the run's fault, as for a submission file found invalid: exit 1
                raise SubmissionFault(f"run {ref} was rejected: nothing to compare")
            table = reg.table(row.run_id)
            if table is None:
                raise UsageError(f"run {ref} has no per-item results (a reported result?)")
            return f"run {row.run_id} ({row.team} / {row.system})", table, reg.records(row.run_id), None
    from dialeval.core.problems import counted
    from dialeval.leaderboard.scoring import score_submission

    root = data_root()
    try:
        g = score_submission(ref, benchmark, root, keys, split, groups=tasks, options=options,
                             text_metrics=text_metrics, ties=ties)
    except UsageError as e:  # say which of the two runs it is about, unless it names it or is about --task alone
        text = str(e)
        if text.startswith((f"{ref}:", "--task")):
            raise
        raise UsageError(f"{ref}: {text}") from None
    if not g.valid:
        raise SubmissionFault(f"{ref}: invalid submission ({counted(g.errors, 'error')}); see `dialeval validate "
                              f"{' '.join([ref, *(shown or [])])}`")
    return ref, g.table, g.records, g.missing


@click.command("compare", cls=_benchmark_command(), scoring=True, exclude=("protocols",))
@click.argument("run_a")
@click.argument("run_b")
@click.option("--metric", "metrics", default=None, help="Comma-separated metrics (default: the runs' metrics).")
@click.option("--split", "scope", default=None, help="Compare on one split only (default: every common item).")
@click.option("--task", multiple=True, help="Runs given as files: only these tasks/groups, as score --task (e.g. "
              "--task 1 or --task 1,3-5).")
@click.option("--ties", type=click.Choice(TIE_POLICIES), default=None,
              help="Runs given as files, score-based: the tie policy, as score --ties (default: pessimistic).")
@click.option("--resamples", type=click.IntRange(100, 1_000_000), default=1000, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=12345, show_default=True)
@_registry_option
@click.option("--benchmark", default=DEFAULT_BENCHMARK, show_default=True, help="For runs given as files.")
@click.option("--data", type=click.Path(), default=None,
              help="For runs given as files: the benchmark's data, as for score --data.")
@click.option("--challenge", type=click.Path(), default=None, help="Another name for --data, as for score.")
@click.option("--keys", type=click.Path(), default=None, help="For runs given as files: as for score --keys.")
@click.option("--embedding-preset", type=click.Choice(("paper", "hed-dlg", "nlg-eval")), default=None,
              help="Text metrics (embedding-average, greedy-matching, vector-extrema; runs given as files only): "
                   "as `score --embedding-preset`.")
@vectors_options
@click.option("--json", "as_json", is_flag=True)
def compare_cmd(run_a, run_b, metrics, scope, task, ties, resamples, seed, registry_dir, benchmark, data, challenge,
                keys, embedding_preset, vectors, vformat, as_json, **bench_opts):
    """Paired tests of RUN_A against RUN_B (run ids or submission files) on the answer-key items of the scope.

    Each run is scored as `score` scores it, so an item a run does not rank counts as a miss (a line says how many
    a file leaves out; --task and --split narrow the comparison to what both runs rank).
    Per metric: the difference A - B with its paired-bootstrap 95 % interval, the approximate-randomization and
    bootstrap p-values (R resamples: a p-value at the floor prints as "< 1/(R+1)", e.g. "< 0.0010", since no
    resample was as extreme and the true value may be far smaller), and for 0/1 metrics on independent items
    (P@1, hits@1, accuracy) McNemar's exact p-value. Other metrics, or turns clustered in conversations, have no
    exact test: there the randomization test (exact up to Monte Carlo error) stands. The signature starts with
    the benchmark and the data identity and names the split scope (split:tst1, split:all). Embedding metrics
    (runs given as files) leave out an item whose top-1 or gold text has no word with a vector in either run; those
    items are dropped from both sides and counted.
    """
    from functools import cache

    from dialeval.commands.score import _check_text_options, _tasks, given_options, refuse_empty, resolve_data
    from dialeval.leaderboard.bands import compare_runs
    from dialeval.metrics import resolve
    from dialeval.results.stats import ar_floor, format_p

    refuse_empty("--metric", metrics, "for the runs' metrics")
    _check_text_options(metrics, vectors, vformat, embedding_preset)
    tasks = _tasks(task)
    options = given_options(bench_opts)  # the benchmark's own (--contexts, --lenient, ...), as score takes them
    text = None
    if metrics and any(m.needs == "texts" for m in resolve(metrics)):  # scored from the files' texts
        text = {"metrics": metrics, "embedding_preset": embedding_preset, "vectors": vectors,
                "vectors_format": vformat}
    data_root = cache(lambda: resolve_data(benchmark, data, challenge)[0])
    one = scope if scope not in (None, "all") else None  # a file is scored on the split compared, as score --split
    # what `dialeval validate` needs to check a file as it was scored here
    shown = [*(["--benchmark", benchmark] if benchmark != DEFAULT_BENCHMARK else []),
             *(["--data", data or challenge] if data or challenge else []), *(["--keys", keys] if keys else []),
             *(["--split", one] if one else []), *(["--task", ",".join(task)] if task else []),
             *(f"--{k.replace('_', '-')}" if v is True else f"--{k.replace('_', '-')} {v}" for k, v in options.items())]
    la, ta, ra, ma = _load_run(run_a, registry_dir, benchmark, data_root, keys, one, text, tasks, ties, shown, options)
    lb, tb, rb, mb = _load_run(run_b, registry_dir, benchmark, data_root, keys, one, text, tasks, ties, shown, options)
    ba, bb = ({r["benchmark"] for r in recs if r.get("benchmark")} for recs in (ra, rb))
    if ba and bb and ba != bb:  # else "the two runs share no scored item", which hides why
        raise UsageError(f"{_safe(la)} is a {', '.join(sorted(ba))} run and {_safe(lb)} a {', '.join(sorted(bb))} "
                         "run: compare runs of one benchmark")
    names = metrics or ",".join(dict.fromkeys(r["metric"] for r in ra if r["metric"] in {x["metric"] for x in rb}))
    if not names:
        raise UsageError("the two runs share no metric; give --metric")
    results = compare_runs(ta, tb, names.split(","), resamples, seed, scope=scope, records_a=ra, records_b=rb)
    # the scope the signature names (the splits both runs cover), so text, JSON and signature say the same
    signed = dict(p.partition(":")[::2] for p in results[0].signature.split("|")[1:]).get("split", scope or "all")
    # a run leaving items out is scored as `score` scores it (misses), which a comparison must not hide
    missing = {"a": ma or 0, "b": mb or 0}
    notes = [f"{which}: {n:,} of the {len(t):,} items scored are not in {_safe(label)}: each counts as a miss, as "
             "in `score` (--task or --split compares only what both runs rank)"
             for which, n, t, label in (("A", ma, ta, la), ("B", mb, tb, lb)) if n]
    if as_json:
        click.echo(json.dumps({"a": la, "b": lb, "scope": signed, "missing": missing, "notes": notes,
                               "results": [r.to_json() for r in results]}, indent=2))
        return 0
    click.echo(f"A: {_safe(la)}\nB: {_safe(lb)}\nscope: {signed} (the answer-key items of the scope)")
    click.echo(f"{'metric':<24}{'A':>9}{'B':>9}{'A-B':>9}  {'95% CI of A-B':<20}{'p (AR)':>10}{'p (boot)':>10}"
               f"{'p (exact)':>11}")
    for r in results:
        ci = f"[{r.diff_low:+.4f}, {r.diff_high:+.4f}]"
        click.echo(f"{r.metric:<24}{r.a:9.4f}{r.b:9.4f}{r.diff:+9.4f}  {ci:<20}{r.p_randomization_text:>10}"
                   f"{r.p_bootstrap_text:>10}{r.p_exact_text:>11}")
    sizes = {(r.n, r.clusters) for r in results}  # metrics may differ (an embedding metric leaves items out)
    units = (f"{results[0].n} ({results[0].clusters} clusters)" if len(sizes) == 1 else
             ", ".join(f"{r.n} ({r.clusters} clusters) for {r.metric}" for r in results))
    click.echo(f"units: {units}; {resamples} resamples: the smallest p (AR) "
               f"is {format_p(ar_floor(resamples))}, p (boot) {format_p(1 / (resamples + 1))}, shown as \"<\" at that "
               "floor; p (exact): McNemar, 0/1 metrics on independent items only")
    for r in results:
        if r.left_out:
            click.echo(f"{r.metric}: {r.left_out} item(s) of both runs left out by the metric in either run (an "
                       f"empty text under empty:skip) are not compared: units {r.n}")
    for note in notes:
        click.echo(f"note: {note}")
    for r in results:
        click.echo(f"signature: {r.signature}")
    return 0


# ---- rank -----------------------------------------------------------------------------------------------------
def _rank_help() -> str:
    from dialeval.results.stats import RULES

    return (f"""Order runs by a metric and group them into significance bands.

    Bands (--bands): "pairwise" (default): {RULES["pairwise"]}. "neighbour": {RULES["neighbour"]}.

    Tests (--test): "auto" (default) uses McNemar's exact test for 0/1 metrics on independent items (P@1,
    hits@1, accuracy) and approximate randomization (cluster swaps) otherwise, with enough resamples that the
    Holm correction can reject; a p-value at the resampling floor prints as "< 1/(R+1)". Equal scores: earliest
    submission first. As on the site, a team's runs count as one entry (its earlier runs are left out as
    superseded; --all-runs ranks every run). Reported results (no per-item results) are never banded; a board of reported results
    only is listed as reported. The signature starts with the benchmark and the data identity, names the split
    scope, the band rule and the test.
    """).replace("\n    ", "\n")


@click.command("rank", help=_rank_help())
@_registry_option
@click.option("--board", default=None, help="Leaderboard (default: the only one in the registry).")
@click.option("--metric", default=None, help="Ranking metric (default: the benchmark's first).")
@click.option("--split", "scope", default=None, help="Rank on one split (default: everything).")
@click.option("--bands", "rule", type=click.Choice(["pairwise", "neighbour"]), default="pairwise", show_default=True,
              help="Band rule: pairwise (no two runs in a band differ significantly) or neighbour (the DSTC6 "
                   "overview's chaining of neighbour tests, to reproduce it).")
@click.option("--test", type=click.Choice(["auto", "mcnemar", "ar"]), default="auto", show_default=True,
              help="Pairwise test: McNemar (exact; 0/1 metrics on independent items), approximate randomization, "
                   "or auto (McNemar where it applies).")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True)
@click.option("--resamples", type=click.IntRange(100, 10_000_000), default=None,
              help="Randomization resamples (default: enough for Holm over the tests to be able to reject).")
@click.option("--seed", type=click.IntRange(min=0), default=12345, show_default=True)
@click.option("--all-runs", is_flag=True, help="Rank every run; by default, as on the site, a team's earlier runs "
              "are left out (superseded) and only the run that counts is ranked.")
@click.option("--json", "as_json", is_flag=True)
def rank_cmd(registry_dir, board, metric, scope, rule, test, alpha, resamples, seed, all_runs, as_json):
    from dialeval.commands.score import refuse_empty
    from dialeval.leaderboard.bands import rank_board
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.scoring import benchmark_info

    refuse_empty("--metric", metric, "for the benchmark's first metric")
    with Registry(registry_dir, create=False, reading=True) as reg:
        board = _pick_board(reg, board)
        runs = reg.runs(board=board)
        if not runs:
            raise UsageError(f"board {board!r} has no runs")
        metric = metric or benchmark_info(runs[0].benchmark)["default_metrics"][0]
        from dialeval.metrics import TEXT_METRICS, get

        if get(metric).name in TEXT_METRICS:  # said before the metric's own error, which speaks to Python callers
            raise UsageError(f"--metric {metric}: the registry keeps no response texts, so runs are not ranked on "
                             "an embedding metric; compare two runs' files with `dialeval compare A.json B.json "
                             f"--metric {metric}`")
        _check_scope(scope, runs, board)
        from dialeval.leaderboard.site import board_superseded

        # the runs the site ranks: a team's runs compete as one entry (the board's counting rule), unless --all-runs
        left_out = frozenset() if all_runs else frozenset(board_superseded(reg, board))
        ranking = rank_board(reg, board, metric, scope, alpha, resamples, seed, rule=rule, test=test,
                             exclude=left_out)
        if left_out:
            ranking.notes.append(f"{len(left_out)} superseded run(s) left out: a team's runs count as one entry, "
                                 "chosen by the board's counting rule as on the site (--all-runs ranks every run)")
    if as_json:
        click.echo(json.dumps(ranking.to_json(), indent=2))
        return 0
    if ranking.reported_only:
        click.echo(f"board {_safe(board)} · {ranking.metric} on {ranking.scope} · reported results only, not banded")
    else:
        click.echo(f"board {_safe(board)} · {ranking.metric} on {ranking.scope} · bands: {ranking.rule}"
                   + (f", test: {ranking.test}" if ranking.test else ""))
    if ranking.reported_only:  # published numbers: no band, no interval, no test to show
        for i, r in enumerate(ranking.rows, 1):
            label = _safe(f"{r.team} / {r.system}")[:39]
            click.echo(f"{i:>3}  {label:<40}{r.score:9.4f}" + (f"  {_safe(r.note)}" if r.note else ""))
        for n in ranking.notes:
            click.echo(f"note: {_safe(n)}")
        return 0
    # the name column fits the longest "team / system (badge)" up to RANK_NAME_WIDTH; a longer name is cut, its
    # badge kept, so every row's numbers stay under their heading
    badges = [{"baseline": " (baseline)", "reported": " (reported)"}.get(r.kind, "") for r in ranking.rows]
    names = [_safe(f"{r.team} / {r.system}") for r in ranking.rows]
    width = max([40] + [min(len(n) + len(b), RANK_NAME_WIDTH) + 1 for n, b in zip(names, badges)])
    if ranking.rows:
        click.echo(f"{'#':>3} {'band':>4}  {'team / system':<{width}}{ranking.metric:>9}  {'95% CI':<19}{'p next':>9}")
    for i, (r, name, badge) in enumerate(zip(ranking.rows, names, badges), 1):
        label = name[:width - 1 - len(badge)] + badge
        ci = f"[{_fmt(r.low)}, {_fmt(r.high)}]" if r.low is not None else "-"
        band = str(r.band) if r.band else "-"
        why = f"  new band: differs from #{r.differs_from} (p {r.p_differs_text})" if r.differs_from else ""
        note = f"  {_safe(r.note)}" if r.note else ""
        click.echo(f"{i:>3} {band:>4}  {label:<{width}}{r.score:9.4f}  {ci:<19}{r.p_next_text:>9}{why}{note}")
    for n in ranking.notes:
        click.echo(f"note: {_safe(n)}")
    if ranking.signature:
        click.echo(f"signature: {ranking.signature}")
    return 0


RANK_NAME_WIDTH = 60
"""Characters of "team / system (badge)" that ``rank`` shows; a longer name is cut (the site shows it whole)."""


def _check_scope(scope: str | None, runs, board: str) -> None:
    """``rank --split``: a split of the board's runs, or exit 2 (as ``grade`` and ``leaderboard build`` do)."""
    if scope in (None, "all"):
        return
    have = sorted({s for r in runs for s in r.splits})
    if scope not in have:
        shown = scope if len(scope) <= 40 else scope[:40] + "..."
        raise UsageError(f"--split: {_safe(shown)!r} is not a split of board {_safe(board)!r} "
                         f"(it has: {', '.join(have) or 'none'})")


def _pick_board(reg, board: str | None) -> str:
    boards = reg.boards()
    if board:
        if board not in boards:
            raise UsageError(f"no board {board!r} in the registry (have: {', '.join(boards) or 'none'})")
        return board
    if len(boards) == 1:
        return boards[0]
    raise UsageError(f"the registry holds several boards; give --board ({', '.join(boards) or 'none'})")


# ---- registry ---------------------------------------------------------------------------------------------------
@click.group("registry")
def registry_group():
    """Check, export and import into the organizer's registry database."""


@registry_group.command("check")
@_registry_option
def registry_check_cmd(registry_dir):
    """PRAGMA integrity_check, foreign keys and dialeval's own invariants; exit 1 on any problem."""
    from dialeval.leaderboard.registry import Registry

    with Registry(registry_dir, create=False, reading=True) as reg:
        found = reg.check()
        n = 0 if found else len(reg.runs())  # a damaged row is a finding, never read as a run
        path = reg.path
    for line in found:
        click.echo(f"{path}: {line}")
    if found:
        return 1
    click.echo(f"{path}: ok ({n} run{'s' if n != 1 else ''})")
    return 0


@registry_group.command("export")
@_registry_option
@click.option("--out", type=click.Path(dir_okay=False), required=True, help="File to write (.jsonl or .csv).")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default=None,
              help="Default: from the file name.")
@click.option("--with-contact", is_flag=True, help="Include team contact addresses (organizer archive only).")
def registry_export_cmd(registry_dir, out, fmt, with_contact):
    """Write every run (JSONL, schemas/run-record) or every score record (CSV) for archiving."""
    from dialeval.files.write import check_output, protect
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import export_csv, export_jsonl

    protect(registry_dir, "the registry")  # an export must never replace the database it reads
    check_output(out, parents=True)
    if out != "-":  # nor sit among the organizer's inputs, where the next grade would take it for a run
        from dialeval.leaderboard.outdir import check_outside_inputs

        check_outside_inputs(out, Path(registry_dir), "the export")
    fmt = fmt or ("csv" if out.lower().endswith(".csv") else "jsonl")
    with Registry(registry_dir, create=False, reading=True) as reg:
        n = (export_csv if fmt == "csv" else export_jsonl)(reg, Path(out), with_contact=with_contact)
    # to standard output (--out -) the export is the data: the count goes to stderr, never into the JSONL/CSV
    click.echo(f"wrote {out} ({n} {'records' if fmt == 'csv' else 'runs'})", err=out == "-")
    return 0


@registry_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@_registry_option
@click.option("--board", required=True, help="Leaderboard the reported results belong to (e.g. dstc6-2017).")
@click.option("--benchmark", default=DEFAULT_BENCHMARK, show_default=True)
@click.option("--team-prefix", default="", help="Prefix for team names (e.g. 'DSTC6 team ').")
def registry_import_cmd(file, registry_dir, board, benchmark, team_prefix):
    """Import reported results (a paper's or an overview's numbers) from CSV or JSON: shown, never re-scored."""
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.reported import import_reported, parse_reported
    from dialeval.leaderboard.site import visible

    if visible(team_prefix) != team_prefix:  # said once, not on every row it would start
        raise UsageError(f"--team-prefix \"{visible(team_prefix)}\" holds control or invisible characters; give "
                         "plain text")
    teams = parse_reported(Path(file), benchmark, team_prefix)  # a bad file is refused before a registry is made
    with Registry(registry_dir) as reg:
        created, unchanged = import_reported(reg, Path(file), board=board, benchmark=benchmark,
                                             team_prefix=team_prefix, teams=teams)
    click.echo(f"imported {created} reported run(s) into board {board} ({unchanged} already there)")
    return 0


# ---- leaderboard ------------------------------------------------------------------------------------------------
@click.group("leaderboard")
def leaderboard_group():
    """Build the static leaderboard site."""


def _check_site_folder(out: Path, registry_dir: Path) -> None:
    """The site folder is replaced as a whole: see :func:`dialeval.files.outdir.check_out_folder`."""
    from dialeval.files.outdir import check_out_folder
    from dialeval.leaderboard.outdir import SITE, check_outside_inputs

    check_out_folder(out, SITE, protect={"the registry": registry_dir})
    check_outside_inputs(out, registry_dir, "the site")  # a site is made to be published, never among the inputs


@leaderboard_group.command("build")
@_registry_option
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Site folder to write.",
              callback=not_standard_output)
@click.option("--private", is_flag=True, help="Include hidden splits (organizers only; never publish it).")
@click.option("--hidden-splits", default="", help="Comma-separated splits shown only with --private: SPLIT hides it "
              "on every board (each must have it), BOARD:SPLIT on that board only.")
@click.option("--title", default="dialeval leaderboard", show_default=True, help="The site's and every board's heading.")
@click.option("--all-runs", is_flag=True, help="Rank every run; by default a team's earlier runs are listed as "
              "superseded and only its latest is ranked.")
@click.option("--reveal", is_flag=True, help="Publish the splits of hidden test phases that have ended (refused "
              "while one has not).")
@click.option("--now", default=None, help="The time phases are judged at (RFC 3339; default: DIALEVAL_NOW, else "
              "the clock).")
def leaderboard_build_cmd(registry_dir, out, private, hidden_splits, title, all_runs, reveal, now):
    """Render the registry as a static site (no server, no CDN; opens from file://)."""
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site, visible

    if visible(title) != title:  # a control or invisible character would be published in every page's heading
        raise UsageError(f"--title \"{visible(title)}\" holds control or invisible characters; give plain text")
    hidden = [s.strip() for s in hidden_splits.split(",") if s.strip()]
    _check_site_folder(Path(out), Path(registry_dir))
    with Registry(registry_dir, create=False, reading=True) as reg:
        index = build_site(reg, Path(out), private=private, hidden_splits=hidden, title=title, all_runs=all_runs,
                           reveal=reveal, now=now)
    click.echo(f"site: {index}  (open it in a browser{'; PRIVATE: do not publish' if private else ''})")
    return 0
