"""Grading 50 team runs x 20 files x 1,000 items: wall time against `dialeval score` alone, then the site.

Run: ``python3 benchmarks/bench_grade.py [--teams 50] [--items 1000] [--work DIR]``

1. simulates a challenge with 1,000 items per test file (tst1-tst4 x tasks 1-5 = 20 files), cached in --work;
2. writes --teams runs of different quality (the answer keys with a seeded share of rank-1 swaps) as .tgz;
3. times scoring every run with ``dialeval.api.score`` alone (the baseline, same process, same order);
4. times ``grade(..., jobs=1)`` and ``jobs=2`` into fresh registries (validation, scoring, hashing, recording);
5. times ``leaderboard build`` for the graded board (ranking with bands + intervals, pages) and its size.
Prints each number and the ratios (target: grade --jobs 1 <= 1.3x score alone).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path


def simulate(work: Path, items: int) -> Path:
    ch = work / f"challenge-{items}"
    if not (ch / "tst4").is_dir():
        shutil.rmtree(ch, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "dialeval", "simulate", "--out", str(ch), "--seed", "7",
                        "--test", str(items), "--train", "200"], check=True, stdout=subprocess.DEVNULL)
    return ch


def make_runs(ch: Path, runs: Path, teams: int) -> list[Path]:
    from dialeval.leaderboard.demo import degrade, write_tgz

    keys = {f"{k.parent.name}/{k.name}": k.read_bytes() for k in sorted(ch.glob("tst*/*.answers.json"))}
    assert len(keys) == 20, len(keys)
    out = []
    for i in range(teams):
        d = runs / f"team-{i:02d}"
        d.mkdir(parents=True, exist_ok=True)
        if not (d / "submission.tgz").exists():
            quality = 0.35 + 0.64 * i / max(1, teams - 1)
            write_tgz(d / "submission.tgz", degrade(keys, quality, 1000 + i))
            (d / "team.json").write_text(json.dumps({"team": f"Team {i:02d}", "system": "sim",
                                                     "submitted_at": f"2017-09-{1 + i % 28:02d}T12:00:00Z"}))
        out.append(d / "submission.tgz")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--teams", type=int, default=50)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--work", default="/tmp/dialeval-bench-grade")
    args = ap.parse_args()
    os.environ["DIALEVAL_NO_PROGRESS"] = "1"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    ch = simulate(work, args.items)
    subs = make_runs(ch, work / "runs", args.teams)

    from dialeval.api import score
    from dialeval.leaderboard.grade import grade
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    score(str(subs[0]), benchmark="dstc6", data=str(ch))  # warm the test-file index cache for both sides
    t0 = time.perf_counter()
    for s in subs:
        r = score(str(s), benchmark="dstc6", data=str(ch))
        assert r.valid
    t_score = time.perf_counter() - t0
    print(f"score alone: {len(subs)} runs x 20 files x {args.items} items: {t_score:.2f} s")

    results = {}
    for jobs in (1, 2):
        reg = work / f"registry-j{jobs}"
        shutil.rmtree(reg, ignore_errors=True)
        t0 = time.perf_counter()
        summary = grade(work / "runs", "dstc6", ch, reg, jobs=jobs, progress=False, board="bench")
        results[jobs] = time.perf_counter() - t0
        assert summary.count("valid") == len(subs), [o.message for o in summary.outcomes if o.status != "valid"][:3]
        print(f"grade --jobs {jobs}: {results[jobs]:.2f} s  ratio to score alone {results[jobs] / t_score:.2f}x")
    t0 = time.perf_counter()
    again = grade(work / "runs", "dstc6", ch, work / "registry-j1", jobs=1, progress=False, board="bench")
    print(f"re-grade (all unchanged: {again.count('unchanged')}): {time.perf_counter() - t0:.2f} s")
    db = work / "registry-j1" / "registry.sqlite"
    print(f"registry size: {db.stat().st_size / 1e6:.1f} MB for {len(subs)} runs")

    site = work / "site"
    with Registry(work / "registry-j1") as reg:
        t0 = time.perf_counter()
        build_site(reg, site)
        t_site = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    n_files = sum(1 for p in site.rglob("*") if p.is_file())
    print(f"leaderboard build: {t_site:.2f} s, {n_files} files, {size / 1e6:.2f} MB for {len(subs)} teams")
    print(f"SUMMARY grade/score --jobs 1: {results[1] / t_score:.2f}x (target <= 1.3x); --jobs 2: "
          f"{results[2] / t_score:.2f}x; site {t_site:.1f} s / {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
