"""``dialeval validate`` and ``dialeval score``: parse options, call :mod:`dialeval.api`, print."""

from __future__ import annotations

import sys
from collections import defaultdict

import click

from dialeval.benchmarks.base import DEFAULT_TIES, TIE_POLICIES
from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.commands import notice
from dialeval.commands.embed import vectors_options
from dialeval.commands.wording import reword
from dialeval.core.errors import UsageError
from dialeval.core.problems import Problem, describe
from dialeval.core.termsafe import safe
from dialeval.results.printed import SCORE_LAYOUTS

SCREEN_PER_CODE = 5


MAX_TASK = 1000
"""Task numbers are small: a range past this is refused before it is expanded (1-20000000 is a typo)."""


def refuse_empty(flag: str, value: str | None, instead: str) -> None:
    """An option given an empty list (``--metrics "$METRICS"`` with the variable unset) is a usage error, never
    silently its default: the user asked for something and would get something else."""
    if value is not None and not value.replace(",", "").strip():
        raise UsageError(f"{flag} is empty (leave it out {instead})")


def _tasks(values: tuple[str, ...]) -> list[int | str] | None:
    """``--task`` values: numbers and number ranges (``1,3-5``) expanded and bounded here; any other name
    (``test.csv``, a benchmark's string group) is passed on as it is, for the benchmark to accept or refuse."""
    out: set[int] = set()
    names: list[str] = []

    def number(text: str, part: str) -> int:
        if not (text.isascii() and text.isdigit()) or len(text) > 12:  # "²" is a digit to Python, not a task
            raise UsageError(f"--task: cannot read {part[:40]!r} (use e.g. 1,3 or 1-5)")
        n = int(text)
        if not 1 <= n <= MAX_TASK:
            raise UsageError(f"--task: {n} is not a task number (1-{MAX_TASK})")
        return n

    def numeric(text: str) -> bool:
        return all(c.isdigit() or c.isspace() for c in text) and any(c.isdigit() for c in text)

    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            a, dash, b = part.partition("-")
            if not (numeric(a) and (not dash or numeric(b))):
                if part not in names:
                    names.append(part)  # a group name: the benchmark interprets it
                continue
            if "-" in part:
                a, _, b = part.partition("-")
                lo, hi = number(a, part), number(b, part)
                if lo > hi:
                    raise UsageError(f"--task: cannot read {part!r}: the range runs backwards (use e.g. 1-5)")
                out.update(range(lo, hi + 1))
            else:
                out.add(number(part, part))
    if values and not (out or names):
        refuse_empty("--task", "", "to take every task")
    return [*sorted(out), *names] or None


def common_options(f):
    f = click.option("--benchmark", "benchmark", default=DEFAULT_BENCHMARK, show_default=True,
                     help="Benchmark to score against (see `dialeval benchmarks`).")(f)
    f = click.option("--data", type=click.Path(), default=None,
                     help="The benchmark's data: a folder of its test files (or one data file, for benchmarks whose "
                          "release is single files), a fetched release's name (`dialeval data list`), or "
                          "sample:NAME (`dialeval data sample`). Default: the folder the benchmark's environment "
                          "variable names, else its part of the embedded default challenge, else its sample data "
                          "(which one is said on stderr).")(f)
    f = click.option("--challenge", type=click.Path(file_okay=False), default=None,
                     help="Another name for --data, for a folder (or a release name, or sample:NAME), on every "
                          "benchmark: kept for command lines from the DSTC6-only versions, where the data folder "
                          "(tst1/ ... tst4/) was the challenge directory.")(f)
    f = click.option("--split", default=None,
                     help="Split(s): tst1, 'tst1,tst2' or 'all'. Default: every split the submission covers; for "
                          "one DSTC6 result file, the challenge's only split.")(f)
    f = click.option("--task", "task", multiple=True, help="Only these tasks/groups, e.g. --task 1 or --task 1,3-5.")(f)
    f = click.option("--ties", type=click.Choice(TIE_POLICIES), default=DEFAULT_TIES, show_default=True,
                     help="Score-based submissions: where a gold tied with other candidates ranks (pessimistic: after "
                          "all of them; optimistic: before; expected: the mean over the tied positions; input-order: "
                          "the data's candidate order, a stable sort as DAM's scorer). Always in the signature of "
                          "such runs.")(f)
    f = click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schemas/score-report).")(f)
    f = click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write the report (JSON or CSV) to FILE.")(f)
    f = click.option("--max-problems", type=click.IntRange(min=0), default=SCREEN_PER_CODE, show_default=True,
                     help="Problems shown on screen per code (--json holds every problem a reader lists: up to 20 "
                          "of each code, then a note counting the rest).")(f)
    return f


def _default_text(owners: list) -> str:
    """`` [default: X]``, or each benchmark's own default where the benchmarks sharing an option differ (Douban's
    ``--contexts`` counts mixed contexts, DSTC8's every example): one default would be wrong for the others."""
    by_default: dict[str, list[str]] = {}
    for bench, opt in owners:
        if opt.default is not None and opt.kind != "flag":
            by_default.setdefault(str(opt.default), []).append(bench)
    if len(by_default) == 1:
        return f" [default: {next(iter(by_default))}]"
    if not by_default:
        return ""
    return " [default: " + "; ".join(f"{', '.join(b)}: {d}" for d, b in by_default.items()) + "]"


def benchmark_params(scoring: bool, names: list[str] | None = None, exclude: tuple[str, ...] = ()) -> list[click.Option]:
    """Click options for every option the benchmarks ``names`` (None: every registered one) declare
    (``Benchmark.options``), but those named in ``exclude``: this module names none of them. Each is None unless
    given, so the benchmark applies its own default."""
    from dialeval.benchmarks import registry

    out: list[click.Option] = []
    for name, owners in registry.declared_options(names).items():
        o = owners[0][1]
        if not o.cli or (o.scoring_only and not scoring) or name in exclude:
            continue
        helps = list(dict.fromkeys(opt.help for _, opt in owners))
        text = " ".join(helps) + _default_text(owners)
        if o.kind == "flag":
            out.append(click.Option([o.flag, name], is_flag=True, default=None, help=text))
        elif o.kind == "int":
            out.append(click.Option([o.flag, name], type=click.IntRange(o.low, o.high), default=None, help=text))
        elif o.kind == "choice":
            out.append(click.Option([o.flag, name], type=click.Choice(o.choices), default=None, help=text))
        else:
            out.append(click.Option([o.flag, name], default=None, help=text))
    return out


def chosen_benchmark(args: list[str]) -> str | None:
    """The ``--benchmark`` a command line names (its default when it names none); None for ``--help``, or
    when the name is not a registered benchmark (then every benchmark's flags are built and the command
    reports the unknown name as usual)."""
    from dialeval.benchmarks import registry

    chosen = DEFAULT_BENCHMARK
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            break
        if a in ("--help", "-h"):
            return None
        if a == "--benchmark" and i + 1 < len(args):
            chosen, i = args[i + 1], i + 1
        elif a.startswith("--benchmark="):
            chosen = a.partition("=")[2]
        i += 1
    return chosen if chosen in registry.names() else None


class BenchmarkCommand(click.Command):
    """``validate`` / ``score``: the benchmark flags are those of the chosen ``--benchmark`` only.

    Building every benchmark's flags would import every benchmark's reader (and numpy with most of them) on
    each run; ``--help`` still lists them all. A flag of another benchmark then is unknown to click, and
    is reported the way :func:`dialeval.benchmarks.registry.check_options` reports it to the API.
    """

    def __init__(self, *args, scoring: bool, exclude: tuple[str, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.scoring = scoring
        self.exclude = exclude  # benchmark options this command does not take (compare: --protocols, a display)
        self.own_params = list(self.params)

    def parse_args(self, ctx, args):
        chosen = chosen_benchmark(args)
        self.params = self.own_params + benchmark_params(self.scoring, None if chosen is None else [chosen],
                                                         self.exclude)
        reword(self)  # the benchmark's flags are made here, after dialeval.cli gave the command its wording
        try:
            rest = super().parse_args(ctx, list(args))
        except click.NoSuchOption as e:
            from dialeval.benchmarks import registry

            if chosen is not None and e.option_name in registry.declared_flags():
                registry.check_options(registry.get(chosen), {e.option_name[2:].replace("-", "_"): None})
            raise
        if chosen is not None and ctx.params.get("benchmark") != chosen:  # the scan was fooled (a value that
            # looks like an option): parse again with every benchmark's flags, the benchmark checks the rest
            ctx.params.clear()
            self.params = self.own_params + benchmark_params(self.scoring, exclude=self.exclude)
            reword(self)
            rest = super().parse_args(ctx, list(args))
        return rest


def given_options(bench_opts: dict) -> dict:
    """The benchmark options the user gave (flags left off and options not given are not passed on)."""
    return {k: v for k, v in bench_opts.items() if v is not None and v is not False}


def resolve_data(benchmark: str, data: str | None, challenge: str | None, flag: str = "--data",
                 split: str | None = None) -> tuple[str, bool]:
    """The data folder and whether it is the embedded default (only the command line knows the defaults).

    Without a folder: the folder the benchmark's ``data_env`` variable names, then its ``embedded_folder`` of the
    embedded default challenge, then its sample data (``submissions/samples/<benchmark>``); which one is used is
    said on stderr. ``split``: the one split the command reads, so that only its part of the embedded default is
    generated on first use (an unknown or no split: all of it, so that messages list every split)."""
    import os

    from dialeval.benchmarks import registry

    if data and challenge and data != challenge:
        raise UsageError("give --data or --challenge, not both")
    chosen = data or challenge
    if chosen:
        return _folder_or_release(benchmark, chosen, "--data" if data else flag), False
    bench = registry.get(benchmark)
    env = os.environ.get(bench.data_env) if bench.data_env else None
    if env:
        if not os.path.isdir(env):  # say where the path came from: the user may not remember setting it
            found = "not a folder" if os.path.lexists(env) else "no such folder"
            raise UsageError(f"{bench.data_env}={env}: {found} (the environment variable names the {benchmark} "
                             f"data; unset it or pass {flag} DIR)")
        return env, False
    real = f"pass {flag} DIR{f' or set {bench.data_env}' if bench.data_env else ''} for real data"
    if bench.embedded_folder is None:
        from dialeval.commands.data import samples

        sample = samples().get(benchmark)
        if sample is None:
            raise UsageError(f"{flag} DIR is required for benchmark {benchmark} (its test files' folder)")
        notice(f"dialeval: no {flag} given: using dialeval's sample {benchmark} data (a few constructed items, "
               f"the same as {flag} sample:{benchmark}; {real})")
        return str(sample), False
    from dialeval.simulator.default import PARTS, ensure_default_challenge

    part = bench.embedded_folder or split
    root = ensure_default_challenge(parts=[part] if part in PARTS else None) / bench.embedded_folder
    notice(f"dialeval: no {flag} given: using the embedded default {benchmark} data (simulated; {real})")
    return str(root), True


def _folder_or_release(benchmark: str, chosen: str, flag: str = "--data") -> str:
    """``--data``: a folder as given, ``sample:NAME`` (dialeval's sample data), or a known release's name
    (``babi-dialog``) resolved to its fetched copy.

    An existing folder of that name wins (offline machines keep working on folders as before)."""
    import os

    if os.path.exists(chosen):
        return chosen
    from dialeval.commands.data import SAMPLE_PREFIX, resolve_release, resolve_sample

    if chosen.startswith(SAMPLE_PREFIX):
        return str(resolve_sample(chosen, benchmark, flag))
    if "/" in chosen or os.sep in chosen:
        return chosen
    found = resolve_release(chosen, benchmark)
    if found is None:  # neither a folder nor a release: a typo of a release's name is said as such
        from dialeval.core.errors import did_you_mean
        from dialeval.files.releases import registry

        hint = did_you_mean(chosen, registry().releases)
        if hint:
            raise UsageError(f"--data {chosen}: no such folder or release{hint}")
    return str(found) if found is not None else chosen


def _print_problems(problems: list[Problem], per_code: int, benchmark: str) -> None:
    if not problems:
        return
    def write(text: str) -> None:
        # ids come from the submission: control characters (ESC, CR) and lone surrogates are escaped
        sys.stderr.write(safe(text) + "\n")

    from dialeval.benchmarks import registry

    own = registry.get(benchmark).problem_codes
    by_code: dict[tuple[str, str], list[Problem]] = defaultdict(list)
    notes: list[Problem] = []
    for p in problems:
        if p.code:
            by_code[(p.severity, p.code)].append(p)
        else:  # a reader's "... more problems not listed": a note, not a problem (no code, not counted)
            notes.append(p)
    # a summary line stands for the problems it does not list (count): the totals say how many there are in all
    n_err = sum(p.count for (sev, _), v in by_code.items() if sev == "error" for p in v)
    n_warn = sum(p.count for v in by_code.values() for p in v) - n_err
    write(f"{n_err} error(s), {n_warn} warning(s)")
    for (sev, code), items in sorted(by_code.items(), key=lambda kv: (kv[0][0] != "error", kv[0][1])):
        listed = [p for p in items if p.count == 1]
        write(f"  {sev} [{code}] x{sum(p.count for p in items)}: {describe(code, own)}")
        for p in listed[:per_code]:
            write(f"    {p.where()}: {p.message}")
        if len(listed) > per_code:
            write(f"    ... and {len(listed) - per_code} more (listed in --json)")
        for p in items:
            if p.count > 1:
                write(f"    {p.where()}: {p.message}")
    for p in notes:
        write(f"  {p.file + ': ' if p.file else ''}{p.message}")




def _check_stdin(submission: str, benchmark: str) -> None:
    """``-`` for a benchmark that reads no standard input: said as such, not "-: no such file"."""
    if submission != "-":
        return
    from dialeval.benchmarks import registry

    if not registry.get(benchmark).reads_stdin:
        readers = [n for n in registry.names() if registry.get(n).reads_stdin]
        raise UsageError(f"-: standard input is read for {', '.join(readers)} submissions only; give the {benchmark} "
                         "submission as a file")


def _guard_outputs(submission: str, data: str, keys: str | None, as_json: bool, as_csv: bool, *outs) -> None:
    """Refuse option combinations and outputs that would clobber an input, before any work."""
    from dialeval.files.write import check_output, protect, refuse_shared_outputs

    if as_json and as_csv:
        raise UsageError("give --json or --csv, not both")
    out, per_item = (list(outs) + [None, None])[:2]
    if per_item == "-" and (out == "-" or (as_json or as_csv) and not out):  # one stream cannot hold both
        raise UsageError(f"--per-item - and {'--out -' if out == '-' else '--json' if as_json else '--csv'} would both "
                         "write to standard output: give one of them a file")
    refuse_shared_outputs(dict(zip(("--out", "--per-item"), outs)))
    if submission != "-":
        protect(submission, "the submission")
    for folder in (data, keys):
        if folder:
            protect(folder, "a file of the challenge")
    for o in outs:  # now, before reading anything: a refused output costs no scoring
        if o:
            check_output(o)


def _warn_data(report) -> None:
    """A changed published file, said on stderr whatever the output format (after every output is written, so a
    failed write stays one line)."""
    if report.data is not None:
        for line in report.data.warnings():
            click.echo(f"dialeval: warning: {safe(line)}", err=True)


def _emit(report, as_json: bool, as_csv: bool, out: str | None) -> None:
    from dialeval.files.write import atomic_write_text

    if out:
        text = report.to_csv_text() if (as_csv or out.endswith(".csv")) and not as_json else report.to_json_text()
        atomic_write_text(out, text, parents=False)
        if out != "-":
            click.echo(f"report written to {safe(out)}", err=True)
    if as_json and not out:
        sys.stdout.write(report.to_json_text())
    elif as_csv and not out:
        sys.stdout.write(report.to_csv_text())




@click.command("validate", cls=BenchmarkCommand, scoring=False)
@click.argument("submission", type=click.Path())
@common_options
def validate_cmd(submission, benchmark, data, challenge, split, task, ties, as_json, out, max_problems, **bench_opts):
    """Check SUBMISSION against a benchmark's test files (no answer keys needed).

    SUBMISSION is a result JSON, a directory in the official layout, a .tgz of one, or (where the benchmark takes
    them) a score file. Exit 0 valid, 1 invalid, 2 usage or I/O error, 3 internal error.
    """
    from dialeval.api import validate

    _check_stdin(submission, benchmark)
    root, embedded = resolve_data(benchmark, data, challenge, split=split)
    _guard_outputs(submission, root, None, as_json, False, out)
    opts = given_options(bench_opts)
    report = validate(submission, split, tasks=_tasks(task), benchmark=benchmark, data=root, ties=ties,
                      options={"embedded_default": embedded, **opts})
    _emit(report, as_json, False, out)
    if not as_json or (out and out != "-"):
        _print_problems(report.problems, max_problems, benchmark)
        n = report.counts
        status = "valid" if report.valid else "INVALID"
        click.echo(f"{safe(submission)}: {status} ({n['errors']} error(s), {n['warnings']} warning(s); "
                   f"{benchmark} split {', '.join(report.splits)}; mode {'lenient' if opts.get('lenient') else 'strict'})",
                   err=out == "-")
    elif not report.valid:  # the report is on stdout: one line on stderr says why the exit code is 1
        click.echo(f"{safe(submission)}: INVALID ({report.counts['errors']} error(s)); every problem is in the report",
                   err=True)
    _warn_data(report)
    return 0 if report.valid else 1


def _check_text_options(metrics, vectors, vformat, embedding_preset) -> None:
    """The embedding metrics' options without one of them in --metrics is a usage error: they would change nothing,
    and a user who gives --vectors expects numbers computed with them."""
    given = [flag for flag, value, default in (("--vectors", vectors, "default"), ("--vectors-format", vformat, "auto"),
                                               ("--embedding-preset", embedding_preset, None)) if value != default]
    if not given:
        return
    from dialeval.metrics import resolve

    if metrics and any(m.needs == "texts" for m in resolve(metrics)):
        return
    verb = "changes" if len(given) == 1 else "change"
    raise UsageError(f"{' and '.join(given)} only {verb} the embedding metrics (embedding-average, greedy-matching, "
                     "vector-extrema), and none is asked for: add one to --metrics (e.g. --metrics p@1,embedding-average)")


def _check_print_as(print_as, benchmark, metrics, as_json, as_csv) -> None:
    """``--print-as``: a layout the benchmark has, with the numbers it prints, and not beside another stdout format."""
    if not print_as:
        return
    from dialeval.benchmarks import registry
    from dialeval.results.printed import DSTC6_OFFICIAL_METRICS

    if as_json or as_csv:
        raise UsageError(f"give --print-as or {'--json' if as_json else '--csv'}, not both (both print on stdout)")
    if benchmark in registry.names() and print_as not in registry.get(benchmark).print_layouts:
        raise UsageError(f"--print-as {print_as}: not a layout of benchmark {benchmark} "
                         f"(it has {', '.join(registry.get(benchmark).print_layouts) or 'none'})")
    if metrics and not set(DSTC6_OFFICIAL_METRICS) <= {m.strip() for m in metrics.split(",")}:
        raise UsageError(f"--print-as {print_as} prints {', '.join(DSTC6_OFFICIAL_METRICS)}: add them to --metrics "
                         "or leave --metrics out")


def _bootstrap(ci: bool, level: float | None, resamples: int | None, seed: int | None, print_as: str | None):
    """``score --ci``'s settings (None without ``--ci``). Its options without it are a usage error (they would change
    nothing), and so is ``--print-as`` beside it (another tool's lines have no place for an interval)."""
    given = [flag for flag, value in (("--ci-level", level), ("--ci-resamples", resamples), ("--seed", seed))
             if value is not None]
    if not ci:
        if given:
            verb = "changes" if len(given) == 1 else "change"
            raise UsageError(f"{' and '.join(given)} only {verb} the intervals of --ci, which is not given: add --ci")
        return None
    if print_as:
        raise UsageError(f"give --ci or --print-as {print_as}, not both (its lines have no place for an interval)")
    from dialeval.results.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, BootstrapCI

    if level is not None and round(level * 100, 3) != round(level * 100, 9):  # the signature says it to 3 decimals
        raise UsageError(f"--ci-level {level!r}: give at most 5 decimals (e.g. 0.95 or 0.999), as the signature "
                         "says the level")
    return BootstrapCI(DEFAULT_CONFIDENCE if level is None else level,
                       DEFAULT_RESAMPLES if resamples is None else resamples, DEFAULT_SEED if seed is None else seed)


def _print_as(report, print_as: str) -> None:
    """The tool's lines alone on stdout; the signature (naming the layout) and the data line on stderr."""
    from dataclasses import replace

    from dialeval.core.termsafe import table_console
    from dialeval.results.printed import dstc6_official_lines
    from dialeval.results.render import print_footer

    for line in dstc6_official_lines(report):
        click.echo(line)
    signed = replace(report, signature=report.signature.with_fields(print=print_as))
    print_footer(signed, table_console(stderr=True))


@click.command("score", cls=BenchmarkCommand, scoring=True)
@click.argument("submission", type=click.Path())
@common_options
@click.option("--embedding-preset", type=click.Choice(("paper", "hed-dlg", "nlg-eval")), default=None,
              help="Text metrics (embedding-average, greedy-matching, vector-extrema): definitions as published "
                   "(paper, default) or as the hed-dlg / nlg-eval scripts compute them.")
@vectors_options
@click.option("--metrics", default=None,
              help="Comma-separated metrics (e.g. p@1,mrr,hits@10,r10@2); default: the benchmark's own list.")
@click.option("--keys", type=click.Path(), default=None,
              help="Directory holding the answer keys (<stem>.answers.json), if not beside the test files; for "
                   "dstc7/dstc8 the ground-truth TSV (example-id<TAB>id1,id2,...).")
@click.option("--csv", "as_csv", is_flag=True, help="Print the results as CSV (same columns as the JSON records).")
@click.option("--per-item", type=click.Path(dir_okay=False), default=None,
              help="Write JSONL (item id, group, gold rank) to FILE. ORGANIZERS ONLY: it reveals the answer key.")
@click.option("--print-as", "print_as", type=click.Choice(tuple(SCORE_LAYOUTS)), default=None,
              help="Print the numbers in another tool's layout instead of the table (dstc6-official: the official "
                   "DSTC6 scorer's 'Precision @1: <float>' lines per answer file); the signature goes to stderr.")
@click.option("--ci", is_flag=True,
              help="Give every number (but a macro average) its percentile bootstrap confidence interval over the "
                   "items, resampling whole conversations where the benchmark has them (as compare does): [lo, hi] in "
                   "the table, ci_low/ci_high in --json/--csv; the settings join the signature "
                   "(ci:bootstrap-percentile|bs:R|seed:S|conf:L).")
@click.option("--ci-level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="--ci: the interval's confidence level, a fraction (at most 5 decimals).  [default: 0.95]")
@click.option("--ci-resamples", type=click.IntRange(100, 1_000_000), default=None,
              help="--ci: bootstrap resamples.  [default: 1000]")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="--ci: the resamples' random seed (the same seed gives the same intervals, byte for byte).  "
                   "[default: 12345]")
def score_cmd(submission, benchmark, data, challenge, split, task, ties, as_json, out, max_problems, embedding_preset,
              vectors, vformat, metrics, keys, as_csv, per_item, print_as, ci, ci_level, ci_resamples, seed,
              **bench_opts):
    """Validate and score SUBMISSION on a benchmark (default dstc6: P@1, P@2, P@5, MRR per task and split).

    Exit 0 scored, 1 invalid (strict mode) or a submission the official scorer would crash on (--lenient),
    2 usage or I/O error, 3 internal error (a bug: one line; DIALEVAL_DEBUG=1 adds the traceback).
    """
    from dialeval.api import score

    refuse_empty("--metrics", metrics, "for the benchmark's own metrics")
    _check_print_as(print_as, benchmark, metrics, as_json, as_csv)
    if print_as and per_item == "-":
        raise UsageError(f"--per-item - and --print-as {print_as} would both write to standard output: give "
                         "--per-item a file")
    _check_text_options(metrics, vectors, vformat, embedding_preset)
    bootstrap = _bootstrap(ci, ci_level, ci_resamples, seed, print_as)
    if vectors != "default" and vformat != "default":  # a missing or special file is refused before any work
        from dialeval.files.read import check_regular

        check_regular(vectors, what="a word-vectors file")
    _check_stdin(submission, benchmark)
    root, embedded = resolve_data(benchmark, data, challenge, split=split)
    _guard_outputs(submission, root, keys, as_json, as_csv, out, per_item)
    options = {"embedded_default": embedded, **given_options(bench_opts)}
    report = score(submission, split, keys=keys, tasks=_tasks(task), benchmark=benchmark, data=root, metrics=metrics,
                   ties=ties, options=options, embedding_preset=embedding_preset,
                   vectors=vectors, vectors_format=vformat, ci=bootstrap)
    _emit(report, as_json, as_csv, out)
    to_file = bool(out) and out != "-"
    if not as_json or to_file:
        # problems go to stderr, so a --csv on stdout stays a clean table
        _print_problems(report.problems, max_problems, benchmark)
    if not (as_json or as_csv or out) or to_file:
        if report.valid and print_as:
            _print_as(report, print_as)
        elif report.valid:
            from dialeval.core.termsafe import table_console
            from dialeval.results.render import print_table

            # with --per-item -, standard output holds the per-item lines alone (as embed --per-pair -)
            print_table(report, table_console(stderr=per_item == "-"))
        else:
            click.echo(f"{safe(submission)}: INVALID, not scored ({report.counts['errors']} error(s)); "
                       "see above, or --json for the full list", err=True)
    elif not report.valid:  # the report is on stdout: one line on stderr says why the exit code is 1
        click.echo(f"{safe(submission)}: INVALID, not scored ({report.counts['errors']} error(s)); every problem is in "
                   "the report", err=True)
    if per_item and report.valid:
        from dialeval.files.write import atomic_write_text

        atomic_write_text(per_item, "".join(line + "\n" for line in report.per_item_lines()), parents=False)
    _warn_data(report)
    return 0 if report.valid else 1


@click.command("benchmarks")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def benchmarks_cmd(as_json):
    """List the registered benchmarks with their splits, default metrics and submission formats."""
    import json

    from dialeval.benchmarks import registry

    rows = []
    for name in registry.names():
        b = registry.get(name)
        rows.append({"name": name, "title": b.title, "splits": list(b.split_names),
                     "metrics": list(b.default_metrics), "group": b.group_label,
                     "submissions": list(b.submission_formats),
                     "options": [o.flag for o in b.options if o.cli] + (["--keys"] if b.separate_keys else []),
                     "api_options": [o.name for o in b.options if not o.cli],
                     "print_as": list(b.print_layouts),
                     # text only: a choice option shows its values (the named variants: --bleu-variant sacrebleu|toolkit)
                     "_choices": {o.flag: "|".join(o.choices) for o in b.options if o.cli and o.kind == "choice"}})
    choices = [r.pop("_choices") for r in rows]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return 0
    import textwrap

    for r, shown in zip(rows, choices):
        r["options"] = [f"{o}={shown[o]}" if o in shown else o for o in r["options"]]
        click.echo(f"{r['name']}: {r['title']}")
        for label, value in (("splits", " ".join(r["splits"])), ("metrics", ", ".join(r["metrics"])),
                             ("submissions", "; ".join(r["submissions"])),
                             ("options", " ".join(r["options"]) or "none"),
                             *((("API options", ", ".join(r["api_options"])),) if r["api_options"] else ()),
                             *((("print as", "; ".join(f"--print-as {p}: {SCORE_LAYOUTS[p]}" for p in r["print_as"])),)
                               if r["print_as"] else ())):
            click.echo(textwrap.fill(value, width=100, break_on_hyphens=False, initial_indent=f"  {label + ':':<13}",
                                     subsequent_indent=" " * 15))
    from dialeval.results.printed import EMBED_LAYOUTS

    # the embedding metrics belong to no one benchmark: their tools' printed layouts are named once, after the list
    click.echo("embedding metrics (dialeval embed):")
    click.echo(textwrap.fill("; ".join(f"--print-as {k}: {v}" for k, v in EMBED_LAYOUTS.items()), width=100,
                             initial_indent=f"  {'print as:':<13}", subsequent_indent=" " * 15))
    return 0
