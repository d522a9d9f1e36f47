"""``dialeval simulate`` and ``dialeval stats``: thin shells over :mod:`dialeval.simulator.generate` and
:mod:`dialeval.simulator.stats`. Bad input raises :class:`dialeval.core.errors.UsageError` (one line, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dialeval.core.errors import UsageError
from dialeval.files.write import not_standard_output


@click.command("simulate")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              callback=not_standard_output, help="Directory to create (must be empty or absent unless --force).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed: same seed, byte-identical files.")
@click.option("--train", "n_train", type=int, default=10000, show_default=True,
              help="Training items per task (0: no training split).")
@click.option("--test", "n_test", type=int, default=1000, show_default=True, help="Items per test file.")
@click.option("--candidates", default="7-10", show_default=True,
              help="Candidates per item, N or LOW-HIGH (7-10 follows the real per-task distribution).")
@click.option("--context-distractors", type=float, default=0.5, show_default=True,
              help="Share of distractors copied from the item's own context.")
@click.option("--full-conversations", is_flag=True,
              help="Every bot turn of each conversation becomes an item (conversation_id, turn); also writes "
                   "FB text under fb/ and the bAbI layout under babi/ (trn, tst, tst-OOV from trn, tst1, tst2).")
@click.option("--splits", default=None, help="Comma-separated subset of trn,tst1,tst2,tst3,tst4 (default: all).")
@click.option("--tasks", "tasks", default="1,2,3,4,5", show_default=True, help="Comma-separated tasks.")
@click.option("--force", is_flag=True, help="Replace a non-empty --out.")
def simulate_cmd(out: Path, seed: int, n_train: int, n_test: int, candidates: str, context_distractors: float,
                 full_conversations: bool, splits: str | None, tasks: str, force: bool) -> int:
    """Generate a DSTC6-style challenge (KBs, train split, tst1-tst4 with answer keys) with the simulator."""
    from dialeval.simulator.generate import atomic_output_dir, generate_challenge, parse_candidates, parse_splits

    # Check everything before creating anything.
    parse_candidates(candidates)
    parse_splits(splits)
    try:
        task_list = [int(t) for t in tasks.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"--tasks: expected comma-separated numbers 1-5, got {tasks!r}") from None
    if n_train < 0 or n_test < 1:
        raise UsageError(f"--train must be >= 0 and --test >= 1 (got {n_train}, {n_test})")
    if not 0.0 <= context_distractors <= 1.0:
        raise UsageError(f"--context-distractors must be within 0..1, got {context_distractors}")
    from dialeval.core.termsafe import progress, safe

    with atomic_output_dir(out, force=force) as tmp, progress(f"simulating {out}"):
        generate_challenge(tmp, seed=seed, n_train=n_train, n_test=n_test, candidates=candidates,
                           context_distractors=context_distractors, full_conversations=full_conversations,
                           splits=splits, tasks=task_list)
    click.echo(f"wrote challenge to {safe(out)}")
    return 0


@click.command("stats")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--split", "split", default=None, help="Comma-separated splits to describe (default: all).")
def stats_cmd(directory: Path, as_json: bool, split: str | None) -> int:
    """Describe a challenge directory: items, candidates, utterances, vocabulary, context distractors."""
    from dialeval.simulator.stats import challenge_stats

    splits = list(dict.fromkeys(s.strip() for s in split.split(",") if s.strip())) if split else None
    if str(directory).startswith("sample:") and not directory.exists():  # as --data sample:dstc6 elsewhere
        from dialeval.core.resources import samples_dir

        if str(directory) not in ("sample:", "sample:dstc6"):
            raise UsageError(f"{directory}: stats describes DSTC6 challenges; sample:dstc6 is the DSTC6 sample")
        directory = samples_dir() / "dstc6"
    if directory.exists() and not directory.is_dir():  # e.g. a run file: say what is expected instead
        raise UsageError(f"{directory}: is a file; stats describes a challenge folder (split folders of DSTC6 "
                         "dataset files), e.g. dialeval stats DIR")
    if not directory.is_dir():
        raise UsageError(f"{directory}: no such challenge folder")
    for name in splits or ():
        if not (directory / name).is_dir() or name.startswith(".") or "/" in name or "\\" in name:
            have = sorted(p.name for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
            raise UsageError(f"--split {name!r}: {directory} has no such split folder "
                             f"(it has: {', '.join(have) or 'none'})")
    rows = challenge_stats(directory, splits)
    if as_json:
        click.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return 0
    header = f"{'split':<6} {'task':>4} {'items':>6} {'cand mean':>9} {'min':>3} {'max':>3} {'mode':>4} " \
             f"{'utt mean':>8} {'vocab':>6} {'ctx share':>9}  distribution"
    click.echo(header)
    for r in rows:
        share = "-" if r.context_distractor_share is None else f"{r.context_distractor_share:.3f}"
        dist = " ".join(f"{k}:{v}" for k, v in sorted(r.candidates_distribution.items()))
        click.echo(f"{r.split:<6} {r.task:>4} {r.items:>6} {r.candidates_mean:>9.3f} {r.candidates_min:>3} "
                   f"{r.candidates_max:>3} {r.candidates_mode:>4} {r.utterances_mean:>8.2f} {r.vocabulary:>6} "
                   f"{share:>9}  {dist}")
    return 0
