"""Benchmark AirDialogue scoring (not a test). Run from the repository root:

    python3 benchmarks/bench_airdialogue.py              # 40,000 items (the dev split's size), 3 runs each
    python3 benchmarks/bench_airdialogue.py --n 5000     # quicker

A simulated split of N items × 30-flight KBs with dialogues (``simulator/airdialogue.py``) and the ``random``
baseline's submission (nearly every item needs the flight distance: the worst case) are written to a temp
folder. Measured, each in a fresh child process (median wall time, peak RSS from ``getrusage`` of a wrapper
that runs exactly one command):

* ``dialeval score SUB --benchmark airdialogue --data DIR --split dev`` (and the legacy distance through the
  Python API);
* the baseline: a bare ``python -c`` that ``json.loads`` every line of both files (the data and the KB file),
  keeping nothing; and the same keeping every object (the memory a dict-based reader needs).

Printed: wall-time ratio score / bare json.loads (target <= 3x) and the RSS ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter(); rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "dt = time.perf_counter() - t\n"
    "print(rc, dt, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
LOADS = (
    "import json, sys\n"
    "keep = sys.argv[1] == 'keep'\n"
    "out = []\n"
    "for p in sys.argv[2:]:\n"
    "    with open(p, 'rb') as f:\n"
    "        for line in f:\n"
    "            o = json.loads(line)\n"
    "            if keep: out.append(o)\n"
)


API = ("from dialeval.api import evaluate; "
       "evaluate({sub!r}, benchmark='airdialogue', data={data!r}, split='dev', options={{'flight_distance': 'legacy'}})")


def measure(cmd: list[str]) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIALEVAL_")}
    out = subprocess.run([sys.executable, "-c", WRAPPER, *cmd], capture_output=True, text=True, env=env, check=True)
    rc, dt, rss = out.stdout.split()
    if int(rc) != 0:
        raise SystemExit(f"command failed ({rc}): {' '.join(cmd)}")
    return float(dt), int(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    from dialeval.baselines.airdialogue import write_submission
    from dialeval.simulator.airdialogue import write_airdialogue

    with tempfile.TemporaryDirectory(prefix="bench-airdialogue-") as tmp:
        d = Path(tmp)
        data, kb = write_airdialogue(d, seed=args.seed, n=args.n, split="dev")
        sub = write_submission("random", d, "dev", d / "random.jsonl", seed=args.seed)
        mb = (data.stat().st_size + kb.stat().st_size) / 1e6
        print(f"split: {args.n} items x 30 flights; data+kb {mb:.0f} MB; submission "
              f"{sub.stat().st_size / 1e6:.1f} MB; median of {args.runs} runs")
        py = sys.executable
        score = [py, "-c", "from dialeval.cli import run; run()", "score", str(sub), "--benchmark", "airdialogue",
                 "--data", str(d), "--split", "dev"]
        rows = [
            ("json.loads, both files (kept nothing)", [py, "-c", LOADS, "drop", str(data), str(kb)]),
            ("json.loads, both files (kept all)", [py, "-c", LOADS, "keep", str(data), str(kb)]),
            ("dialeval score (current distance)", score),
            ("api evaluate, legacy distance", [py, "-c", API.format(sub=str(sub), data=str(d))]),
        ]
        # Runs are interleaved (baseline, score, baseline, ...) so a busy machine slows both alike.
        samples: dict[str, list[tuple[float, int]]] = {label: [] for label, _ in rows}
        for _ in range(args.runs):
            for label, cmd in rows:
                samples[label].append(measure(cmd))
        results = {label: (statistics.median(t for t, _ in v), max(r for _, r in v)) for label, v in samples.items()}
        base_t, base_rss = results["json.loads, both files (kept nothing)"]
        keep_rss = results["json.loads, both files (kept all)"][1]
        print(f"{'command':44s} {'wall s':>8s} {'peak RSS MiB':>13s} {'t / loads':>10s} {'RSS / loads':>12s} "
              f"{'RSS / kept':>11s}")
        for label, (t, rss) in results.items():
            print(f"{label:44s} {t:8.2f} {rss / 1024:13.0f} {t / base_t:9.2f}x {rss / base_rss:11.2f}x "
                  f"{rss / keep_rss:10.2f}x")
        t, _ = results.get("dialeval score (current distance)", (float("nan"), 0))
        print(f"\nwall-time ratio dialeval score / bare json.loads: {t / base_t:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
