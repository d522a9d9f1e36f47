"""Benchmark ``dialeval score`` (not a test). Prints tables; run from the repository root:

    .venv/bin/python benchmarks/bench_score.py                  # full split + --help + 100k/300k/1M scaling
    .venv/bin/python benchmarks/bench_score.py --scale 100000   # a quicker scaling run
    .venv/bin/python benchmarks/bench_score.py --scale ''       # no scaling run

1. One full split (real ../shared/data/dstc6/tst1 when present, else a synthetic split of the same shape:
   5 test files x 1000 items, 7-10 candidates), with its 5 answer keys and a full submission: median wall time
   of ``dialeval score`` (and ``validate``) as a subprocess vs a bare ``python -c`` that only ``json.load``s
   the same 11 files (target <= 3x, goal 1.5x), and the floor of any scorer on this stack: importing click,
   numpy and msgspec, then decoding the submission and the answer keys (goal: score <= 1.5x that floor).
2. ``dialeval --help`` vs ``python -c pass`` (target <= 0.3 s).
3. Synthetic splits of N items (5 tasks, 7 candidates, short utterances): wall time and peak RSS of
   ``dialeval score`` against N and the submission size; per-item memory should stay flat (linear growth).

Each measurement runs in a fresh child process; peak RSS comes from ``getrusage(RUSAGE_CHILDREN)`` of a
small wrapper process that runs exactly one command.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL = REPO.parent / "shared" / "data" / "dstc6"
sys.path.insert(0, str(REPO))

from dialeval.formats.dstc6 import answers_file_name, dataset_file_name  # noqa: E402

DIALEVAL = [sys.executable, "-c", "from dialeval.cli import run; run()"]
WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter(); rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "dt = time.perf_counter() - t\n"
    "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(rc, dt, ru.ru_maxrss, ru.ru_utime + ru.ru_stime)\n"
)
CPU: dict[tuple, list[float]] = {}
"""CPU seconds (user + system) of every measured command: on a shared, loaded machine they vary far less than
wall time (which also counts the time other processes hold the cores), so the ratios are given on both."""


BYTECODE = True
"""Children may write and read bytecode, as an installed package's modules have theirs (numpy's, click's and
msgspec's always do). A machine-wide PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every dialeval module
from source on every run, which the floor never pays: ``--no-bytecode`` measures that case."""


def measure(cmd: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS KiB) of ``cmd`` run once in a fresh process; raises on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    if BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(REPO)
    out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], env=env, cwd=REPO, capture_output=True, text=True)
    rc, dt, rss, cpu = out.stdout.split()
    CPU.setdefault(tuple(cmd), []).append(float(cpu))
    if int(rc) != 0:
        err = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True).stderr
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}\n{err[-2000:]}")
    return float(dt), int(rss)


def median_of(cmd: list[str], runs: int) -> tuple[float, float, int]:
    """(median, min, max RSS) over ``runs`` runs, after one warm-up run (page cache, .pyc)."""
    measure(cmd)
    samples = [measure(cmd) for _ in range(runs)]
    times = [s[0] for s in samples]
    return statistics.median(times), min(times), max(s[1] for s in samples)


# ---- synthetic data ------------------------------------------------------------------------------------
def _id(a: int, b: int) -> str:
    return f"{a:08x}-{b >> 48 & 0xFFFF:04x}-4{b >> 36 & 0xFFF:03x}-8{b >> 24 & 0xFFF:03x}-{b & 0xFFFFFF:012x}"


def write_synthetic_split(root: Path, n_items: int, seed: int = 0, cands=(7, 7, 7, 8, 9, 10)) -> Path:
    """``root/tst1``: 5 test files + keys, ``n_items`` in all; returns the path of a full submission.

    Written with plain string formatting (json.dumps of every item would dominate the benchmark at 1M).
    """
    rng = random.Random(seed)
    split = root / "tst1"
    split.mkdir(parents=True, exist_ok=True)
    per_task = n_items // 5
    sub_parts: list[str] = []
    for task in range(1, 6):
        name = dataset_file_name(task, "kb1", False)
        test_parts, key_parts = [], []
        for i in range(per_task):
            did = _id(task, i)
            n = cands[i % len(cands)]
            cids = [_id(0x10000000 + task, i * 16 + j) for j in range(n)]
            gold = cids[rng.randrange(n)]
            cand_json = ", ".join(f'{{"utterance": "bot says {j}", "candidate_id": "{c}"}}' for j, c in enumerate(cids))
            test_parts.append(
                f'{{"dialog_id": "{did}", "candidates": [{cand_json}], '
                f'"utterances": ["hello", "hello what can i help you with today", "i want food {i % 97}"]}}'
            )
            key_parts.append(f'{{"dialog_id": "{did}", "lst_candidate_id": [{{"candidate_id": "{gold}", "rank": 1}}]}}')
            rng.shuffle(cids)
            ranked = ", ".join(f'{{"candidate_id": "{c}", "rank": {r}}}' for r, c in enumerate(cids, 1))
            sub_parts.append(f'{{"dialog_id": "{did}", "lst_candidate_id": [{ranked}]}}')
        (split / name).write_text("[" + ", ".join(test_parts) + "]")
        (split / answers_file_name(name)).write_text("[" + ", ".join(key_parts) + "]")
        del test_parts, key_parts
    sub = root / "submission.json"
    sub.write_text("[" + ", ".join(sub_parts) + "]")
    return sub


def full_submission_for(split_dir: Path, out: Path, seed: int = 2017) -> Path:
    rng = random.Random(seed)
    items = []
    for f in sorted(split_dir.glob("dialog-task*-tst1000.json")):
        for it in json.loads(f.read_text()):
            ids = [c["candidate_id"] for c in it["candidates"]]
            rng.shuffle(ids)
            items.append({"dialog_id": it["dialog_id"],
                          "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]})
    out.write_text(json.dumps(items))
    return out


# ---- the three benchmarks ------------------------------------------------------------------------------
def bench_full_split(tmp: Path, runs: int) -> dict:
    if (REAL / "tst1").is_dir() and any((REAL / "tst1").glob("*.answers.json")):
        challenge, what = REAL, "real tst1"
        sub = full_submission_for(REAL / "tst1", tmp / "full.json")
    else:
        challenge, what = tmp / "synthetic", "synthetic tst1 (5 x 1000 items)"
        sub = write_synthetic_split(challenge, 5000)
    files = sorted(str(p) for p in (challenge / "tst1").glob("*.json")) + [str(sub)]
    assert len(files) == 11, files
    size = sum(Path(f).stat().st_size for f in files)
    score_cmd = [*DIALEVAL, "score", str(sub), "--challenge", str(challenge), "--split", "tst1", "--json"]
    validate_cmd = [*DIALEVAL, "validate", str(sub), "--challenge", str(challenge), "--split", "tst1"]
    keys = sorted(str(p) for p in (challenge / "tst1").glob("*.answers.json"))
    load = "import json, sys\nfor f in sys.argv[1:]:\n    json.load(open(f, 'rb'))"
    load_orjson = "import orjson, sys\nfor f in sys.argv[1:]:\n    orjson.loads(open(f, 'rb').read())"
    # The floor of any scorer built on this stack: the imports every `score` run needs (click for the command
    # line, numpy for the metrics, msgspec for the JSON), then decoding the two inputs it cannot skip (the
    # submission and the answer keys; the test files' index comes from the verified cache).
    imports = "import click, numpy, msgspec.json, msgspec.msgpack"
    decode = imports + "\nimport sys\nfor f in sys.argv[1:]:\n    msgspec.json.decode(open(f, 'rb').read())"
    rows = {
        "dialeval score --json": median_of(score_cmd, runs),
        "dialeval validate": median_of(validate_cmd, runs),
        "python -c json.load x11": median_of([sys.executable, "-c", load, *files], runs),
        "python -c orjson.loads x11": median_of([sys.executable, "-c", load_orjson, *files], runs),
        "floor: imports only": median_of([sys.executable, "-c", imports], runs),
        "floor: imports + sub & keys": median_of([sys.executable, "-c", decode, str(sub), *keys], runs),
        "python -c pass": median_of([sys.executable, "-c", "pass"], runs),
    }
    print(f"\n## 1. One full split: {what}; 11 files, {size / 1e6:.1f} MB; median of {runs} runs\n")
    print(f"| {'command':<28} | {'median s':>9} | {'min s':>7} | {'peak RSS MiB':>12} | {'x json.load':>11} |")
    print(f"|{'-' * 30}|{'-' * 11}|{'-' * 9}|{'-' * 14}|{'-' * 13}|")
    base = rows["python -c json.load x11"][0]
    for k, (med, mn, rss) in rows.items():
        print(f"| {k:<28} | {med:>9.3f} | {mn:>7.3f} | {rss / 1024:>12.0f} | {med / base:>11.2f} |")
    ratio = rows["dialeval score --json"][0] / base
    verdict = "goal met" if ratio <= 1.5 else "target met" if ratio <= 3 else "ABOVE TARGET"
    print(f"\nscore / json.load ratio: {ratio:.2f}x (target <= 3x, goal 1.5x): {verdict}")
    floor = rows["floor: imports + sub & keys"][0] / base
    print(f"floor (imports + decoding what cannot be skipped) / json.load: {floor:.2f}x; dialeval's own share: "
          f"{rows['dialeval score --json'][0] - rows['floor: imports + sub & keys'][0]:.3f} s")
    to_floor = rows["dialeval score --json"][0] / rows["floor: imports + sub & keys"][0]
    cpu_score = statistics.median(CPU[tuple(score_cmd)][1:])  # the warm-up run left out
    cpu_floor = statistics.median(CPU[tuple([sys.executable, "-c", decode, str(sub), *keys])][1:])
    cpu_ratio = cpu_score / cpu_floor
    print(f"score / floor: {to_floor:.2f}x wall, {cpu_ratio:.2f}x CPU ({cpu_score:.3f} s / {cpu_floor:.3f} s) "
          f"(DSTC6 start-up goal, issue 25: <= 1.5x): {'met' if max(to_floor, cpu_ratio) <= 1.5 else 'MISSED'}; "
          f"bytecode {'on' if BYTECODE else 'off'}")
    return {"ratio": ratio, "score_to_floor": to_floor, "score_to_floor_cpu": cpu_ratio,
            **{k: v[0] for k, v in rows.items()}}


def bench_help(runs: int) -> dict:
    runs = max(runs, 10)
    helptime = median_of([*DIALEVAL, "--help"], runs)[0]
    bare = median_of([sys.executable, "-c", "pass"], runs)[0]
    print(f"\n## 2. Start-up; median of {runs} runs\n")
    print(f"| {'command':<20} | {'median s':>9} |\n|{'-' * 22}|{'-' * 11}|")
    print(f"| {'dialeval --help':<20} | {helptime:>9.3f} |\n| {'python -c pass':<20} | {bare:>9.3f} |")
    print(f"\ndialeval --help: {helptime:.3f} s ({helptime - bare:+.3f} s over a bare interpreter); "
          f"target <= 0.3 s: {'met' if helptime <= 0.3 else 'MISSED'}")
    return {"help": helptime, "pass": bare}


def bench_scale(tmp: Path, sizes: list[int], runs: int) -> list[dict]:
    print("\n## 3. Scaling: synthetic split, 5 tasks, 7-10 candidates, full submission; "
          f"{runs} timed run(s) per size\n")
    base_rss = measure([sys.executable, "-c", "import numpy, orjson, click"])[1]
    print(f"| {'items':>9} | {'submission MB':>13} | {'all files MB':>12} | {'gen s':>6} | {'score s':>8} | "
          f"{'peak RSS MiB':>12} | {'RSS / sub size':>14} | {'KiB / item':>10} |")
    print(f"|{'-' * 11}|{'-' * 15}|{'-' * 14}|{'-' * 8}|{'-' * 10}|{'-' * 14}|{'-' * 16}|{'-' * 12}|")
    out = []
    for n in sizes:
        d = tmp / f"scale-{n}"
        t0 = time.perf_counter()
        sub = write_synthetic_split(d, n)
        gen = time.perf_counter() - t0
        sub_mb = sub.stat().st_size / 2**20
        all_mb = sum(p.stat().st_size for p in d.rglob("*.json")) / 2**20
        cmd = [*DIALEVAL, "score", str(sub), "--challenge", str(d), "--split", "tst1", "--json"]
        samples = [measure(cmd) for _ in range(runs)]
        sec = statistics.median(s[0] for s in samples)
        rss = max(s[1] for s in samples) / 1024
        per_item = (rss - base_rss / 1024) * 1024 / n
        print(f"| {n:>9,} | {sub_mb:>13.1f} | {all_mb:>12.1f} | {gen:>6.1f} | {sec:>8.2f} | {rss:>12.0f} | "
              f"{rss / sub_mb:>14.2f} | {per_item:>10.2f} |", flush=True)
        out.append({"items": n, "sub_mb": sub_mb, "seconds": sec, "rss_mib": rss, "kib_per_item": per_item})
        shutil.rmtree(d)
    if len(out) >= 2:
        a, b = out[0], out[-1]
        growth = b["kib_per_item"] / a["kib_per_item"]
        t_growth = (b["seconds"] / b["items"]) / (a["seconds"] / a["items"])
        print(f"\nper-item memory {a['items']:,} -> {b['items']:,}: x{growth:.2f}; per-item time: x{t_growth:.2f} "
              f"({'linear' if growth < 1.25 and t_growth < 1.5 else 'SUPER-LINEAR'}; "
              f"interpreter + imports baseline {base_rss / 1024:.0f} MiB subtracted)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per command (median reported; default 5)")
    ap.add_argument("--scale", default="100000,300000,1000000", help="comma-separated item counts ('' to skip)")
    ap.add_argument("--scale-runs", type=int, default=1, help="timed runs per scaling size (default 1)")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the numbers to this JSON file")
    ap.add_argument("--no-bytecode", action="store_true", help="keep PYTHONDONTWRITEBYTECODE from the environment")
    args = ap.parse_args()
    global BYTECODE
    BYTECODE = not args.no_bytecode
    tmp = Path(tempfile.mkdtemp(prefix="dialeval-bench-"))
    try:
        print(f"# dialeval score benchmark ({sys.version.split()[0]}, {os.cpu_count()} CPUs)")
        results = {"full_split": bench_full_split(tmp, args.runs), "startup": bench_help(args.runs)}
        sizes = [int(s) for s in args.scale.split(",") if s.strip()]
        if sizes:
            results["scale"] = bench_scale(tmp, sizes, args.scale_runs)
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(results, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
