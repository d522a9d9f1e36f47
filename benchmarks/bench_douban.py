"""Douban scoring at the test set's size: 10,000 lines (1,000 contexts x 10) and a score file, target < 0.5 s.

A Douban-like data file is generated (word-segmented Chinese-like text, five utterances per context, about
the released test file's size: 3 MB; 0, 1, several or 10 positives per context) with a line score file
(scores rounded to 2 decimals: ties). Each phase runs in a fresh process, interleaved ``--repeat`` times:

* ``cli``: ``dialeval score scores.txt --benchmark douban --data test.txt --json`` end to end (interpreter
  start-up, imports, both files read and checked, sha256, the metrics under the tie policy, the JSON report):
  the goal is this under 0.5 s;
* ``floor``: the same interpreter importing what any scorer of this CLI needs (click, numpy, dialeval.cli),
  then reading both files and parsing every label and score in plain Python: the baseline of the same run;
* ``score``: ``dialeval.api.score`` alone in the process (after imports), its peak RSS against 3x the
  input + 200 MB.

    python3 benchmarks/bench_douban.py [--lines 10000] [--repeat 5] [--ties input-order]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR = r"""
import sys, time
t = time.perf_counter()
import click, numpy, dialeval.cli  # noqa: F401
labels = [ln.split(b"\t", 1)[0] == b"1" for ln in open(sys.argv[1], "rb")]
scores = [float(ln) for ln in open(sys.argv[2], "rb")]
assert len(labels) == len(scores)
print(time.perf_counter() - t)
"""

SCORE = r"""
import json, sys, time
from dialeval import api
import dialeval.benchmarks.douban, dialeval.metrics.selection, dialeval.formats.douban  # noqa: F401
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
t = time.perf_counter()
r = api.score(sys.argv[2], benchmark="douban", data=sys.argv[1], ties=sys.argv[3])
dt = time.perf_counter() - t
assert r.valid
print(json.dumps({"seconds": dt, "peak_kib": status("VmHWM:"), "map": r.value("map")}))
"""


def make(folder: Path, lines: int, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    words = ["".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(rng.randint(1, 3))) for _ in range(5000)]

    def utterance(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    data, scores = [], []
    for _ in range(lines // 10):
        context = "\t".join(utterance(rng.randint(4, 12)) for _ in range(5))
        positives = rng.choice([0, 1, 1, 1, 2, 3, 10])
        labels = [1] * positives + [0] * (10 - positives)
        rng.shuffle(labels)
        for lab in labels:
            data.append(f"{lab}\t{context}\t{utterance(rng.randint(3, 12))}\n")
            scores.append(f"{round(rng.random(), 2)}\n")
    (folder / "test.txt").write_text("".join(data), encoding="utf-8")
    (folder / "scores.txt").write_text("".join(scores))
    return folder / "test.txt", folder / "scores.txt"


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ties", default="input-order")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        data, scores = make(Path(d), a.lines)
        size = data.stat().st_size + scores.stat().st_size
        cli = [sys.executable, "-m", "dialeval", "score", str(scores), "--benchmark", "douban", "--data", str(data),
               "--ties", a.ties, "--json"]
        runs: dict[str, list[float]] = {"cli": [], "floor": [], "score": []}
        peaks = []
        for _ in range(a.repeat):
            runs["cli"].append(timed(cli))
            runs["floor"].append(timed([sys.executable, "-c", FLOOR, str(data), str(scores)]))
            out = subprocess.run([sys.executable, "-c", SCORE, str(data), str(scores), a.ties], check=True,
                                 capture_output=True, text=True)
            res = json.loads(out.stdout.strip().splitlines()[-1])
            runs["score"].append(res["seconds"])
            peaks.append(res["peak_kib"] * 1024)
    med = {k: statistics.median(v) for k, v in runs.items()}
    bound = 3 * size + 200 * 2**20
    print(f"douban: {a.lines:,} lines ({size / 2**20:.1f} MB with the score file), ties {a.ties}, {a.repeat} runs")
    print(f"  dialeval score (CLI, end to end)   median {med['cli']:.3f} s  best {min(runs['cli']):.3f} s  "
          f"(goal < 0.5 s: {'met' if med['cli'] < 0.5 else 'NOT met'})")
    print(f"  floor (imports + read both files)  median {med['floor']:.3f} s  best {min(runs['floor']):.3f} s")
    print(f"  api.score in process               median {med['score']:.3f} s")
    print(f"  ratio CLI / floor                  {med['cli'] / med['floor']:.2f}x")
    print(f"  peak RSS (api.score process)       {max(peaks) / 2**20:.0f} MB  (bound 3x input + 200 MB = "
          f"{bound / 2**20:.0f} MB)")


if __name__ == "__main__":
    main()
