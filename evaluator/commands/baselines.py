"""``dialeval baseline list|run|reference`` and ``dialeval reproduce babi``: parse options, call the library, print.

The work is done by :mod:`dialeval.baselines.run` (:func:`run_baseline`), :mod:`dialeval.baselines.reference` and
:mod:`dialeval.baselines.reproduce`; only this command layer knows the embedded default challenge.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from dialeval.baselines.reproduce import (
    _fmt,
    _git_commit,
    merge_records,
    parse_models,
    parse_params,
    parse_tasks,
    render_markdown,
    reproduce_babi,
    run_variants,
)
from dialeval.baselines.run import run_baseline
from dialeval.core.errors import UsageError
from dialeval.files.write import not_standard_output


@click.group("baseline")
def baseline_group():
    """List and run the reference baselines."""


@baseline_group.command("list")
def list_cmd():
    """List the registered baselines (name, needs training, availability, description)."""
    from dialeval.baselines.registry import REGISTRY

    width = max(len(name) for name in REGISTRY)  # one column for every name, however long
    for spec in REGISTRY.values():
        ok, why = spec.available()
        train = "needs training" if spec.needs_training else "no training"
        click.echo(f"{spec.name:<{width}}  {train:<15} {'available' if ok else why}  — {spec.description}")
    return 0


@baseline_group.command("reference")
@click.option("--out", type=click.Path(file_okay=False), default="submissions/baselines/default", show_default=True,
              callback=not_standard_output,
              help="Where each baseline's submission.tgz, report.json and run.json go (one folder per baseline).")
@click.option("--models", default=",".join(("random", "tfidf", "nearest-neighbor", "rule-based")), show_default=True,
              help="Comma-separated baselines to rebuild (see `dialeval baseline list`).")
def reference_cmd(out, models):
    """Rebuild the reference submissions on the embedded default challenge (top-10 ranks, seed 0)."""
    from dialeval.baselines.reference import build_all
    from dialeval.simulator.default import ensure_default_challenge

    names = parse_models(models)
    for name, rep in build_all(Path(out), ensure_default_challenge(), names).items():
        p1 = next(r["value"] for r in rep["results"] if r["split"] == "all" and r["metric"] == "p@1"
                  and r["average"] == "micro")
        click.echo(f"{name:<18} P@1 (all splits, micro) {p1:.4f}  -> {Path(out) / name}")
    return 0


def _refuse_babi_text(challenge: str, split: str) -> None:
    """The bAbI release's folder (FB text files, no split folders) is not a DSTC6-layout challenge: say what to run
    instead of "split 'tst' not found (available: none)"."""
    root = Path(challenge)
    if not (root / split).is_dir() and root.is_dir() and any(root.glob("dialog-babi-task*-*.txt")):
        raise UsageError(f"--challenge {challenge}: holds bAbI dialog text files, not DSTC6 split folders: `dialeval "
                         f"reproduce babi --data {challenge}` trains and tests the baselines on them, or convert a task "
                         f"first (`dialeval convert babi-to-dstc6 --data {challenge} --task N --split {split} --out DIR`)")


@baseline_group.command("run")
@click.argument("name")
@click.option(
    "--challenge", default=None, type=click.Path(),
    help="Challenge directory (split folders; trn/ to train), or sample:dstc6. Default: $DIALEVAL_CHALLENGE, else "
         "the embedded default challenge.",
)
@click.option("--split", required=True, help="Split folder to rank, e.g. tst1 or tst.")
@click.option(
    "--out",
    required=True,
    type=click.Path(),
    callback=not_standard_output,
    help="A .json file (one result file for every task) or a directory (<out>/<split>/<stem>.answers.json).",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Random seed.")
@click.option(
    "--top-k",
    type=click.IntRange(1),
    default=10,
    show_default=True,
    help="Write the k best candidates per item (ranks 1..k); 10 covers every DSTC6 item's candidates.",
)
def run_cmd(name, challenge, split, out, seed, top_k):
    """Run baseline NAME on every dataset file of a challenge split and write a standard result file (top-k ranks)."""
    from dialeval.baselines.registry import get_spec
    from dialeval.commands.score import resolve_data
    from dialeval.files.write import protect

    get_spec(name)
    challenge = resolve_data("dstc6", None, challenge, flag="--challenge")[0]
    _refuse_babi_text(challenge, split)
    protect(challenge, "a file of the challenge")  # --out into the challenge must never replace its answer keys
    from dialeval.core.termsafe import progress

    with progress(f"baseline {name} on {split}") as bar:
        paths = run_baseline(name, challenge, split, out, seed=seed, top_k=top_k, echo=bar.describe)
    for p in paths:
        click.echo(f"wrote {p}")
    return 0


@click.group("reproduce")
def reproduce_group():
    """Reproduce published baseline tables."""


@reproduce_group.command("babi")
@click.option("--data", "data_dir", required=True, type=click.Path(), help="bAbI dialog data directory, or babi-dialog (the fetched release).")
@click.option("--out", "out_dir", required=True, type=click.Path(), help="Directory for babi-table2.md / .json.",
              callback=not_standard_output)
@click.option(
    "--models",
    default="random,tfidf,nearest-neighbor,rule-based",
    show_default=True,
    help="Comma-separated names of registered baselines (see `dialeval baseline list`).",
)
@click.option("--tasks", default="1-6", show_default=True, help="Tasks, e.g. 1-6 or 1,3.")
@click.option(
    "--max-conversations", type=click.IntRange(1), default=None, help="Use only the first N conversations per split."
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--variants", is_flag=True, help="Also score the paper-plausible TF-IDF / NN variants on tst (documented)."
)
@click.option(
    "--merge",
    is_flag=True,
    help="Keep the rows of other models (and tasks) already in OUT/babi-table2.json; rows of this run replace "
    "the ones with the same model, task and split.",
)
@click.option("--check", is_flag=True, help="Exit 1 when a row misses its target (the table marks it ✗).")
@click.option("--jobs", type=click.IntRange(1), default=1, show_default=True,
              help="Run the (model, task) jobs in N processes, longest first; each gets DIALEVAL_TORCH_THREADS / N "
                   "torch threads. Same records, in the same order, as one process.")
@click.option("--param", "params", multiple=True, metavar="KEY=JSON",
              help="Override a model parameter for every model and task, e.g. --param epochs=40 or "
                   "--param 'unseen=\"random\"' (repeatable; on top of the stored table's settings).")
@click.option("--time-limit", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Stop jobs still running after SECONDS (runs them in worker processes); the table is written with "
                   "the finished ones and lists the rest.")
def reproduce_babi_cmd(data_dir, out_dir, models, tasks, max_conversations, seed, variants, merge, check, jobs, params,
                       time_limit):
    """Train (trn, selecting on dev) and test every baseline on bAbI tasks × (tst, tst-OOV); write Table 2.

    Each model's rankings are scored by the babi benchmark. Progress goes to stderr; exit 0 when written,
    1 with --check when a target is missed, 2 on usage errors.
    """
    from dialeval.commands.score import resolve_data
    from dialeval.files.read import not_a_folder
    from dialeval.files.write import atomic_write_text
    from dialeval.formats.jsonio import dump_json_file, load_json_file

    model_list = parse_models(models)
    task_list = parse_tasks(tasks)
    overrides = parse_params(params)
    data_dir = resolve_data("babi", data_dir, None)[0]  # a release name (babi-dialog) means its fetched copy
    if not Path(data_dir).is_dir():
        raise not_a_folder(data_dir, "bAbI data directory")
    command = (
        "dialeval " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        if sys.argv[1:2] == ["reproduce"]
        else (
            "dialeval reproduce babi "
            + shlex.join(
                ["--data", str(data_dir), "--out", str(out_dir), "--models", models, "--tasks", tasks]
                + (["--max-conversations", str(max_conversations)] if max_conversations else [])
                + (["--variants"] if variants else [])
                + (["--merge"] if merge else [])
                + (["--jobs", str(jobs)] if jobs > 1 else [])
                + [a for p in params for a in ("--param", p)]
                + (["--time-limit", f"{time_limit:g}"] if time_limit else [])
            )
        )
    )
    out = Path(out_dir)
    old_records: list[dict] = []
    old_variants: list[dict] | None = None
    if merge:
        if (out / "babi-table2.json").is_file():
            old_records = load_json_file(out / "babi-table2.json")
            if not isinstance(old_records, list) or not all(isinstance(r, dict) and "model" in r for r in old_records):
                raise UsageError(f"{out / 'babi-table2.json'}: not a reproduction table (a list of records)")
        if (out / "babi-table2.variants.json").is_file():
            old_variants = load_json_file(out / "babi-table2.variants.json")

    from dialeval.core.termsafe import progress

    commit = _git_commit()

    def write_table(records: list[dict], running: list | None = None) -> None:
        # rewritten (atomically) after every finished job too, so a run stopped from outside keeps its finished rows
        dump_json_file(out / "babi-table2.json", merge_records(old_records, records) if merge else records)
        atomic_write_text(out / "babi-table2.md", render_markdown(
            merge_records(old_records, records) if merge else records, command, commit,
            var if var is not None else old_variants, unfinished, failed, running))

    # A bar on a terminal (the current model/task/split); quiet in logs and pipes, where the table is the record.
    unfinished: list = []
    failed: list = []
    var = None
    with progress("reproduce babi") as bar:
        records = reproduce_babi(data_dir, model_list, task_list, max_conversations, seed, echo=bar.describe,
                                 jobs=jobs, params=overrides, time_limit=time_limit, unfinished=unfinished,
                                 failed=failed, on_records=write_table)
        var = (run_variants(data_dir, model_list, task_list, max_conversations, seed, echo=bar.describe)
               if variants else None)
    if merge and var is not None and old_variants:
        var = merge_records(old_variants, var, key=("model", "task", "split", "params"))
    if var is not None:
        dump_json_file(out / "babi-table2.variants.json", var)
    write_table(records)
    if merge:
        records = merge_records(old_records, records)
    click.echo(f"wrote {out / 'babi-table2.md'}")
    click.echo(f"wrote {out / 'babi-table2.json'}")
    if unfinished:
        click.echo(f"{len(unfinished)} job(s) not finished within --time-limit: "
                   + ", ".join(f"{m} T{t}" for m, t in unfinished), err=True)
    for m, t, why in failed:  # the table holds the other jobs' rows; the failure is ours (exit 3)
        click.echo(f"error: job {m} T{t} failed: {why}", err=True)
    misses = [r for r in records if r["meets_target"] is False]
    if misses:
        click.echo(f"{len(misses)} target(s) missed (see the report)", err=True)
        if check:
            for r in misses:
                click.echo(f"  {r['model']} T{r['task']} {r['split']}: {r['per_response']:.1f} vs paper "
                           f"{_fmt(r['paper_per_response'])}", err=True)
    if failed:
        return 3
    return 1 if check and (misses or unfinished) else 0
