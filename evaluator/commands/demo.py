"""``dialeval demo``: the whole chain on the embedded default challenge.

simulate (cached) -> a baseline submission in the official layout -> validate -> score, printing where
every file was written. It is the README's "main job" and needs no data beyond the package.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from evaluator.errors import UsageError


def write_baseline_submission(model, challenge: Path, splits: list[str], out_dir: Path, top_k: int = 10) -> list[Path]:
    """Rank every test item of ``splits`` with ``model``; write ``out_dir/<split>/<stem>.answers.json``."""
    from evaluator.formats.dstc6 import Challenge, read_dataset, write_results

    ch = Challenge(challenge)
    written = []
    for split in splits:
        for _task, tf in sorted(ch.split(split).files.items()):
            items = read_dataset(tf.path)
            rankings = model.rank_all(items)
            path = out_dir / split / tf.answers_name
            write_results(path, [(it.dialog_id, r[:top_k]) for it, r in zip(items, rankings)])
            written.append(path)
    return written


def load_training(challenge: Path):
    """Training items of a challenge (``trn/`` files with answers), or [] when it has none."""
    from evaluator.formats.dstc6 import parse_dataset_name, read_dataset

    trn = challenge / "trn"
    items = []
    if trn.is_dir():
        for f in sorted(trn.iterdir()):
            if parse_dataset_name(f.name):
                items.extend(read_dataset(f))
    return items


@click.command("demo")
@click.option("--out", type=click.Path(file_okay=False), default="dialeval-demo", show_default=True,
              help="Where the submission and the report are written.")
@click.option("--baseline", default="rule-based", show_default=True, help="Baseline that produces the submission.")
@click.option("--seed", type=int, default=0, show_default=True)
def demo_cmd(out, baseline, seed):
    """Generate (or reuse) the embedded default challenge, run a baseline on tst1-tst4, validate and score it."""
    from baselines import registry
    from evaluator.api import score, validate
    from evaluator.commands.score import render_table
    from evaluator.formats.jsonio import atomic_write_text
    from simulator.default import ensure_default_challenge

    t0 = time.perf_counter()
    challenge = ensure_default_challenge()
    click.echo(f"1. challenge:  {challenge}  (embedded default, simulated; keys beside the test files)")
    model = registry.create(baseline, seed=seed)
    train = load_training(challenge)
    if registry.needs_training(baseline, model) and not train:
        raise UsageError(f"baseline {baseline!r} needs a training split, and {challenge} has none")
    model.fit(train)
    out_dir = Path(out)
    sub_dir = out_dir / "submission"
    from evaluator.formats.dstc6 import Challenge

    splits = [s for s in Challenge(challenge).splits if s.startswith("tst")]
    files = write_baseline_submission(model, challenge, splits, sub_dir)
    click.echo(f"2. submission: {sub_dir}  ({len(files)} files by baseline {baseline!r}, seed {seed})")
    v = validate(sub_dir, "all", challenge)
    if not v.valid:
        raise UsageError(f"the demo submission is invalid ({len(v.errors)} errors): {v.errors[0].format()}")
    click.echo(f"3. validate:   valid ({len(v.warnings)} warnings)")
    report = score(sub_dir, "all", challenge)
    report_path = out_dir / "report.json"
    atomic_write_text(report_path, report.to_json_text())
    click.echo(f"4. score:      {report_path}")
    render_table(report)
    click.echo(f"done in {time.perf_counter() - t0:.1f} s; try: dialeval score {sub_dir} --challenge {challenge} --split tst4")
    return 0
