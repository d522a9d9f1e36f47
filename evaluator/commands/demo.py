"""``dialeval demo``: the whole chain on the embedded default challenge.

simulate (cached) -> a baseline submission in the official layout -> validate -> score, printing where
every file was written. It is the README's "main job" and needs no data beyond the package.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import click

from dialeval.core.errors import UsageError
from dialeval.core.problems import counted
from dialeval.files.outdir import OutputFolder
from dialeval.files.write import not_standard_output

DEMO_FOLDER = OutputFolder(
    marker=".dialeval-demo",
    names=re.compile(r"^(\.dialeval-demo|submission|report\.json|organizer|\.submission-\w+)$"),  # + a killed one's
    made_by="a folder an earlier demo wrote",
    legacy=("report.json",),  # demos before the marker existed
    note="written by `dialeval demo`: a later demo replaces what is in this folder\n",
)
"""``demo --out``: its submission, report and organizer folders are replaced by the next demo, so the folder must be
new, empty or an earlier demo's (never the current folder, a home folder, a challenge, a runs folder)."""


@click.command("demo")
@click.option("--out", type=click.Path(file_okay=False), default="dialeval-demo", show_default=True,
              callback=not_standard_output,
              help="Where the submission and the report are written.")
@click.option("--baseline", default="rule-based", show_default=True, help="Baseline that produces the submission.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the baseline run (the same seed writes byte-identical submissions).")
@click.option("--organizer/--no-organizer", default=True, show_default=True,
              help="Also grade the reference baselines and simulated team runs into a registry and build the "
                   "static leaderboard site.")
def demo_cmd(out, baseline, seed, organizer):
    """Generate (or reuse) the embedded default challenge, run a baseline on tst1-tst4, validate and score it;
    then, as an organizer, grade a few team runs into a registry and build the leaderboard site."""
    from dialeval.api import score, validate
    from dialeval.baselines import registry
    from dialeval.baselines.run import run_baseline
    from dialeval.files.write import atomic_write_text
    from dialeval.formats.dstc6 import Challenge
    from dialeval.results.render import print_summary as render_summary
    from dialeval.simulator.default import ensure_default_challenge

    t0 = time.perf_counter()
    registry.get_spec(baseline)  # unknown name: its one-line error before any work or output
    if organizer:  # a site folder the build would refuse is refused now, before anything is written
        from dialeval.leaderboard.demo import check_site_folder

        check_site_folder(Path(out) / "organizer")
    from dialeval.files.outdir import check_out_folder

    check_out_folder(out, DEMO_FOLDER)  # refused before any work or output
    challenge = ensure_default_challenge()
    click.echo(f"1. challenge:  {challenge}  (embedded default, simulated; keys beside the test files)")
    out_dir = Path(out)
    sub_dir = out_dir / "submission"
    splits = [s for s in Challenge(challenge).splits if s.startswith("tst")]
    import contextlib
    import os
    import shutil

    from dialeval.core.termsafe import progress
    from dialeval.files.outdir import new_folder_beside, replace_folder

    # built beside and swapped in whole: an interrupted demo leaves no submission of some splits' files
    made_out = not os.path.lexists(out_dir)
    building = new_folder_beside(sub_dir, prefix=".submission-")
    try:
        (out_dir / DEMO_FOLDER.marker).write_text(DEMO_FOLDER.note, encoding="utf-8")
        files = []
        with progress(f"baseline {baseline}", total=len(splits)) as bar:
            for split in splits:
                bar.describe(f"baseline {baseline} on {split}")
                files += run_baseline(baseline, challenge, split, building, seed=seed, top_k=10)
                bar.advance()
        replace_folder(building, sub_dir)
    except BaseException:
        if made_out:  # the folder this demo made for its outputs goes too (only when nothing else is in it)
            shutil.rmtree(building, ignore_errors=True)
            with contextlib.suppress(OSError):
                (out_dir / DEMO_FOLDER.marker).unlink()
                out_dir.rmdir()
        raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    files = [sub_dir / f.relative_to(building) for f in files]
    click.echo(f"2. submission: {sub_dir}  ({len(files)} files by baseline {baseline!r}, seed {seed}, top-10 ranks)")
    v = validate(sub_dir, "all", challenge, options={"embedded_default": True})
    if not v.valid:
        raise UsageError(f"the demo submission is invalid ({len(v.errors)} errors): {v.errors[0].format()}")
    click.echo(f"3. validate:   valid ({counted(v.counts['warnings'], 'warning')})")
    report = score(sub_dir, "all", challenge, options={"embedded_default": True})
    report_path = out_dir / "report.json"
    atomic_write_text(report_path, report.to_json_text())
    click.echo(f"4. score:      {report_path}")
    render_summary(report)
    if organizer:
        from dialeval.baselines.reference import demo_runs
        from dialeval.leaderboard.demo import organizer_demo

        site = organizer_demo(challenge, out_dir / "organizer", baselines_dir=demo_runs(challenge), seed=seed,
                              progress=True)
        click.echo(f"5. organizer:  graded the reference baselines and simulated teams into "
                   f"{out_dir / 'organizer' / 'registry'}; leaderboard site: open {site.resolve().as_uri()}")
        click.echo(f"   challenge page (overview, rules, phases, how to submit): "
                   f"{(site.parent / 'challenge-demo.html').resolve().as_uri()}")
    click.echo(f"done in {time.perf_counter() - t0:.1f} s. Next: dialeval score {sub_dir} --split tst4 "
               "(the embedded default is used when no --challenge is given)")
    return 0
