"""``dialeval airdialogue``: the AirDialogue tools besides ``dialeval score --benchmark airdialogue``.

* ``simulate``: write a simulated split (``<split>_data.json`` + ``<split>_kb.json``).
* ``baseline``: write a reference submission (random, cheapest-flight, rule-based).
* ``infer-bleu``: response generation (the toolkit's ``--task infer``): corpus BLEU of one predicted line per
  target turn (turn t >= 1 of every correct dialogue, in data order), through sacrebleu.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from dialeval.core.errors import UnreadableInput, UsageError
from dialeval.core.problems import counted
from dialeval.core.termsafe import safe
from dialeval.files import read
from dialeval.files.write import not_standard_output

HYPOTHESES = "a text file of predicted turns"
MAX_HYPOTHESIS_BYTES = 1024**2
"""The longest predicted turn read (a turn is a sentence): a longer line is the submission's fault, exit 1."""


def _hypotheses(path: Path) -> list[str]:
    """One predicted turn per line, streamed through the input layer (UTF-8 without a BOM; a line longer than
    :data:`MAX_HYPOTHESIS_BYTES` or not UTF-8 raises :class:`UnreadableInput` naming the line)."""
    out = []
    for lineno, raw, length in read.iter_bounded_lines(path, MAX_HYPOTHESIS_BYTES, what=HYPOTHESES):
        if raw is None:
            raise UnreadableInput(path.name, "line-too-long", f"line {lineno}: {length} bytes, longer than the "
                                  f"limit of {MAX_HYPOTHESIS_BYTES} bytes for one predicted turn", lineno)
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise UnreadableInput(path.name, "bad-encoding", f"line {lineno}: not UTF-8 text", lineno) from None
    return out


DATA_HELP = "The split's data folder (<split>_data.json, <split>_kb.json), or sample:airdialogue."


def _data_folder(data: str) -> Path:
    """``--data``: a folder, or sample:airdialogue (resolved by the command layer, like score's --data)."""
    from dialeval.commands.score import resolve_data

    folder = Path(resolve_data("airdialogue", data, None)[0])
    if not folder.is_dir():
        raise UsageError(f"{data}: {'not a folder' if folder.exists() else 'no such folder'}")
    return folder


@click.group("airdialogue")
def airdialogue_group():
    """AirDialogue: simulate a split, write baseline submissions, score response generation (BLEU)."""


@airdialogue_group.command("simulate")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              callback=not_standard_output)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--n", "n", type=click.IntRange(1, 10_000_000), default=1000, show_default=True, help="Contexts.")
@click.option("--split", default="dev", show_default=True)
@click.option("--setting", type=click.Choice(["in-domain", "ood"]), default="in-domain", show_default=True)
@click.option("--no-dialogues", is_flag=True, help="Contexts only (intent, KB, actions), as the toolkit's generator.")
@click.option("--force", is_flag=True, help="Replace the split's files when --out already holds them.")
def simulate_cmd(out, seed, n, split, setting, no_dialogues, force):
    """Write a simulated AirDialogue split (same seed -> byte-identical files) into --out, beside other splits."""
    from dialeval.simulator.airdialogue import write_airdialogue

    if not split or not all(c.isalnum() or c in "-_." for c in split) or split.startswith("."):
        raise UsageError(f"--split {safe(split)!r}: a split name is letters, digits, '-', '_' or '.' (dev, test)")
    held = [p for p in (out / f"{split}_data.json", out / f"{split}_kb.json") if os.path.lexists(p)]
    if held and not force:  # another run's data (a team's predictions may be scored on it): never replaced silently
        raise UsageError(f"{safe(str(held[0]))}: exists; give --force to replace the {split} split, or another --out")
    data, kb = write_airdialogue(out, seed=seed, n=n, split=split, setting=setting, dialogues=not no_dialogues)
    click.echo(f"wrote {data} and {kb} ({n} contexts, {setting}, seed {seed})")
    return 0


@airdialogue_group.command("baseline")
@click.argument("name", metavar="NAME", type=click.Choice(["random", "cheapest-flight", "rule-based"]))
@click.option("--data", type=click.Path(file_okay=False), required=True, help=DATA_HELP)
@click.option("--split", default="dev", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
def baseline_cmd(name, data, split, out, seed):
    """Write baseline NAME's submission for a split (one JSON line per data line); NAME is random, cheapest-flight
    or rule-based."""
    from dialeval.baselines.airdialogue import write_submission
    from dialeval.files.write import protect

    data = _data_folder(data)
    protect(data, "a data file")  # --out onto dev_data.json would replace the data with the predictions
    write_submission(name, data, split, out, seed)
    click.echo(f"wrote {out}", err=str(out) == "-")  # --out -: standard output holds the submission alone
    return 0


@airdialogue_group.command("infer-bleu")
@click.argument("predictions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--data", type=click.Path(file_okay=False), required=True, help=DATA_HELP)
@click.option("--split", default="dev", show_default=True)
@click.option("--tokenize", default="13a", show_default=True,
              help="sacrebleu tokenizer ('none' for pre-tokenised lines split on spaces).")
@click.option("--bleu-variant", "variant", type=click.Choice(["sacrebleu", "toolkit"]), default="sacrebleu",
              show_default=True,
              help="toolkit: the AirDialogue toolkit's corpus BLEU (lines split on single spaces, no smoothing; "
                   "needs no sacrebleu, and takes no --tokenize).")
@click.option("--json", "as_json", is_flag=True,
              help="Print {bleu, n, signature, predictions: {file, sha256}} as JSON.")
def infer_bleu_cmd(predictions, data, split, tokenize, variant, as_json):
    """Corpus BLEU of PREDICTIONS (one line per target turn) against the split's correct dialogues."""
    from dialeval.core.signature import Signature
    from dialeval.formats.airdialogue import InferLine, decode_lines, split_paths
    from dialeval.metrics.bleu import bleu_class, corpus_bleu, infer_items

    if variant == "toolkit":
        if click.get_current_context().get_parameter_source("tokenize").name != "DEFAULT":
            raise UsageError("--tokenize chooses sacrebleu's tokenizer; the toolkit's BLEU splits lines on spaces")
    else:
        BLEU = bleu_class()  # the optional extra: without it, one line saying how to install it (exit 2), before any work
        if tokenize not in BLEU.TOKENIZERS:
            raise UsageError(f"--tokenize must be one of {', '.join(BLEU.TOKENIZERS)}")
    data_path, _ = split_paths(_data_folder(data), split)
    read.check_regular(predictions, what=HYPOTHESES)  # a FIFO or a device is refused before the data is read
    dialogues, correct = [], []
    for _, line in decode_lines(data_path, InferLine):
        dialogues.append(line.dialogue or [])
        correct.append(line.correct_sample is not False)
    refs = [t for _, _, t in infer_items(dialogues, correct)]
    try:
        hyps = _hypotheses(predictions)
    except UnreadableInput as e:  # the submission's fault: exit 1 with the input layer's code
        click.echo(f"{safe(predictions.name)}: error [{e.code}] {safe(e.reason)}", err=True)
        return 1
    if len(hyps) != len(refs):
        click.echo(f"{safe(predictions.name)}: error [line-count] {counted(len(hyps), 'line')}, but the split has "
                   f"{counted(len(refs), 'target turn')} (turn t >= 1 of every correct dialogue, in order)", err=True)
        return 1
    score, bleu_sig = corpus_bleu(hyps, refs, tokenize=tokenize, variant=variant)
    from dialeval.files.identity import data_identity

    # like every other number, led by the identity of the data it was computed on (data:dev#<hash>)
    ident = data_identity([data_path], data_path.parent, splits={split: [data_path]})
    sig = Signature("airdialogue").with_fields(data=ident.label(split), task="infer", split=split,
                                               bleu=bleu_sig).format()
    if as_json:  # the predictions' identity beside the signature, as score reports its submission's sha256
        predicted = {"file": str(predictions), "sha256": read.file_sha256(predictions)}
        click.echo(json.dumps({"bleu": score, "n": len(refs), "signature": sig, "predictions": predicted}))
    else:
        click.echo(f"BLEU {score:.2f} over {counted(len(refs), 'turn')}\nsignature: {sig}")
    return 0
