"""``dialeval convert``: bAbI (FB text) ↔ DSTC6 JSON. The logic lives in :mod:`dialeval.formats.convert`."""

from __future__ import annotations

import click

from dialeval.core.errors import UsageError
from dialeval.core.problems import counted
from dialeval.files.write import not_standard_output
from dialeval.formats.convert import babi_splits


def _refuse_overwrite(paths, force: bool) -> None:
    """Like ``simulate``: existing outputs are replaced only with --force (a typo must not eat a file)."""
    from dialeval.core.errors import UsageError

    existing = [str(p) for p in paths if p.exists() or p.is_symlink()]
    if existing and not force:
        raise UsageError(f"{existing[0]} already exists; pass --force to replace it")


FORCE = click.option("--force", is_flag=True, help="Replace output files that already exist.")


@click.group("convert")
def convert_group():
    """Convert between bAbI dialog (FB text) and DSTC6 JSON."""


@convert_group.command("babi-to-dstc6")
@click.option("--data", "data_dir", required=True, type=click.Path(),
              help="bAbI dialog data directory, babi-dialog (the fetched release) or sample:babi.")
@click.option("--task", required=True, type=int, help="bAbI task number (1-6).")
@click.option("--split", required=True, help="Split to convert: trn, dev, tst or tst-OOV (task 6 has no tst-OOV).")
@click.option("--out", "out_dir", required=True, type=click.Path(), help="Output challenge directory.",
              callback=not_standard_output)
@click.option(
    "--candidates",
    type=click.Choice(["full", "sampled"]),
    default="sampled",
    show_default=True,
    help="full: every line of the candidate file per item (large: ~250 KB per item); "
    "sampled: gold + distractors, half from the context, half from other bot utterances (like DSTC6).",
)
@click.option(
    "--n-candidates", type=click.IntRange(1), default=10, show_default=True, help="Candidates per item (sampled)."
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed for ids and sampling.")
@click.option(
    "--embed-answers/--no-embed-answers",
    default=None,
    help="Add each item's 'answer' field (default: yes for trn/dev, no for test splits).",
)
@click.option(
    "--max-conversations", type=click.IntRange(1), default=None, help="Convert only the first N conversations."
)
@FORCE
def babi_to_dstc6_cmd(data_dir, task, split, out_dir, candidates, n_candidates, seed, embed_answers, max_conversations,
                      force):
    """Write <out>/<split>/dialog-task{N}{NAME}-babi-{split}.json and its .answers.json key (gold at rank 1)."""
    from pathlib import Path

    from dialeval.commands.score import resolve_data
    from dialeval.core.errors import UsageError
    from dialeval.formats.convert import babi_dataset_name, babi_to_dstc6
    from dialeval.formats.dstc6 import answers_file_name

    if task not in range(1, 7):
        raise UsageError(f"--task: bAbI tasks are 1-6, got {task}")
    data_dir = resolve_data("babi", data_dir, None)[0]  # a release name or sample:babi means its folder
    if split not in babi_splits(task):
        raise UsageError(f"bAbI task {task} has no split {split!r} (valid: {', '.join(babi_splits(task))})")
    dataset = Path(out_dir) / split / babi_dataset_name(task, split)
    _refuse_overwrite([dataset, dataset.with_name(answers_file_name(dataset.name))], force)
    res = babi_to_dstc6(
        data_dir,
        task,
        split,
        out_dir,
        candidates=candidates,
        n_candidates=n_candidates,
        seed=seed,
        embed_answers=embed_answers,
        max_conversations=max_conversations,
    )
    click.echo(f"wrote {res.dataset} ({counted(res.items, 'item')}, {counted(res.conversations, 'conversation')})")
    click.echo(f"wrote {res.answers}")
    return 0


@convert_group.command("dstc6-to-babi")
@click.option("--dataset", required=True, type=click.Path(), help="DSTC6 dataset file (.json).")
@click.option(
    "--answers",
    type=click.Path(),
    default=None,
    help="Answer key (<stem>.answers.json); optional when items carry 'answer'.",
)
@click.option("--out", "out_path", required=True, type=click.Path(), help="Output FB dialog file (.txt).")
@click.option(
    "--candidates-out", type=click.Path(), default=None, help="Candidates file (default: <out stem>-candidates.txt)."
)
@FORCE
def dstc6_to_babi_cmd(dataset, answers, out_path, candidates_out, force):
    """Write a DSTC6 dataset as FB dialogs (items with conversation_id regrouped) plus a candidates file."""
    from pathlib import Path

    from dialeval.files.write import check_output, protect, refuse_shared_outputs
    from dialeval.formats.convert import dstc6_to_babi

    out = Path(out_path)
    if out_path == "-" and not candidates_out:  # its default name comes from --out's: "--candidates.txt"
        raise UsageError("--out -: give --candidates-out too (its default is named after --out)")
    cand = Path(candidates_out) if candidates_out else out.with_name(out.stem + "-candidates.txt")
    refuse_shared_outputs({"--out": out, "--candidates-out": cand})
    for src, what in ((dataset, "the dataset"), (answers, "the answer key")):  # even with --force, never write
        if src:                                                               # over an input
            protect(src, what)
    for target in (out, cand):  # an input is refused as such, never as a file that --force would replace
        check_output(target, parents=True)
    _refuse_overwrite([out, cand], force)

    res = dstc6_to_babi(dataset, answers, out_path, candidates_out)
    said = "-" in (out_path, candidates_out)  # standard output holds a file: what was written goes to stderr
    click.echo(f"wrote {res.dialogs} ({counted(res.conversations, 'conversation')} from {counted(res.items, 'item')})",
               err=said)
    click.echo(f"wrote {res.candidates}", err=said)
    return 0
