"""The Python API: validate and score a submission on any registered benchmark (everything the CLI does).

>>> from dialeval.api import score
>>> report = score("run.json", split="tst1", challenge="../shared/data/dstc6")           # DSTC6 (default)
>>> report = score("run.json", benchmark="babi", data="../shared/data/babi-dialog", split="tst")
>>> report.value("p@1", "tst1", 3), report.to_dataframe(), report.table.gold_rank

Defaults are the command line's: every split the submission covers, the benchmark's default metrics,
pessimistic ties for score-based submissions. There are no hidden data fallbacks: ``data`` (or its DSTC6
spelling ``challenge``) is required; only the command line knows the embedded default challenge.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from dialeval.benchmarks.base import DEFAULT_TIES, TIE_POLICIES, Evaluation, Request
from dialeval.benchmarks.registry import DEFAULT_BENCHMARK
from dialeval.core.errors import UsageError
from dialeval.core.signature import Signature
from dialeval.results.report import ScoreReport

if TYPE_CHECKING:  # numpy only when numbers are computed
    from dialeval.results.stats import BootstrapCI


def evaluate(
    submission: str | Path,
    *,
    benchmark: str = DEFAULT_BENCHMARK,
    data: str | Path | None = None,
    split: str | list[str] | None = None,
    keys: str | Path | None = None,
    groups: list | None = None,
    scoring: bool = True,
    ties: str = DEFAULT_TIES,
    options: dict | None = None,
) -> tuple[object, Evaluation]:
    """Run one benchmark reader: ``(benchmark object, Evaluation)`` (rank table, problems, provenance)."""
    from dialeval.benchmarks import registry

    bench = registry.get(benchmark)
    if data is None:
        raise UsageError(f"no data given for benchmark {benchmark}: pass data=DIR (the test files' folder)")
    if ties not in TIE_POLICIES:
        raise UsageError(f"--ties must be one of {', '.join(TIE_POLICIES)}, got {str(ties)[:20]!r}")
    request = Request(
        submission=submission,
        data=Path(data),
        split=split,
        keys=Path(keys) if keys else None,
        groups=[str(g) for g in groups] if groups else None,
        scoring=scoring,
        ties=ties,
        options=dict(options or {}),
    )
    registry.check_options(bench, request.options, request.keys)
    ev = bench.evaluate(request)
    ev.request = request
    if ev.data is not None and request.options.get("embedded_default"):
        ev.data.embedded_default = True
        ev.data.release, ev.data.split_releases, ev.data.modified = None, {}, []  # simulated: never a release
    if ev.data is not None:
        # a published file changed: the numbers must say so wherever they go (JSON notes, table, stderr)
        ev.notes.extend(ev.data.warnings())
    return bench, ev


def build_report(bench, ev: Evaluation, metrics=None, embedding_preset: str | None = None,
                 vectors: str | None = None, vectors_format: str = "auto", ci: BootstrapCI | None = None) -> ScoreReport:
    """Compute the records of an Evaluation with ``metrics`` (names; default: the benchmark's).

    Text metrics (embedding similarity of the top-1 response to the gold response) make the benchmark read
    the response texts; their options and the vectors' identity join the signature.
    """
    from dialeval.metrics import resolve

    chosen = resolve(metrics if metrics else bench.metrics_for(ev)) if ev.table is not None and ev.valid else []
    if any(m.needs == "texts" for m in chosen):
        ev.signature_fields = {**ev.signature_fields, **_add_text_values(bench, ev, embedding_preset,
                                                                                  vectors, vectors_format, chosen)}
    head = {"data": ev.data.label(ev.splits[0] if len(ev.splits) == 1 else "all")} if ev.data is not None else {}
    sig = Signature(bench.name).with_fields(**head, **ev.signature_fields)
    report = ScoreReport(
        signature=sig,
        submission=ev.submission,
        splits=ev.splits,
        groups=sorted(ev.groups, key=bench.group_sort_key),
        valid=ev.valid,
        problems=ev.problems,
        table=ev.table,
        data=ev.data,
        group_label=bench.group_label,
        notes=list(ev.notes),
    )
    if ev.table is None:
        return report
    return report.compute(chosen, subsets=bench.subsets, ci=ci)


def _add_text_values(bench, ev: Evaluation, preset: str | None, vectors: str | None = None,
                     vectors_format: str = "auto", chosen=()) -> dict:
    """Per-item embedding similarities into ``ev.table.values``; returns the signature fields they add.

    The preset's own empty-text rule applies, as in ``dialeval embed`` (``paper``: an item whose top-1 or gold
    text has no word with a vector is left out of the mean, NaN in the table); a note counts what was left
    out, per metric asked for."""
    from dialeval.formats.vectors import require_extra, vectors_signature_fields
    from dialeval.metrics.embedding import DEFAULT_PRESET, options_for, score_pairs

    require_extra()  # the same check and message as `dialeval embed`, before the texts are read
    opts = options_for(preset or DEFAULT_PRESET)
    hyps, refs = bench.texts(ev.request, ev)
    result = score_pairs(hyps, [[r] for r in refs], opts, None if vectors is None else str(vectors),
                         vectors_format=vectors_format)
    ev.table.values.update(result.table_values())
    for m in chosen:
        skipped = result.summaries[m.name].skipped if m.name in result.summaries else 0
        if skipped:
            ev.notes.append(f"{m.name}: {skipped:,} of {len(hyps):,} items left out (the top-1 or the gold response "
                            f"has no word with a vector; empty:{opts.empty}): its value is the mean of the other "
                            f"{len(hyps) - skipped:,}, its JSON records' n")
    fields: dict[str, object] = {"emb": opts.preset, "empty": opts.empty}
    if result.vectors:
        fields.update(vectors_signature_fields(result.vectors))
    return fields


def score(
    submission: str | Path,
    split: str | list[str] | None = None,
    challenge: str | Path | None = None,
    keys: str | Path | None = None,
    tasks: list | None = None,
    lenient: bool = False,
    candidate_limit: int | None = None,
    *,
    benchmark: str = DEFAULT_BENCHMARK,
    data: str | Path | None = None,
    metrics: str | list[str] | None = None,
    ties: str = DEFAULT_TIES,
    options: dict | None = None,
    embedding_preset: str | None = None,
    vectors: str | None = None,
    vectors_format: str = "auto",
    ci: BootstrapCI | None = None,
) -> ScoreReport:
    """Validate and score ``submission`` on ``split`` of a benchmark's data.

    An invalid submission gives a report with ``valid`` False, every problem in ``problems`` and no
    results. ``options`` are the benchmark's own (``dialeval benchmarks`` lists them; ``lenient`` and
    ``candidate_limit`` are shorthands for two of them); ``tasks`` restricts the groups; ``ties`` applies to
    score-based submissions. ``ci`` (e.g. ``BootstrapCI(level=0.95, resamples=1000, seed=12345)``) gives every
    record but a macro average its percentile bootstrap interval, ``ci_low``/``ci_high``, signed.
    """
    bench, ev = evaluate(
        submission, benchmark=benchmark, data=data if data is not None else challenge, split=split, keys=keys,
        groups=tasks, scoring=True, ties=ties, options=_options(lenient, candidate_limit, options),
    )
    return build_report(bench, ev, metrics, embedding_preset, vectors, vectors_format, ci)


def validate(
    submission: str | Path,
    split: str | list[str] | None = None,
    challenge: str | Path | None = None,
    tasks: list | None = None,
    lenient: bool = False,
    candidate_limit: int | None = None,
    *,
    benchmark: str = DEFAULT_BENCHMARK,
    data: str | Path | None = None,
    ties: str = DEFAULT_TIES,
    options: dict | None = None,
) -> ScoreReport:
    """Check ``submission`` against the test files only (no answer keys needed): problems, no scores."""
    bench, ev = evaluate(
        submission, benchmark=benchmark, data=data if data is not None else challenge, split=split,
        groups=tasks, scoring=False, ties=ties, options=_options(lenient, candidate_limit, options),
    )
    return build_report(bench, ev)


def _options(lenient: bool, candidate_limit: int | None, extra: dict | None) -> dict:
    """The benchmark options: ``extra`` plus the two shorthands, each only when given (the benchmark checks
    them against what it declares, and applies its own defaults)."""
    opts = dict(extra or {})
    if lenient:
        opts["lenient"] = True
    if candidate_limit is not None:
        opts["candidate_limit"] = candidate_limit
    return opts
