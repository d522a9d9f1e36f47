"""The organizer half of ``dialeval demo``: grade the reference baselines and simulated team runs, build the site.

Simulated teams are derived from a perfect submission (the rule-based baseline solves the embedded default):
for a team of quality ``q`` each item keeps its top candidate with probability ``q`` and otherwise swaps rank 1
with a lower rank, seeded per team, so P@1 is close to ``q`` and the teams separate into bands. One team
submits twice (an identical file: graded once), one team's name carries markup (shown as text), and one run
is broken (rejected with its problems), so the demo shows every path of the organizer workflow.
"""

from __future__ import annotations

import io
import json
import random
import shutil
import tarfile
from pathlib import Path

from dialeval.core.errors import UsageError

SIMULATED_TEAMS = (
    # (entry, team, system, quality, submitted_at)
    ("team-alpha", "Team Alpha", "memnet-v2", 0.962, "2017-09-10T10:00:00Z"),
    ("team-beta", "Team Beta", "hybrid", 0.96, "2017-09-11T09:30:00Z"),
    ("team-gamma", "Team Gamma <b>&amp;</b> friends", "seq2seq", 0.80, "2017-09-12T18:00:00Z"),
    ("team-delta", "Team Delta", "retrieval", 0.55, "2017-09-13T08:15:00Z"),
)
GRADED_AT = "2017-09-14T23:59:30Z"
"""When an organizer grading every demo run at once would see them: inside the shipped challenge's phase, after the
last run was sent (a phase admits a run by the time grade first sees it, never by team.json's submitted_at)."""
GRADING_DELAY_S = 30
"""The demo's organizer grades each run as it arrives, this many seconds after it was sent: the site orders runs
(latest run, progress chart) by when grade first saw them, so runs graded all at once would share one date."""


def _members(tgz: Path) -> dict[str, bytes]:
    out = {}
    with tarfile.open(tgz, "r:gz") as tf:
        for m in tf:
            if m.isfile():
                out[m.name] = tf.extractfile(m).read()
    return out


def degrade(files: dict[str, bytes], quality: float, seed: int) -> dict[str, bytes]:
    """Swap the rank-1 candidate with a lower one in a ``1 - quality`` share of the items (deterministic)."""
    rng = random.Random(seed)
    out = {}
    for name in sorted(files):
        items = json.loads(files[name])
        for item in items:
            ranked = sorted(item["lst_candidate_id"], key=lambda c: c["rank"])
            if len(ranked) > 1 and rng.random() > quality:
                j = rng.randrange(1, len(ranked))
                ranked[0]["rank"], ranked[j]["rank"] = ranked[j]["rank"], ranked[0]["rank"]
        out[name] = json.dumps(items).encode()
    return out


def write_tgz(path: Path, files: dict[str, bytes]) -> None:
    """A deterministic .tgz (fixed mtimes and owners): same inputs, same bytes."""
    import gzip

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            info.mtime = 0
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(files[name]))
    path.write_bytes(gzip.compress(buf.getvalue(), mtime=0))


def make_runs(baselines_dir: Path, runs_dir: Path, seed: int = 0) -> list[str]:
    """Fill ``runs_dir`` with the reference baselines and the simulated teams; returns the entry names."""
    baselines = sorted(p.parent for p in baselines_dir.glob("*/submission.tgz"))
    if not baselines:
        raise UsageError(f"{baselines_dir}: no */submission.tgz reference baselines")
    runs_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for b in baselines:
        d = runs_dir / f"baseline-{b.name}"
        d.mkdir(exist_ok=True)
        (d / "submission.tgz").write_bytes((b / "submission.tgz").read_bytes())
        (d / "team.json").write_text(json.dumps({"team": "dialeval baselines", "system": b.name, "baseline": True,
                                                 "submitted_at": "2017-09-01T00:00:00Z",
                                                 "description": f"reference baseline {b.name} (seed 0, top-10)"}))
        names.append(d.name)
    perfect = baselines_dir / "rule-based" / "submission.tgz"
    if not perfect.is_file():
        return names
    files = _members(perfect)
    for i, (entry, team, system, q, when) in enumerate(SIMULATED_TEAMS):
        d = runs_dir / entry
        d.mkdir(exist_ok=True)
        write_tgz(d / "submission.tgz", degrade(files, q, seed * 1000 + i))
        (d / "team.json").write_text(json.dumps({"team": team, "system": system, "submitted_at": when,
                                                 "url": "https://example.org/paper", "contact": f"{entry}@example.org",
                                                 "description": f"simulated team run (P@1 about {q:.2f})"}))
        names.append(d.name)
    broken = runs_dir / "team-epsilon"
    broken.mkdir(exist_ok=True)
    some = sorted(files)[0]
    items = json.loads(files[some])
    items[0]["lst_candidate_id"][0]["rank"] = 0  # out of range: strict validation rejects the run
    write_tgz(broken / "submission.tgz", {some: json.dumps(items).encode()})
    (broken / "team.json").write_text(json.dumps({"team": "Team Epsilon", "system": "late-night",
                                                  "submitted_at": "2017-09-14T23:59:00Z"}))
    names.append(broken.name)
    return names


def organizer_demo(challenge_dir: str | Path, out_dir: str | Path, baselines_dir: str | Path | None = None,
                   jobs: int = 1, progress: bool = False, seed: int = 0) -> Path:
    """Grade baselines + simulated teams on ``challenge_dir`` into ``out_dir/registry`` and build ``out_dir/site``.

    Returns the path of the site's ``index.html``; the board carries the shipped challenge.toml's pages (a copy is
    written to ``out_dir/challenge.toml``). ``baselines_dir`` defaults to the installed reference runs
    (``submissions/baselines/default`` in a checkout; ``dialeval demo`` passes
    :func:`dialeval.baselines.reference.demo_runs`, which remakes them where the install lacks them).
    """
    from dialeval.leaderboard import challenge
    from dialeval.leaderboard.grade import grade
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    out_dir = Path(out_dir)
    check_site_folder(out_dir)  # before the runs and the registry are written
    if baselines_dir is None:
        from dialeval.core.resources import reference_runs_dir

        baselines_dir = reference_runs_dir()
    runs = out_dir / "runs"
    # the shipped challenge.toml: the board's pages, its phase and quotas (every demo run fits them); a copy
    # beside the runs is the organizer's template to edit
    rules = challenge.load(challenge.DEFAULT_FILE)
    from dialeval.files.write import atomic_write_text

    atomic_write_text(out_dir / "challenge.toml", rules.source)
    import tempfile

    runs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".arriving-", dir=out_dir) as tmp:
        arriving = Path(tmp)
        names = make_runs(Path(baselines_dir), arriving, seed)
        for when, batch in _arrivals(arriving, names):
            for name in batch:  # the run lands in the runs folder, and the organizer grades what is new
                if (runs / name).exists():  # an earlier demo's copy of this very entry
                    shutil.rmtree(runs / name)
                (arriving / name).rename(runs / name)
            grade(runs, rules.benchmark, challenge_dir, out_dir / "registry", jobs=jobs, progress=progress,
                  board="demo", challenge=rules, now=when)
    with Registry(out_dir / "registry") as reg:
        return build_site(reg, out_dir / "site", title="dialeval demo leaderboard")


def _arrivals(runs_dir: Path, names: list[str]) -> list[tuple[str, list[str]]]:
    """The demo's entries grouped by when the organizer grades them (GRADING_DELAY_S after each was sent, as
    team.json says: the demo's teams date their runs honestly), earliest first."""
    import datetime as _dt

    from dialeval.leaderboard.challenge import iso

    batches: dict[str, list[str]] = {}
    for name in names:
        sent = json.loads((runs_dir / name / "team.json").read_text())["submitted_at"]
        when = _dt.datetime.fromisoformat(sent.replace("Z", "+00:00")) + _dt.timedelta(seconds=GRADING_DELAY_S)
        batches.setdefault(iso(when), []).append(name)
    return sorted(batches.items())


def check_site_folder(out_dir: str | Path) -> None:
    """Refuse (one line, exit 2) an ``out_dir/site`` the build could not replace, before anything is written:
    a demo must not leave runs and a registry behind and then fail on its site folder."""
    from dialeval.files.outdir import check_out_folder
    from dialeval.leaderboard.outdir import SITE

    out_dir = Path(out_dir)
    check_out_folder(out_dir / "site", SITE,
                     protect={"the registry": out_dir / "registry", "the runs": out_dir / "runs"})
