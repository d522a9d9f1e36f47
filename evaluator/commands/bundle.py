"""``dialeval bundle``: host a challenge on Codabench or EvalAI with dialeval as the scoring program.

The commands parse options and call :mod:`dialeval.leaderboard.hosting`; ``codabench-score`` is the command a
Codabench bundle's scoring program runs inside the scoring image.
"""

from __future__ import annotations

from pathlib import Path

import click

from dialeval.benchmarks.registry import DEFAULT_BENCHMARK


def _common(f):
    f = click.option("--challenge", "challenge_file", type=click.Path(dir_okay=False), default=None,
                     help="The organizer's challenge.toml (schemas/challenge): title, pages, phases, quotas. Default "
                          "for the embedded default data: the shipped demo challenge.")(f)
    f = click.option("--out", type=click.Path(dir_okay=False), required=True, help="The .zip to write.")(f)
    f = click.option("--keys", multiple=True, metavar="[SPLIT=]PATH",
                     help="Answer keys in a separate folder; for dstc7/dstc8 the ground-truth TSV, which goes only to the "
                          "phases on the split whose examples it answers (SPLIT=FILE names it). Repeatable: one key per "
                          "split.")(f)
    f = click.option("--data", type=click.Path(), default=None,
                     help="The benchmark's data with its answer keys, as for score --data: a folder (or one data file, "
                          "for benchmarks whose release is single files), a fetched release's name, or sample:NAME "
                          "(default: the embedded default).")(f)
    f = click.option("--benchmark", default=DEFAULT_BENCHMARK, show_default=True, help="The benchmark submissions answer.")(f)
    return f


def _inputs(benchmark, data, keys, challenge_file, out):
    """(data folder, keys as (split or None, path), Challenge or None), every input protected from the output
    before any work."""
    from dialeval.commands.score import resolve_data
    from dialeval.files.write import check_output, protect
    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import key_args

    root, embedded = resolve_data(benchmark, data, None)
    if challenge_file is None and embedded and challenges.load(challenges.DEFAULT_FILE).benchmark == benchmark:
        challenge_file = challenges.DEFAULT_FILE  # the shipped demo challenge is written for that benchmark's data
    keys = key_args(keys)
    given = [(root, "the data"), *((k, "the answer keys") for _, k in keys), (challenge_file, "the challenge file")]
    for path, what in given:
        if path is not None:
            protect(path, what)
    if not str(out).lower().endswith(".zip"):
        raise click.UsageError("--out must name a .zip file")
    check_output(out)
    import os

    where = Path(os.path.realpath(Path(out).parent))
    for folder, what in ((root, "the data"), *((k, "the answer keys") for _, k in keys)):
        if folder is not None and os.path.isdir(folder) and (where == Path(os.path.realpath(folder)) or Path(os.path.realpath(folder)) in where.parents):
            raise click.UsageError(f"--out {out}: inside {what} folder ({folder}); write the bundle elsewhere")
    ch = challenges.load(challenge_file) if challenge_file is not None else None
    return Path(root), keys, ch


@click.group("bundle")
def bundle_group():
    """Write a Codabench competition bundle or an EvalAI challenge configuration that scores with dialeval."""


@bundle_group.command("codabench")
@_common
@click.option("--image", default=None, help="The scoring image in competition.yaml: an image built from the bundle's "
              "Dockerfile and pushed (dialeval preinstalled: scores without network). Default: python:3.12-slim, into "
              "which each scoring installs the bundle's own dialeval wheel with pip (its dependencies come from PyPI: the "
              "worker needs network).")
def codabench_cmd(benchmark, data, keys, out, challenge_file, image):
    """A Codabench v2 competition bundle: competition.yaml, pages, logo, per phase a task with its reference data
    (test files and answer keys) and a scoring program running `dialeval bundle codabench-score`, and the
    Dockerfile of the scoring image (installing this very dialeval from the wheel each scoring program carries)."""
    from dialeval.leaderboard.hosting import codabench_bundle, write_bundle

    root, keys, ch = _inputs(benchmark, data, keys, challenge_file, out)
    entries = codabench_bundle(benchmark, root, keys, ch, image=image)
    write_bundle(entries, out)
    click.echo(f"wrote {out} ({len(entries)} files; it holds answer keys: keep it private)")
    if image is None:
        click.echo("note: its scoring installs dialeval with pip on the worker (the bundle's own wheel; its dependencies "
                   "come from PyPI: needs network); to score offline, "
                   "build its Dockerfile, push it and rebuild with --image NAME (see README.txt in the bundle)")
    return 0


@bundle_group.command("evalai")
@_common
def evalai_cmd(benchmark, data, keys, out, challenge_file):
    """An EvalAI challenge configuration: challenge_config.yaml, templates, logo, per phase an annotation archive
    (test files and answer keys), and evaluation_script.zip whose evaluate() scores with this dialeval version."""
    from dialeval.leaderboard.hosting import evalai_bundle, write_bundle

    root, keys, ch = _inputs(benchmark, data, keys, challenge_file, out)
    entries = evalai_bundle(benchmark, root, keys, ch)
    write_bundle(entries, out)
    click.echo(f"wrote {out} ({len(entries)} files; it holds answer keys: keep it private)")
    return 0


@bundle_group.command("codabench-score")
@click.argument("res", type=click.Path())
@click.argument("ref", type=click.Path())
@click.argument("out", type=click.Path(file_okay=False))
@click.option("--benchmark", default=DEFAULT_BENCHMARK, show_default=True)
@click.option("--split", default=None, help="Score these splits only (comma list).")
@click.option("--hidden-until", default=None, metavar="END",
              help="A hidden phase (ending at END, or 'reveal'): no number in the detailed results or the log.")
@click.option("--data-file", default=None, metavar="NAME",
              help="REF holds the data as this one file (a bundle made with --data FILE): scored as that file.")
@click.option("--keys-file", default=None, metavar="NAME",
              help="REF holds the answer keys as this file (a bundle made with --keys FILE).")
def codabench_score_cmd(res, ref, out, benchmark, split, hidden_until, data_file, keys_file):
    """The scoring program: score the submission in RES against the reference data in REF and write
    OUT/scores.json ({metric: value}) and OUT/detailed_results.html. An invalid submission: one line on stderr,
    exit 1, nothing written."""
    from dialeval.leaderboard.hosting import codabench_score

    values = codabench_score(res, ref, out, benchmark, [s for s in (split or "").split(",") if s] or None,
                             hidden_until, data_file, keys_file)
    click.echo("scored; scores hidden until the phase ends" if hidden_until else
               " ".join(f"{k}={v:.4f}" for k, v in values.items()))
    return 0
